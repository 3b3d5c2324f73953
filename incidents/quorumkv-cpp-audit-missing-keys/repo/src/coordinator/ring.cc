#include "coordinator/ring.h"

#include <algorithm>

#include "base/logging.h"

namespace qkv {
namespace coordinator {

uint64_t Ring::Hash(const std::string& s) {
  // FNV-1a, 64 bit.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void Ring::AddNode(const net::NodeId& node) {
  if (std::find(nodes_.begin(), nodes_.end(), node) != nodes_.end()) return;
  nodes_.push_back(node);
  for (int i = 0; i < vnodes_; ++i) {
    tokens_[Hash(node + "#" + std::to_string(i))] = node;
  }
  LOG(INFO) << "ring: added " << node << " (" << nodes_.size() << " nodes, " << tokens_.size()
            << " tokens)";
}

void Ring::RemoveNode(const net::NodeId& node) {
  nodes_.erase(std::remove(nodes_.begin(), nodes_.end(), node), nodes_.end());
  for (auto it = tokens_.begin(); it != tokens_.end();) {
    if (it->second == node) {
      it = tokens_.erase(it);
    } else {
      ++it;
    }
  }
  LOG(INFO) << "ring: removed " << node;
}

std::vector<net::NodeId> Ring::PreferenceList(const std::string& key, size_t n) const {
  std::vector<net::NodeId> result;
  if (tokens_.empty()) return result;
  n = std::min(n, nodes_.size());
  auto it = tokens_.lower_bound(Hash(key));
  while (result.size() < n) {
    if (it == tokens_.end()) it = tokens_.begin();
    if (std::find(result.begin(), result.end(), it->second) == result.end()) {
      result.push_back(it->second);
    }
    ++it;
  }
  return result;
}

}  // namespace coordinator
}  // namespace qkv
