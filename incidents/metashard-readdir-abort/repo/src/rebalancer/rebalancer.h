// Background rebalancer: splits ranges that exceed the size threshold and
// spreads leaseholders over the nodes.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "meta/range_directory.h"
#include "rebalancer/split_planner.h"
#include "store/meta_node.h"

namespace metashard {

struct RebalancerOptions {
  uint64_t max_range_bytes = 64 << 10;
  size_t split_samples = 32;
  size_t max_splits_per_pass = 4;
};

class Rebalancer {
 public:
  Rebalancer(RangeDirectory* directory, std::map<NodeId, MetaNode*> nodes,
             RebalancerOptions options);

  // One pass over all ranges. Returns the number of splits performed.
  int RunOnce();

 private:
  bool MaybeSplit(const RangeDescriptor& desc);
  void BalanceLeases();

  RangeDirectory* directory_;
  std::map<NodeId, MetaNode*> nodes_;
  RebalancerOptions options_;
  SplitPlanner planner_;
  uint64_t passes_ = 0;
};

}  // namespace metashard
