// Session-guarantee checker: a client that verifies read-your-writes and
// monotonic reads against a quorumkv cluster.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "coordinator/kv_node.h"

namespace qkv {
namespace tools {

struct CheckerStats {
  uint64_t writes = 0;
  uint64_t failed_writes = 0;
  uint64_t reads = 0;
  uint64_t failed_reads = 0;
  uint64_t violations = 0;
};

class SessionChecker {
 public:
  SessionChecker(std::string session, std::vector<KvNode*> coordinators, int num_keys,
                 uint32_t seed);

  // One step: write a key through one coordinator, then read it back through
  // another one.
  void Step();
  // Re-reads every key this session wrote and reports any that went backwards.
  void Audit();
  const CheckerStats& stats() const { return stats_; }
  void LogSummary() const;

 private:
  KvNode* Pick();

  std::string session_;
  std::vector<KvNode*> coordinators_;
  int num_keys_;
  std::mt19937 rng_;
  std::map<std::string, uint64_t> last_written_;
  std::map<std::string, uint64_t> last_read_;
  CheckerStats stats_;
  uint64_t step_ = 0;
};

}  // namespace tools
}  // namespace qkv
