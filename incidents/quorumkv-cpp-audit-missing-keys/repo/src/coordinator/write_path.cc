#include <algorithm>
#include <chrono>
#include <future>
#include <utility>

#include "base/logging.h"
#include "coordinator/quorum.h"

namespace qkv {
namespace coordinator {

uint64_t VersionClock::Next() {
  auto now = std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t candidate = static_cast<uint64_t>(now) << 4;
  last_ = std::max(last_ + 1, candidate);
  return last_;
}

void VersionClock::Observe(uint64_t version) {
  std::lock_guard<std::mutex> lock(mu_);
  last_ = std::max(last_, version);
}

QuorumWriter::QuorumWriter(net::NodeId self, const Ring* ring, net::Transport* transport,
                           VersionClock* clock, QuorumOptions options)
    : self_(std::move(self)),
      ring_(ring),
      transport_(transport),
      clock_(clock),
      options_(options) {
  CHECK_LE(options_.write_quorum, options_.replication_factor);
}

Status QuorumWriter::Put(const std::string& key, const std::string& value, WriteResult* result) {
  return Replicate(key, value, /*tombstone=*/false, result);
}

Status QuorumWriter::Delete(const std::string& key, WriteResult* result) {
  return Replicate(key, "", /*tombstone=*/true, result);
}

namespace {

struct InFlightPut {
  net::NodeId replica;
  std::future<net::PutResponse> response;
};

}  // namespace

Status QuorumWriter::Replicate(const std::string& key, const std::string& value, bool tombstone,
                               WriteResult* result) {
  std::vector<net::NodeId> replicas = ring_->PreferenceList(key, options_.replication_factor);
  if (replicas.size() < options_.write_quorum) {
    return Status::Unavailable("only " + std::to_string(replicas.size()) +
                               " replicas in ring for write quorum " +
                               std::to_string(options_.write_quorum));
  }
  const uint64_t version = clock_->Next();
  const uint64_t request_id = next_request_id_++;

  std::vector<InFlightPut> inflight;
  inflight.reserve(replicas.size());
  for (const auto& replica : replicas) {
    net::PutRequest req;
    req.key = key;
    req.value = value;
    req.version = version;
    req.tombstone = tombstone;
    req.coordinator = self_;
    req.request_id = request_id;
    inflight.push_back({replica, transport_->Put(replica, std::move(req))});
  }

  const auto deadline = std::chrono::steady_clock::now() + options_.write_timeout;
  size_t acks = 0;
  size_t timeouts = 0;
  for (auto& call : inflight) {
    if (call.response.wait_until(deadline) != std::future_status::ready) {
      ++timeouts;
      LOG(WARNING) << "put key=" << key << " v" << version << " (req " << request_id
                   << "): no answer from " << call.replica << " within "
                   << options_.write_timeout.count() << "ms";
      continue;
    }
    net::PutResponse resp = call.response.get();
    clock_->Observe(resp.version);
    ++acks;
  }

  result->version = version;
  result->acks = acks;
  if (acks < options_.write_quorum) {
    LOG(ERROR) << "put key=" << key << " v" << version << " (req " << request_id
               << ") failed: " << acks << "/" << replicas.size() << " acks, need "
               << options_.write_quorum;
    return Status::Unavailable("write quorum not reached for " + key);
  }
  VLOG(1) << "put key=" << key << " v" << version << " committed with " << acks << " acks";
  if (timeouts > 0) {
    LOG(INFO) << "put key=" << key << " v" << version << " (req " << request_id
              << ") committed acks=" << acks << "/" << replicas.size() << " (w="
              << options_.write_quorum << "), hinted handoff not enabled";
  }
  return Status::OK();
}

}  // namespace coordinator
}  // namespace qkv
