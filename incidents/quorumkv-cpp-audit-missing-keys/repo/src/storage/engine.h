// Versioned key-value storage engine backing one replica.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"

namespace qkv {
namespace storage {

struct VersionedValue {
  std::string value;
  uint64_t version = 0;
  bool tombstone = false;
};

struct EngineOptions {
  std::string data_dir = "/var/lib/qkv";
  uint64_t capacity_bytes = 64ull << 30;
  // Writes are refused once usage crosses this fraction of capacity, leaving
  // room for compaction.
  double high_watermark = 0.95;
  bool sync_wal = true;
};

class Engine {
 public:
  explicit Engine(EngineOptions options);

  Status Open();

  // Stores `value` at `version` unless a newer version is already present, in
  // which case the write is a no-op and `*applied` is false.
  Status Put(const std::string& key, const std::string& value, uint64_t version, bool* applied);
  Status Delete(const std::string& key, uint64_t version);
  std::optional<VersionedValue> Get(const std::string& key) const;

  uint64_t used_bytes() const;
  double usage_ratio() const;
  size_t num_keys() const;

  // Test and ops hook: pretend the data volume holds this many extra bytes.
  void SetExternalUsage(uint64_t bytes);

 private:
  Status AppendToWal(const std::string& key, uint64_t version, size_t bytes);

  EngineOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, VersionedValue> table_;
  uint64_t live_bytes_ = 0;
  uint64_t wal_bytes_ = 0;
  uint64_t external_bytes_ = 0;
  uint64_t wal_records_ = 0;
};

}  // namespace storage
}  // namespace qkv
