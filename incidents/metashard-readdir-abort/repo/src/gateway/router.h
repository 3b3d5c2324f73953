// Range cache used by gateways to find the leaseholder for a key.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "meta/range_directory.h"

namespace metashard {

class Router {
 public:
  explicit Router(const RangeDirectory* directory) : directory_(directory) {}

  std::optional<RangeDescriptor> Resolve(const Key& key);
  // Descriptors overlapping [from, to), in key order (to empty = unbounded).
  std::vector<RangeDescriptor> Overlapping(const Key& from, const Key& to);
  void Invalidate(RangeId id);

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  void RefreshLocked();

  const RangeDirectory* directory_;
  std::mutex mu_;
  std::map<Key, RangeDescriptor> cache_;  // by start key
  uint64_t cached_version_ = 0;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace metashard
