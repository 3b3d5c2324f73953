// A quorumkv node: one replica plus the coordinator that serves clients.
#pragma once

#include <memory>
#include <string>

#include "coordinator/quorum.h"
#include "coordinator/ring.h"
#include "net/transport.h"
#include "replica/replica_server.h"
#include "storage/engine.h"

namespace qkv {

class KvNode {
 public:
  KvNode(net::NodeId id, net::Transport* transport, coordinator::Ring* ring,
         storage::EngineOptions engine_options, coordinator::QuorumOptions quorum_options);
  ~KvNode();

  Status Start();
  void Stop();

  // Client API.
  Status Put(const std::string& key, const std::string& value, uint64_t* version);
  Status Get(const std::string& key, std::string* value, uint64_t* version, bool* found);
  Status Delete(const std::string& key);

  // False while the node is cut off from its peers; clients go elsewhere.
  bool serving() const { return transport_ != nullptr && !transport_->IsPartitioned(id_); }
  const net::NodeId& id() const { return id_; }
  storage::Engine* engine() { return engine_.get(); }
  replica::ReplicaServer* replica() { return replica_.get(); }

 private:
  net::NodeId id_;
  net::Transport* transport_;
  coordinator::Ring* ring_;
  std::unique_ptr<storage::Engine> engine_;
  std::unique_ptr<replica::ReplicaServer> replica_;
  coordinator::VersionClock clock_;
  std::unique_ptr<coordinator::QuorumWriter> writer_;
  std::unique_ptr<coordinator::QuorumReader> reader_;
};

}  // namespace qkv
