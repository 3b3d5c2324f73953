#include "replica/replica_server.h"

#include <utility>

#include "base/logging.h"

namespace qkv {
namespace replica {

ReplicaServer::ReplicaServer(net::NodeId id, storage::Engine* engine)
    : id_(std::move(id)), engine_(engine) {}

net::PutResponse ReplicaServer::HandlePut(const net::PutRequest& req) {
  ++puts_;
  net::PutResponse resp;
  resp.replica = id_;
  if (req.tombstone) {
    resp.status = engine_->Delete(req.key, req.version);
    resp.applied = resp.status.ok();
  } else {
    resp.status = engine_->Put(req.key, req.value, req.version, &resp.applied);
  }
  auto current = engine_->Get(req.key);
  resp.version = current ? current->version : 0;
  if (!resp.status.ok()) {
    ++rejected_puts_;
    LOG(WARNING) << "rejecting put key=" << req.key << " v" << req.version << " from "
                 << req.coordinator << " (req " << req.request_id << "): " << resp.status;
  } else {
    VLOG(2) << "put key=" << req.key << " v" << req.version << " applied=" << resp.applied;
  }
  return resp;
}

net::GetResponse ReplicaServer::HandleGet(const net::GetRequest& req) {
  ++gets_;
  net::GetResponse resp;
  resp.replica = id_;
  auto current = engine_->Get(req.key);
  if (!current) {
    resp.found = false;
    return resp;
  }
  resp.found = true;
  resp.value = current->value;
  resp.version = current->version;
  resp.tombstone = current->tombstone;
  return resp;
}

void ReplicaServer::LogStats() const {
  LOG(INFO) << "replica " << id_ << ": puts=" << puts_.load() << " rejected="
            << rejected_puts_.load() << " gets=" << gets_.load() << " keys="
            << engine_->num_keys() << " usage=" << static_cast<int>(engine_->usage_ratio() * 1000) / 10.0
            << "%";
}

}  // namespace replica
}  // namespace qkv
