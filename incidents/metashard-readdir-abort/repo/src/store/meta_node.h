// A metadata node: hosts range replicas and serves per-range operations.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "store/range_replica.h"

namespace metashard {

class MetaNode {
 public:
  explicit MetaNode(NodeId id) : id_(id) {}

  NodeId id() const { return id_; }

  void AddReplica(std::unique_ptr<RangeReplica> replica);
  RangeReplica* Replica(RangeId range);
  std::vector<RangeId> Ranges() const;

  OpStatus Get(RangeId range, const Key& key, Inode* out);
  OpStatus Put(RangeId range, const Key& key, const Inode& inode);
  OpStatus AddChild(RangeId range, const Key& dir, const std::string& name);
  std::vector<std::pair<Key, Inode>> Scan(RangeId range, const Key& from, const Key& to,
                                          size_t limit);

 private:
  NodeId id_;
  mutable std::mutex mu_;
  std::map<RangeId, std::unique_ptr<RangeReplica>> replicas_;
};

}  // namespace metashard
