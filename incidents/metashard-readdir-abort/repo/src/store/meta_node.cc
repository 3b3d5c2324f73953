#include "store/meta_node.h"

#include "metashard/logging.h"

namespace metashard {

void MetaNode::AddReplica(std::unique_ptr<RangeReplica> replica) {
  RangeDescriptor desc = replica->descriptor();
  std::lock_guard<std::mutex> lock(mu_);
  replicas_[desc.id] = std::move(replica);
  VLOG(1) << "node " << id_ << " now hosts " << desc;
}

RangeReplica* MetaNode::Replica(RangeId range) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = replicas_.find(range);
  return it == replicas_.end() ? nullptr : it->second.get();
}

std::vector<RangeId> MetaNode::Ranges() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RangeId> out;
  for (const auto& kv : replicas_) out.push_back(kv.first);
  return out;
}

OpStatus MetaNode::Get(RangeId range, const Key& key, Inode* out) {
  RangeReplica* r = Replica(range);
  return r == nullptr ? OpStatus::kWrongRange : r->Get(key, out);
}

OpStatus MetaNode::Put(RangeId range, const Key& key, const Inode& inode) {
  RangeReplica* r = Replica(range);
  return r == nullptr ? OpStatus::kWrongRange : r->Put(key, inode);
}

OpStatus MetaNode::AddChild(RangeId range, const Key& dir, const std::string& name) {
  RangeReplica* r = Replica(range);
  return r == nullptr ? OpStatus::kWrongRange : r->AddChild(dir, name);
}

std::vector<std::pair<Key, Inode>> MetaNode::Scan(RangeId range, const Key& from, const Key& to,
                                                  size_t limit) {
  RangeReplica* r = Replica(range);
  if (r == nullptr) return {};
  return r->Scan(from, to, limit);
}

}  // namespace metashard
