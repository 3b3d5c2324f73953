// metad: runs a metadata cell (nodes, rebalancer, gateway workers) in one
// process. Requests are read from stdin, one per line:
//   mkdir <path> | create <path> <size> | stat <path> | readdir <path>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gateway/gateway.h"
#include "metashard/logging.h"
#include "rebalancer/rebalancer.h"

namespace metashard {
namespace {

struct Flags {
  int nodes = 3;
  int workers = 4;
  int rebalance_interval_ms = 1000;
  uint64_t max_range_bytes = 64 << 10;
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto eq = a.find('=');
    std::string name = a.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (name == "--nodes") f.nodes = std::stoi(value);
    else if (name == "--workers") f.workers = std::stoi(value);
    else if (name == "--rebalance_interval_ms") f.rebalance_interval_ms = std::stoi(value);
    else if (name == "--max_range_bytes") f.max_range_bytes = std::stoull(value);
    else if (name == "--v") log_internal::Verbosity() = std::stoi(value);
    else LOG(WARNING) << "unknown flag " << a;
  }
  return f;
}

class RequestQueue {
 public:
  void Push(std::string line) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(std::move(line));
    cv_.notify_one();
  }
  bool Pop(std::string* line) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return closed_ || !lines_.empty(); });
    if (lines_.empty()) return false;
    *line = std::move(lines_.front());
    lines_.pop_front();
    return true;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> lines_;
  bool closed_ = false;
};

void Serve(Gateway* gateway, RequestQueue* queue, std::atomic<uint64_t>* served) {
  std::string line;
  while (queue->Pop(&line)) {
    std::istringstream in(line);
    std::string op, path;
    in >> op >> path;
    OpStatus s = OpStatus::kOk;
    if (op == "mkdir") {
      s = gateway->Mkdir(path);
    } else if (op == "create") {
      uint64_t size = 0;
      in >> size;
      s = gateway->Create(path, size);
    } else if (op == "stat") {
      Inode inode;
      s = gateway->Stat(path, &inode);
    } else if (op == "readdir") {
      std::vector<DirEntry> entries;
      s = gateway->ReadDir(path, &entries);
      if (s == OpStatus::kOk) VLOG(1) << "readdir " << path << " -> " << entries.size();
    } else {
      LOG(WARNING) << "bad request: " << line;
      continue;
    }
    if (s != OpStatus::kOk && s != OpStatus::kExists) {
      LOG(WARNING) << op << " " << path << " failed: " << OpStatusName(s);
    }
    if (++*served % 5000 == 0) LOG(INFO) << "served " << served->load() << " requests";
  }
}

}  // namespace
}  // namespace metashard

int main(int argc, char** argv) {
  using namespace metashard;
  Flags flags = ParseFlags(argc, argv);

  RangeDirectory directory;
  std::vector<std::unique_ptr<MetaNode>> owned;
  std::map<NodeId, MetaNode*> nodes;
  RangeDescriptor root = *directory.Get(1);
  for (int i = 1; i <= flags.nodes; ++i) {
    owned.push_back(std::make_unique<MetaNode>(i));
    nodes[i] = owned.back().get();
    root.replicas.push_back(i);
  }
  root.leaseholder = 1;
  directory.UpdateReplicas(root);
  root = *directory.Get(1);
  for (auto& kv : nodes) kv.second->AddReplica(std::make_unique<RangeReplica>(root));
  LOG(INFO) << "metad: " << flags.nodes << " nodes, root range " << root;

  Router router(&directory);
  Gateway gateway(&router, nodes);
  Inode root_dir;
  root_dir.is_dir = true;
  root_dir.ino = 1;
  for (auto& kv : nodes) kv.second->Put(1, "/", root_dir);

  RebalancerOptions ropts;
  ropts.max_range_bytes = flags.max_range_bytes;
  Rebalancer rebalancer(&directory, nodes, ropts);
  std::atomic<bool> stop{false};
  std::thread rebalance_thread([&] {
    while (!stop.load()) {
      rebalancer.RunOnce();
      std::this_thread::sleep_for(std::chrono::milliseconds(flags.rebalance_interval_ms));
    }
  });

  RequestQueue queue;
  std::atomic<uint64_t> served{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < flags.workers; ++i) {
    workers.emplace_back(Serve, &gateway, &queue, &served);
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty()) queue.Push(line);
  }
  queue.Close();
  for (auto& w : workers) w.join();
  stop = true;
  rebalance_thread.join();
  LOG(INFO) << "metad: served " << served.load() << " requests; router hits=" << router.hits()
            << " misses=" << router.misses();
  return 0;
}
