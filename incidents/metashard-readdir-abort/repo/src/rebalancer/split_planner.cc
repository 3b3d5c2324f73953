#include "rebalancer/split_planner.h"

#include "metashard/logging.h"

namespace metashard {

std::optional<Key> SplitPlanner::ChooseSplitKey(const RangeDescriptor& range,
                                                const std::vector<Key>& samples) const {
  if (samples.size() < 2) return std::nullopt;
  // Prefer the median sample, but never split at the very first key of the
  // range: that would produce an empty left half.
  size_t mid = samples.size() / 2;
  while (mid < samples.size() && samples[mid] <= range.start) ++mid;
  if (mid == samples.size()) return std::nullopt;
  const Key& candidate = samples[mid];
  if (!range.Contains(candidate)) {
    LOG(WARNING) << "sample " << PrettyKey(candidate) << " outside " << range
                 << ", skipping split";
    return std::nullopt;
  }
  return candidate;
}

SplitPlan SplitPlanner::Build(const RangeDescriptor& parent, const Key& split_key,
                              RangeId new_id) const {
  SplitPlan plan;
  plan.split_key = split_key;

  plan.left = parent;
  plan.left.end = split_key;
  plan.left.generation = parent.generation + 1;

  plan.right = parent;
  plan.right.id = new_id;
  plan.right.start = NextKey(split_key);
  plan.right.end = parent.end;
  plan.right.generation = 1;
  return plan;
}

}  // namespace metashard
