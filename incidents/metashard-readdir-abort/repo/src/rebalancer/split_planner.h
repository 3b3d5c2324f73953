// Chooses split points for ranges that grew too large and builds the
// descriptors of the two halves.
#pragma once

#include <optional>
#include <vector>

#include "common/keys.h"

namespace metashard {

struct SplitPlan {
  Key split_key;
  RangeDescriptor left;
  RangeDescriptor right;
};

class SplitPlanner {
 public:
  // `samples` are keys of the range in ascending order.
  std::optional<Key> ChooseSplitKey(const RangeDescriptor& range,
                                    const std::vector<Key>& samples) const;

  SplitPlan Build(const RangeDescriptor& parent, const Key& split_key, RangeId new_id) const;
};

}  // namespace metashard
