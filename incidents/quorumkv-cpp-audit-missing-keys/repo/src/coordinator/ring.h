// Consistent-hash ring that maps keys to their preference list of replicas.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "net/messages.h"

namespace qkv {
namespace coordinator {

class Ring {
 public:
  explicit Ring(int vnodes_per_node = 64) : vnodes_(vnodes_per_node) {}

  void AddNode(const net::NodeId& node);
  void RemoveNode(const net::NodeId& node);

  // The first `n` distinct nodes clockwise from the key's hash.
  std::vector<net::NodeId> PreferenceList(const std::string& key, size_t n) const;

  size_t num_nodes() const { return nodes_.size(); }

  static uint64_t Hash(const std::string& s);

 private:
  int vnodes_;
  std::map<uint64_t, net::NodeId> tokens_;
  std::vector<net::NodeId> nodes_;
};

}  // namespace coordinator
}  // namespace qkv
