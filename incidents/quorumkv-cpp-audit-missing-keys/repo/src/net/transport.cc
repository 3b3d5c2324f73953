#include "net/transport.h"

#include <memory>
#include <thread>
#include <utility>

#include "base/logging.h"

namespace qkv {
namespace net {

void Transport::Register(const NodeId& node, ReplicaService* service) {
  std::lock_guard<std::mutex> lock(mu_);
  services_[node] = service;
  LOG(INFO) << "transport: registered " << node;
}

void Transport::Unregister(const NodeId& node) {
  std::lock_guard<std::mutex> lock(mu_);
  services_.erase(node);
}

ReplicaService* Transport::Lookup(const NodeId& node, std::chrono::milliseconds* delay,
                                  bool* reachable) {
  std::lock_guard<std::mutex> lock(mu_);
  auto d = delays_.find(node);
  *delay = d == delays_.end() ? std::chrono::milliseconds(0) : d->second;
  *reachable = partitioned_.count(node) == 0;
  auto it = services_.find(node);
  return it == services_.end() ? nullptr : it->second;
}

namespace {

// Runs `handler` on a detached thread after `delay`, like a reply arriving over
// the network. Unreachable peers never answer; the caller's deadline decides.
template <typename Response, typename Handler>
std::future<Response> Deliver(const NodeId& to, std::chrono::milliseconds delay, bool reachable,
                              Handler handler) {
  auto promise = std::make_shared<std::promise<Response>>();
  std::future<Response> future = promise->get_future();
  std::thread([promise, to, delay, reachable, handler = std::move(handler)]() mutable {
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    if (!reachable) {
      std::this_thread::sleep_for(std::chrono::seconds(30));
      Response resp;
      resp.replica = to;
      resp.status = Status::Unavailable("connection to " + to + " lost");
      promise->set_value(std::move(resp));
      return;
    }
    promise->set_value(handler());
  }).detach();
  return future;
}

}  // namespace

std::future<PutResponse> Transport::Put(const NodeId& to, PutRequest req) {
  std::chrono::milliseconds delay;
  bool reachable;
  ReplicaService* svc = Lookup(to, &delay, &reachable);
  if (svc == nullptr) reachable = false;
  return Deliver<PutResponse>(to, delay, reachable,
                              [svc, req = std::move(req)]() { return svc->HandlePut(req); });
}

std::future<GetResponse> Transport::Get(const NodeId& to, GetRequest req) {
  std::chrono::milliseconds delay;
  bool reachable;
  ReplicaService* svc = Lookup(to, &delay, &reachable);
  if (svc == nullptr) reachable = false;
  return Deliver<GetResponse>(to, delay, reachable,
                              [svc, req = std::move(req)]() { return svc->HandleGet(req); });
}

bool Transport::IsPartitioned(const NodeId& node) {
  std::lock_guard<std::mutex> lock(mu_);
  return partitioned_.count(node) > 0;
}

void Transport::SetDelay(const NodeId& node, std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> lock(mu_);
  delays_[node] = delay;
}

void Transport::Partition(const NodeId& node) {
  std::lock_guard<std::mutex> lock(mu_);
  partitioned_.insert(node);
  LOG(WARNING) << "transport: " << node << " partitioned";
}

void Transport::Heal(const NodeId& node) {
  std::lock_guard<std::mutex> lock(mu_);
  partitioned_.erase(node);
  LOG(INFO) << "transport: " << node << " healed";
}

}  // namespace net
}  // namespace qkv
