#include "meta/range_directory.h"

#include "metashard/logging.h"

namespace metashard {

RangeDirectory::RangeDirectory() {
  RangeDescriptor root;
  root.id = 1;
  root.generation = 1;
  by_start_.emplace(root.start, root);
}

std::optional<RangeDescriptor> RangeDirectory::Lookup(const Key& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_start_.upper_bound(key);
  if (it == by_start_.begin()) return std::nullopt;
  --it;
  if (!it->second.Contains(key)) return std::nullopt;
  return it->second;
}

std::optional<RangeDescriptor> RangeDirectory::Get(RangeId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& kv : by_start_) {
    if (kv.second.id == id) return kv.second;
  }
  return std::nullopt;
}

std::vector<RangeDescriptor> RangeDirectory::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RangeDescriptor> out;
  for (const auto& kv : by_start_) out.push_back(kv.second);
  return out;
}

RangeId RangeDirectory::AllocateId() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_id_++;
}

bool RangeDirectory::CommitSplit(const RangeDescriptor& parent, const RangeDescriptor& left,
                                 const RangeDescriptor& right) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_start_.find(parent.start);
  if (it == by_start_.end() || it->second.id != parent.id ||
      it->second.generation != parent.generation) {
    LOG(WARNING) << "split of r" << parent.id << " lost a race: directory has "
                 << (it == by_start_.end() ? std::string("nothing") : "gen " +
                     std::to_string(it->second.generation));
    return false;
  }
  it->second = left;
  by_start_[right.start] = right;
  ++version_;
  return true;
}

bool RangeDirectory::UpdateReplicas(const RangeDescriptor& desc) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_start_.find(desc.start);
  if (it == by_start_.end() || it->second.id != desc.id) return false;
  it->second.replicas = desc.replicas;
  it->second.leaseholder = desc.leaseholder;
  ++it->second.generation;
  ++version_;
  return true;
}

uint64_t RangeDirectory::version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return version_;
}

}  // namespace metashard
