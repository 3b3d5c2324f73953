// The range directory: authoritative list of range descriptors (the "meta
// range"). Routers cache from it; the rebalancer updates it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "common/keys.h"

namespace metashard {

class RangeDirectory {
 public:
  RangeDirectory();

  // The range containing `key`.
  std::optional<RangeDescriptor> Lookup(const Key& key) const;
  std::optional<RangeDescriptor> Get(RangeId id) const;
  std::vector<RangeDescriptor> All() const;

  RangeId AllocateId();
  // Replaces `parent` with `left` and `right`. Fails if `parent` changed since
  // it was read (generation mismatch).
  bool CommitSplit(const RangeDescriptor& parent, const RangeDescriptor& left,
                   const RangeDescriptor& right);
  bool UpdateReplicas(const RangeDescriptor& desc);
  uint64_t version() const;

 private:
  mutable std::mutex mu_;
  std::map<Key, RangeDescriptor> by_start_;
  RangeId next_id_ = 2;
  uint64_t version_ = 1;
};

}  // namespace metashard
