#include "storage/engine.h"

#include <sstream>
#include <utility>

#include "base/logging.h"

namespace qkv {
namespace storage {

Engine::Engine(EngineOptions options) : options_(std::move(options)) {}

Status Engine::Open() {
  LOG(INFO) << "opening engine at " << options_.data_dir << " capacity="
            << (options_.capacity_bytes >> 20) << "MiB high_watermark="
            << options_.high_watermark;
  return Status::OK();
}

Status Engine::AppendToWal(const std::string& key, uint64_t version, size_t bytes) {
  // Record header (24 bytes) + key + payload.
  wal_bytes_ += 24 + key.size() + bytes;
  ++wal_records_;
  if (wal_records_ % 100000 == 0) {
    LOG(INFO) << "wal: " << wal_records_ << " records, " << (wal_bytes_ >> 20) << "MiB";
  }
  return Status::OK();
}

Status Engine::Put(const std::string& key, const std::string& value, uint64_t version,
                   bool* applied) {
  std::lock_guard<std::mutex> lock(mu_);
  *applied = false;
  auto it = table_.find(key);
  if (it != table_.end() && it->second.version >= version) {
    VLOG(1) << "put " << key << " v" << version << " superseded by v" << it->second.version;
    return Status::OK();
  }
  uint64_t used = live_bytes_ + wal_bytes_ + external_bytes_;
  double ratio = static_cast<double>(used) / static_cast<double>(options_.capacity_bytes);
  if (ratio >= options_.high_watermark) {
    std::ostringstream msg;
    msg << options_.data_dir << " at " << static_cast<int>(ratio * 1000) / 10.0
        << "% of capacity (high watermark " << options_.high_watermark * 100 << "%)";
    return Status::ResourceExhausted(msg.str());
  }
  Status s = AppendToWal(key, version, value.size());
  if (!s.ok()) return s;
  if (it != table_.end()) {
    live_bytes_ -= it->second.value.size();
    it->second = VersionedValue{value, version, false};
  } else {
    table_.emplace(key, VersionedValue{value, version, false});
  }
  live_bytes_ += value.size();
  *applied = true;
  return Status::OK();
}

Status Engine::Delete(const std::string& key, uint64_t version) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = table_.find(key);
  if (it == table_.end()) {
    table_.emplace(key, VersionedValue{"", version, true});
    return Status::OK();
  }
  if (it->second.version >= version) return Status::OK();
  live_bytes_ -= it->second.value.size();
  it->second = VersionedValue{"", version, true};
  return AppendToWal(key, version, 0);
}

std::optional<VersionedValue> Engine::Get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = table_.find(key);
  if (it == table_.end()) return std::nullopt;
  return it->second;
}

uint64_t Engine::used_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_bytes_ + wal_bytes_ + external_bytes_;
}

double Engine::usage_ratio() const {
  return static_cast<double>(used_bytes()) / static_cast<double>(options_.capacity_bytes);
}

size_t Engine::num_keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_.size();
}

void Engine::SetExternalUsage(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  external_bytes_ = bytes;
}

}  // namespace storage
}  // namespace qkv
