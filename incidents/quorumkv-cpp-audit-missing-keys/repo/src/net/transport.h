// In-process transport between quorumkv nodes. Each call runs on its own
// thread and returns a future, like an async RPC stub.
#pragma once

#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "net/messages.h"

namespace qkv {
namespace net {

class ReplicaService {
 public:
  virtual ~ReplicaService() = default;
  virtual PutResponse HandlePut(const PutRequest& req) = 0;
  virtual GetResponse HandleGet(const GetRequest& req) = 0;
};

class Transport {
 public:
  void Register(const NodeId& node, ReplicaService* service);
  void Unregister(const NodeId& node);

  std::future<PutResponse> Put(const NodeId& to, PutRequest req);
  std::future<GetResponse> Get(const NodeId& to, GetRequest req);

  // Fault injection for tests and chaos drills.
  void SetDelay(const NodeId& node, std::chrono::milliseconds delay);
  void Partition(const NodeId& node);
  void Heal(const NodeId& node);
  bool IsPartitioned(const NodeId& node);

 private:
  ReplicaService* Lookup(const NodeId& node, std::chrono::milliseconds* delay, bool* reachable);

  std::mutex mu_;
  std::map<NodeId, ReplicaService*> services_;
  std::map<NodeId, std::chrono::milliseconds> delays_;
  std::set<NodeId> partitioned_;
};

}  // namespace net
}  // namespace qkv
