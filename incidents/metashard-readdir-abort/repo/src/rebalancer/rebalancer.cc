#include "rebalancer/rebalancer.h"

#include <algorithm>

#include "metashard/logging.h"

namespace metashard {

Rebalancer::Rebalancer(RangeDirectory* directory, std::map<NodeId, MetaNode*> nodes,
                       RebalancerOptions options)
    : directory_(directory), nodes_(std::move(nodes)), options_(options) {}

int Rebalancer::RunOnce() {
  ++passes_;
  int splits = 0;
  for (const RangeDescriptor& desc : directory_->All()) {
    if (splits >= static_cast<int>(options_.max_splits_per_pass)) break;
    if (MaybeSplit(desc)) ++splits;
  }
  BalanceLeases();
  if (splits > 0 || passes_ % 60 == 0) {
    LOG(INFO) << "rebalancer pass " << passes_ << ": " << splits << " split(s), "
              << directory_->All().size() << " ranges, directory v" << directory_->version();
  }
  return splits;
}

bool Rebalancer::MaybeSplit(const RangeDescriptor& desc) {
  auto holder = nodes_.find(desc.leaseholder);
  if (holder == nodes_.end()) return false;
  RangeReplica* replica = holder->second->Replica(desc.id);
  if (replica == nullptr) {
    LOG(WARNING) << "leaseholder n" << desc.leaseholder << " has no replica of " << desc;
    return false;
  }
  const uint64_t bytes = replica->bytes();
  if (bytes < options_.max_range_bytes) return false;

  std::vector<Key> samples = replica->SampleKeys(options_.split_samples);
  auto split_key = planner_.ChooseSplitKey(desc, samples);
  if (!split_key) {
    VLOG(1) << "no split point for " << desc;
    return false;
  }
  SplitPlan plan = planner_.Build(desc, *split_key, directory_->AllocateId());
  if (!directory_->CommitSplit(desc, plan.left, plan.right)) return false;

  for (NodeId node_id : desc.replicas) {
    MetaNode* node = nodes_.at(node_id);
    RangeReplica* local = node->Replica(desc.id);
    if (local == nullptr) continue;
    node->AddReplica(local->Split(plan.left, plan.right));
  }
  LOG(INFO) << "split " << desc << " (" << bytes << " bytes, " << replica->num_keys()
            << " keys left) at " << PrettyKey(plan.split_key) << " -> " << plan.left << " + "
            << plan.right;
  return true;
}

void Rebalancer::BalanceLeases() {
  std::map<NodeId, int> leases;
  for (const auto& kv : nodes_) leases[kv.first] = 0;
  std::vector<RangeDescriptor> all = directory_->All();
  for (const auto& d : all) ++leases[d.leaseholder];
  for (auto d : all) {
    auto most = std::max_element(leases.begin(), leases.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    if (d.leaseholder != most->first || most->second <= 1) continue;
    NodeId target = d.leaseholder;
    for (NodeId r : d.replicas) {
      if (leases[r] + 1 < leases[target]) target = r;
    }
    if (target == d.leaseholder) continue;
    --leases[d.leaseholder];
    ++leases[target];
    LOG(INFO) << "moving lease of r" << d.id << " n" << d.leaseholder << " -> n" << target;
    d.leaseholder = target;
    directory_->UpdateReplicas(d);
  }
}

}  // namespace metashard
