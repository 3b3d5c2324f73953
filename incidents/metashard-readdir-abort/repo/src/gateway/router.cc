#include "gateway/router.h"

#include "metashard/logging.h"

namespace metashard {

void Router::RefreshLocked() {
  cache_.clear();
  for (const auto& d : directory_->All()) cache_[d.start] = d;
  cached_version_ = directory_->version();
  VLOG(1) << "router: refreshed " << cache_.size() << " descriptors at v" << cached_version_;
}

std::optional<RangeDescriptor> Router::Resolve(const Key& key) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (cached_version_ != directory_->version()) RefreshLocked();
    auto it = cache_.upper_bound(key);
    if (it != cache_.begin()) {
      --it;
      if (it->second.Contains(key)) {
        ++hits_;
        return it->second;
      }
    }
    ++misses_;
    RefreshLocked();
  }
  LOG(WARNING) << "router: no range covers " << PrettyKey(key) << " (directory v"
               << cached_version_ << ")";
  return std::nullopt;
}

std::vector<RangeDescriptor> Router::Overlapping(const Key& from, const Key& to) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cached_version_ != directory_->version()) RefreshLocked();
  std::vector<RangeDescriptor> out;
  for (const auto& kv : cache_) {
    const RangeDescriptor& d = kv.second;
    if (d.EndsBefore(from) || d.end == from) continue;
    if (!to.empty() && d.start >= to) break;
    out.push_back(d);
  }
  return out;
}

void Router::Invalidate(RangeId id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->second.id == id) {
      cache_.erase(it);
      cached_version_ = 0;
      return;
    }
  }
}

}  // namespace metashard
