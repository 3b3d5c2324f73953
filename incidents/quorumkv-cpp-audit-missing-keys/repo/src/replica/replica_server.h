// Replica: serves puts and gets for the keys it holds.
#pragma once

#include <atomic>
#include <cstdint>

#include "net/transport.h"
#include "storage/engine.h"

namespace qkv {
namespace replica {

class ReplicaServer : public net::ReplicaService {
 public:
  ReplicaServer(net::NodeId id, storage::Engine* engine);

  net::PutResponse HandlePut(const net::PutRequest& req) override;
  net::GetResponse HandleGet(const net::GetRequest& req) override;

  const net::NodeId& id() const { return id_; }
  void LogStats() const;

 private:
  net::NodeId id_;
  storage::Engine* engine_;
  std::atomic<uint64_t> puts_{0};
  std::atomic<uint64_t> rejected_puts_{0};
  std::atomic<uint64_t> gets_{0};
};

}  // namespace replica
}  // namespace qkv
