// One replica of one key range: the inodes whose paths fall in the range.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/keys.h"

namespace metashard {

struct Inode {
  uint64_t ino = 0;
  bool is_dir = false;
  uint64_t size = 0;
  uint32_t mode = 0644;
  int64_t mtime = 0;
  std::vector<std::string> children;  // names, for directories
};

enum class OpStatus { kOk, kNotFound, kWrongRange, kExists };

const char* OpStatusName(OpStatus s);

class RangeReplica {
 public:
  explicit RangeReplica(RangeDescriptor desc) : desc_(std::move(desc)) {}

  RangeDescriptor descriptor() const;

  OpStatus Get(const Key& key, Inode* out) const;
  OpStatus Put(const Key& key, const Inode& inode);
  OpStatus AddChild(const Key& dir, const std::string& name);
  // Inodes with keys in [from, to) (to empty = end of range), at most `limit`.
  std::vector<std::pair<Key, Inode>> Scan(const Key& from, const Key& to, size_t limit) const;

  // Applies a split: this replica becomes `left`, and the returned replica,
  // holding the keys of `right`, is registered by the caller.
  std::unique_ptr<RangeReplica> Split(const RangeDescriptor& left, const RangeDescriptor& right);

  size_t num_keys() const;
  uint64_t bytes() const;
  // Keys sampled at regular intervals, used to choose split points.
  std::vector<Key> SampleKeys(size_t n) const;

 private:
  mutable std::mutex mu_;
  RangeDescriptor desc_;
  std::map<Key, Inode> inodes_;
  uint64_t bytes_ = 0;
};

}  // namespace metashard
