// qkv_drill: starts an in-process quorumkv cluster and runs session checkers
// against it while operators inject faults (slow replicas, partitions, full
// disks). Used for release qualification.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/logging.h"
#include "coordinator/kv_node.h"
#include "tools/session_checker.h"

namespace {

struct DrillFlags {
  int nodes = 3;
  int keys = 200;
  int steps = 2000;
  int slow_node = -1;
  int slow_ms = 0;
  int full_node = -1;
  int verbose = 0;
  // Comma separated "step:action:node" entries, action one of
  // partition, heal, fill, drain.
  std::string fault_plan;
};

struct FaultStep {
  int step;
  std::string action;
  int node;
};

std::vector<FaultStep> ParsePlan(const std::string& plan) {
  std::vector<FaultStep> steps;
  std::stringstream ss(plan);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    size_t a = item.find(':');
    size_t b = item.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) {
      LOG(WARNING) << "bad fault plan entry '" << item << "'";
      continue;
    }
    steps.push_back({std::atoi(item.substr(0, a).c_str()), item.substr(a + 1, b - a - 1),
                     std::atoi(item.substr(b + 1).c_str())});
  }
  return steps;
}

DrillFlags ParseFlags(int argc, char** argv) {
  DrillFlags f;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      size_t len = std::strlen(name);
      if (arg.compare(0, len, name) == 0 && arg.size() > len && arg[len] == '=') {
        return argv[i] + len + 1;
      }
      return nullptr;
    };
    if (const char* v = value("--nodes")) f.nodes = std::atoi(v);
    else if (const char* v = value("--keys")) f.keys = std::atoi(v);
    else if (const char* v = value("--steps")) f.steps = std::atoi(v);
    else if (const char* v = value("--slow_node")) f.slow_node = std::atoi(v);
    else if (const char* v = value("--slow_ms")) f.slow_ms = std::atoi(v);
    else if (const char* v = value("--full_node")) f.full_node = std::atoi(v);
    else if (const char* v = value("--v")) f.verbose = std::atoi(v);
    else if (const char* v = value("--fault_plan")) f.fault_plan = v;
    else LOG(WARNING) << "ignoring unknown flag " << arg;
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  DrillFlags flags = ParseFlags(argc, argv);
  qkv::logging::VerboseLevel() = flags.verbose;

  qkv::net::Transport transport;
  qkv::coordinator::Ring ring;
  qkv::coordinator::QuorumOptions quorum;
  std::vector<std::unique_ptr<qkv::KvNode>> nodes;
  for (int i = 0; i < flags.nodes; ++i) {
    qkv::storage::EngineOptions engine;
    engine.data_dir = "/var/lib/qkv/n" + std::to_string(i + 1);
    engine.capacity_bytes = 1ull << 30;
    auto node = std::make_unique<qkv::KvNode>("qkv-" + std::to_string(i + 1), &transport, &ring,
                                              engine, quorum);
    if (!node->Start().ok()) return 1;
    nodes.push_back(std::move(node));
  }
  if (flags.slow_node >= 0 && flags.slow_node < flags.nodes) {
    transport.SetDelay(nodes[flags.slow_node]->id(), std::chrono::milliseconds(flags.slow_ms));
  }
  if (flags.full_node >= 0 && flags.full_node < flags.nodes) {
    nodes[flags.full_node]->engine()->SetExternalUsage(1020ull << 20);
  }

  std::vector<qkv::KvNode*> coordinators;
  for (auto& n : nodes) coordinators.push_back(n.get());
  qkv::tools::SessionChecker checker("drill-1", coordinators, flags.keys, 42);
  std::vector<FaultStep> plan = ParsePlan(flags.fault_plan);
  for (int i = 0; i < flags.steps; ++i) {
    for (const auto& fault : plan) {
      if (fault.step != i || fault.node < 0 || fault.node >= flags.nodes) continue;
      const auto& id = nodes[fault.node]->id();
      LOG(INFO) << "drill step " << i << ": " << fault.action << " " << id;
      if (fault.action == "partition") {
        transport.Partition(id);
      } else if (fault.action == "heal") {
        transport.Heal(id);
      } else if (fault.action == "fill") {
        nodes[fault.node]->engine()->SetExternalUsage(1000ull << 20);
      } else if (fault.action == "drain") {
        nodes[fault.node]->engine()->SetExternalUsage(0);
      }
    }
    checker.Step();
    if ((i + 1) % 500 == 0) {
      for (auto& n : nodes) n->replica()->LogStats();
    }
  }
  checker.Audit();
  checker.LogSummary();
  return checker.stats().violations == 0 ? 0 : 2;
}
