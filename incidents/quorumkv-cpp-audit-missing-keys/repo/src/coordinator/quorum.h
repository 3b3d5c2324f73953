// Quorum read and write paths run by every coordinator node.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "coordinator/ring.h"
#include "net/transport.h"

namespace qkv {
namespace coordinator {

struct QuorumOptions {
  size_t replication_factor = 3;
  size_t write_quorum = 2;
  size_t read_quorum = 2;
  std::chrono::milliseconds write_timeout{500};
  std::chrono::milliseconds read_timeout{300};
  bool read_repair = true;
};

struct WriteResult {
  uint64_t version = 0;
  size_t acks = 0;
};

struct ReadResult {
  bool found = false;
  std::string value;
  uint64_t version = 0;
};

// Hands out strictly increasing versions: physical microseconds with a logical
// tie-breaker, so versions from different coordinators interleave sensibly.
class VersionClock {
 public:
  uint64_t Next();
  void Observe(uint64_t version);

 private:
  std::mutex mu_;
  uint64_t last_ = 0;
};

class QuorumWriter {
 public:
  QuorumWriter(net::NodeId self, const Ring* ring, net::Transport* transport,
               VersionClock* clock, QuorumOptions options);

  Status Put(const std::string& key, const std::string& value, WriteResult* result);
  Status Delete(const std::string& key, WriteResult* result);

 private:
  Status Replicate(const std::string& key, const std::string& value, bool tombstone,
                   WriteResult* result);

  net::NodeId self_;
  const Ring* ring_;
  net::Transport* transport_;
  VersionClock* clock_;
  QuorumOptions options_;
  std::atomic<uint64_t> next_request_id_{1};
};

class QuorumReader {
 public:
  QuorumReader(net::NodeId self, const Ring* ring, net::Transport* transport,
               VersionClock* clock, QuorumOptions options);

  Status Get(const std::string& key, ReadResult* result);

 private:
  void Repair(const std::string& key, const net::GetResponse& newest,
              const std::vector<net::GetResponse>& responses);

  net::NodeId self_;
  const Ring* ring_;
  net::Transport* transport_;
  VersionClock* clock_;
  QuorumOptions options_;
  std::atomic<uint64_t> next_request_id_{1};
};

}  // namespace coordinator
}  // namespace qkv
