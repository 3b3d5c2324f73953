#include <chrono>
#include <future>
#include <utility>

#include "base/logging.h"
#include "coordinator/quorum.h"

namespace qkv {
namespace coordinator {

QuorumReader::QuorumReader(net::NodeId self, const Ring* ring, net::Transport* transport,
                           VersionClock* clock, QuorumOptions options)
    : self_(std::move(self)),
      ring_(ring),
      transport_(transport),
      clock_(clock),
      options_(options) {
  CHECK_LE(options_.read_quorum, options_.replication_factor);
}

Status QuorumReader::Get(const std::string& key, ReadResult* result) {
  std::vector<net::NodeId> replicas = ring_->PreferenceList(key, options_.replication_factor);
  if (replicas.size() < options_.read_quorum) {
    return Status::Unavailable("not enough replicas for read quorum");
  }
  const uint64_t request_id = next_request_id_++;
  std::vector<std::pair<net::NodeId, std::future<net::GetResponse>>> inflight;
  // Ask the first R replicas in preference order; the rest are only asked
  // if one of them does not answer in time.
  size_t asked = 0;
  for (; asked < options_.read_quorum; ++asked) {
    net::GetRequest req{key, self_, request_id};
    inflight.emplace_back(replicas[asked], transport_->Get(replicas[asked], req));
  }

  std::vector<net::GetResponse> responses;
  auto deadline = std::chrono::steady_clock::now() + options_.read_timeout;
  for (size_t i = 0; i < inflight.size(); ++i) {
    auto& call = inflight[i];
    if (call.second.wait_until(deadline) != std::future_status::ready) {
      LOG(WARNING) << "get key=" << key << " (req " << request_id << "): no answer from "
                   << call.first;
      if (asked < replicas.size()) {
        net::GetRequest req{key, self_, request_id};
        inflight.emplace_back(replicas[asked], transport_->Get(replicas[asked], req));
        ++asked;
        deadline = std::chrono::steady_clock::now() + options_.read_timeout;
      }
      continue;
    }
    net::GetResponse resp = call.second.get();
    if (!resp.status.ok()) {
      LOG(WARNING) << "get key=" << key << " from " << resp.replica << ": " << resp.status;
      continue;
    }
    responses.push_back(std::move(resp));
  }
  if (responses.size() < options_.read_quorum) {
    return Status::Unavailable("read quorum not reached for " + key);
  }

  const net::GetResponse* newest = nullptr;
  for (const auto& r : responses) {
    if (r.found && (newest == nullptr || r.version > newest->version)) newest = &r;
  }
  if (newest == nullptr || newest->tombstone) {
    result->found = false;
    return Status::OK();
  }
  clock_->Observe(newest->version);
  result->found = true;
  result->value = newest->value;
  result->version = newest->version;
  if (options_.read_repair) Repair(key, *newest, responses);
  return Status::OK();
}

void QuorumReader::Repair(const std::string& key, const net::GetResponse& newest,
                          const std::vector<net::GetResponse>& responses) {
  std::vector<std::future<net::PutResponse>> repairs;
  for (const auto& r : responses) {
    if (r.found && r.version >= newest.version) continue;
    net::PutRequest req;
    req.key = key;
    req.value = newest.value;
    req.version = newest.version;
    req.coordinator = self_;
    LOG(INFO) << "read repair key=" << key << " on " << r.replica << ": v" << r.version
              << " -> v" << newest.version;
    repairs.push_back(transport_->Put(r.replica, std::move(req)));
  }
  // Best effort: a repair that does not finish in time is retried by the next read.
  const auto deadline = std::chrono::steady_clock::now() + options_.read_timeout;
  for (auto& f : repairs) {
    if (f.wait_until(deadline) == std::future_status::ready) {
      net::PutResponse resp = f.get();
      LOG_IF(WARNING, !resp.status.ok())
          << "read repair key=" << key << " on " << resp.replica << " failed: " << resp.status;
    }
  }
}

}  // namespace coordinator
}  // namespace qkv
