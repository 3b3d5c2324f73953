#include "store/range_replica.h"

#include <algorithm>

#include "metashard/logging.h"

namespace metashard {

const char* OpStatusName(OpStatus s) {
  switch (s) {
    case OpStatus::kOk: return "OK";
    case OpStatus::kNotFound: return "NOT_FOUND";
    case OpStatus::kWrongRange: return "WRONG_RANGE";
    case OpStatus::kExists: return "EXISTS";
  }
  return "?";
}

namespace {
uint64_t InodeBytes(const Key& key, const Inode& inode) {
  uint64_t n = key.size() + 64;
  for (const auto& c : inode.children) n += c.size() + 8;
  return n;
}
}  // namespace

RangeDescriptor RangeReplica::descriptor() const {
  std::lock_guard<std::mutex> lock(mu_);
  return desc_;
}

OpStatus RangeReplica::Get(const Key& key, Inode* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!desc_.Contains(key)) return OpStatus::kWrongRange;
  auto it = inodes_.find(key);
  if (it == inodes_.end()) return OpStatus::kNotFound;
  *out = it->second;
  return OpStatus::kOk;
}

OpStatus RangeReplica::Put(const Key& key, const Inode& inode) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!desc_.Contains(key)) return OpStatus::kWrongRange;
  auto it = inodes_.find(key);
  if (it != inodes_.end()) bytes_ -= InodeBytes(key, it->second);
  inodes_[key] = inode;
  bytes_ += InodeBytes(key, inode);
  return OpStatus::kOk;
}

OpStatus RangeReplica::AddChild(const Key& dir, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!desc_.Contains(dir)) return OpStatus::kWrongRange;
  auto it = inodes_.find(dir);
  if (it == inodes_.end()) return OpStatus::kNotFound;
  it->second.children.push_back(name);
  bytes_ += name.size() + 8;
  return OpStatus::kOk;
}

std::vector<std::pair<Key, Inode>> RangeReplica::Scan(const Key& from, const Key& to,
                                                      size_t limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<Key, Inode>> out;
  for (auto it = inodes_.lower_bound(from); it != inodes_.end() && out.size() < limit; ++it) {
    if (!to.empty() && it->first >= to) break;
    out.emplace_back(it->first, it->second);
  }
  return out;
}

std::unique_ptr<RangeReplica> RangeReplica::Split(const RangeDescriptor& left,
                                                  const RangeDescriptor& right) {
  std::lock_guard<std::mutex> lock(mu_);
  auto rhs = std::make_unique<RangeReplica>(right);
  auto first = inodes_.lower_bound(right.start);
  auto last = right.end.empty() ? inodes_.end() : inodes_.lower_bound(right.end);
  for (auto it = first; it != last; ++it) {
    rhs->inodes_.insert(*it);
    rhs->bytes_ += InodeBytes(it->first, it->second);
  }
  // Everything at or beyond the new end of this range now belongs elsewhere.
  for (auto it = inodes_.lower_bound(left.end); it != inodes_.end();) {
    bytes_ -= InodeBytes(it->first, it->second);
    it = inodes_.erase(it);
  }
  desc_ = left;
  return rhs;
}

size_t RangeReplica::num_keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return inodes_.size();
}

uint64_t RangeReplica::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

std::vector<Key> RangeReplica::SampleKeys(size_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Key> out;
  if (inodes_.empty() || n == 0) return out;
  size_t stride = std::max<size_t>(1, inodes_.size() / n);
  size_t i = 0;
  for (const auto& kv : inodes_) {
    if (i++ % stride == 0) out.push_back(kv.first);
  }
  return out;
}

}  // namespace metashard
