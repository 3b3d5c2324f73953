#include "tools/session_checker.h"

#include <utility>

#include "base/logging.h"

namespace qkv {
namespace tools {

SessionChecker::SessionChecker(std::string session, std::vector<KvNode*> coordinators,
                               int num_keys, uint32_t seed)
    : session_(std::move(session)),
      coordinators_(std::move(coordinators)),
      num_keys_(num_keys),
      rng_(seed) {}

KvNode* SessionChecker::Pick() {
  std::vector<KvNode*> serving;
  for (KvNode* node : coordinators_) {
    if (node->serving()) serving.push_back(node);
  }
  if (serving.empty()) serving = coordinators_;
  std::uniform_int_distribution<size_t> dist(0, serving.size() - 1);
  return serving[dist(rng_)];
}

void SessionChecker::Step() {
  ++step_;
  std::uniform_int_distribution<int> key_dist(0, num_keys_ - 1);
  const std::string key = "acct:" + std::to_string(1000 + key_dist(rng_));
  const std::string value = session_ + "/" + std::to_string(step_);

  KvNode* writer = Pick();
  uint64_t written = 0;
  Status s = writer->Put(key, value, &written);
  ++stats_.writes;
  if (!s.ok()) {
    ++stats_.failed_writes;
    LOG(WARNING) << "[" << session_ << "] write " << key << " via " << writer->id()
                 << " failed: " << s;
    return;
  }
  last_written_[key] = written;

  KvNode* reader = Pick();
  std::string got;
  uint64_t version = 0;
  bool found = false;
  s = reader->Get(key, &got, &version, &found);
  ++stats_.reads;
  if (!s.ok()) {
    ++stats_.failed_reads;
    LOG(WARNING) << "[" << session_ << "] read " << key << " via " << reader->id()
                 << " failed: " << s;
    return;
  }
  if (!found || version < written) {
    ++stats_.violations;
    LOG(ERROR) << "[" << session_ << "] read-your-writes violated for " << key << ": wrote v"
               << written << " via " << writer->id() << ", read "
               << (found ? "v" + std::to_string(version) : std::string("nothing")) << " via "
               << reader->id();
  }
  auto prev = last_read_.find(key);
  if (found && prev != last_read_.end() && version < prev->second) {
    ++stats_.violations;
    LOG(ERROR) << "[" << session_ << "] monotonic read violated for " << key << ": saw v"
               << prev->second << " before, now v" << version;
  }
  if (found) last_read_[key] = std::max(version, last_read_[key]);
}

void SessionChecker::Audit() {
  uint64_t lost = 0;
  for (const auto& [key, written] : last_written_) {
    KvNode* reader = Pick();
    std::string got;
    uint64_t version = 0;
    bool found = false;
    Status s = reader->Get(key, &got, &version, &found);
    ++stats_.reads;
    if (!s.ok()) {
      ++stats_.failed_reads;
      LOG(WARNING) << "[" << session_ << "] audit read " << key << " failed: " << s;
      continue;
    }
    if (!found || version < written) {
      ++lost;
      ++stats_.violations;
      LOG(ERROR) << "[" << session_ << "] audit: " << key << " acknowledged at v" << written
                 << " but reads " << (found ? "v" + std::to_string(version) : std::string("nothing"))
                 << " via " << reader->id();
    }
  }
  LOG(INFO) << "[" << session_ << "] audit of " << last_written_.size() << " keys done, " << lost
            << " regressed";
}

void SessionChecker::LogSummary() const {
  LOG(INFO) << "[" << session_ << "] steps=" << step_ << " writes=" << stats_.writes
            << " failed_writes=" << stats_.failed_writes << " reads=" << stats_.reads
            << " failed_reads=" << stats_.failed_reads << " violations=" << stats_.violations;
}

}  // namespace tools
}  // namespace qkv
