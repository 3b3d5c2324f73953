#include "gateway/gateway.h"

#include <chrono>

#include "metashard/logging.h"

namespace metashard {

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Gateway::Gateway(Router* router, std::map<NodeId, MetaNode*> nodes)
    : router_(router), nodes_(std::move(nodes)) {}

MetaNode* Gateway::NodeFor(const RangeDescriptor& desc) {
  auto it = nodes_.find(desc.leaseholder);
  return it == nodes_.end() ? nullptr : it->second;
}

OpStatus Gateway::Stat(const std::string& path, Inode* out) {
  auto desc = router_->Resolve(path);
  if (!desc) return OpStatus::kNotFound;
  MetaNode* node = NodeFor(*desc);
  if (node == nullptr) return OpStatus::kWrongRange;
  OpStatus s = node->Get(desc->id, path, out);
  if (s == OpStatus::kWrongRange) {
    router_->Invalidate(desc->id);
    LOG(WARNING) << "stat " << path << ": stale route to r" << desc->id;
  }
  return s;
}

OpStatus Gateway::AddEntry(const std::string& path, bool is_dir, uint64_t size) {
  const std::string parent = ParentOf(path);
  auto pdesc = router_->Resolve(parent);
  auto desc = router_->Resolve(path);
  if (!pdesc || !desc) return OpStatus::kNotFound;
  Inode probe;
  if (NodeFor(*desc)->Get(desc->id, path, &probe) == OpStatus::kOk) return OpStatus::kExists;

  Inode inode;
  inode.ino = next_ino_++;
  inode.is_dir = is_dir;
  inode.size = size;
  inode.mode = is_dir ? 0755 : 0644;
  inode.mtime = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch()).count();
  // Replicate to every replica of the range; the leaseholder answers.
  for (NodeId n : desc->replicas) {
    OpStatus s = nodes_.at(n)->Put(desc->id, path, inode);
    if (s != OpStatus::kOk) return s;
  }
  for (NodeId n : pdesc->replicas) {
    OpStatus s = nodes_.at(n)->AddChild(pdesc->id, parent, BaseName(path));
    if (s != OpStatus::kOk) return s;
  }
  return OpStatus::kOk;
}

OpStatus Gateway::Mkdir(const std::string& path) { return AddEntry(path, true, 0); }

OpStatus Gateway::Create(const std::string& path, uint64_t size) {
  return AddEntry(path, false, size);
}

OpStatus Gateway::ReadDir(const std::string& path, std::vector<DirEntry>* out) {
  Inode dir;
  OpStatus s = Stat(path, &dir);
  if (s != OpStatus::kOk) return s;
  if (!dir.is_dir) return OpStatus::kNotFound;

  // Children are the keys under "<path>/"; fetch their attributes with one
  // scan per overlapping range instead of one lookup per child.
  const Key from = path == "/" ? "/" : path + "/";
  const Key to = PrefixEnd(from);
  std::map<std::string, Inode> attrs;
  for (const RangeDescriptor& d : router_->Overlapping(from, to)) {
    MetaNode* node = NodeFor(d);
    if (node == nullptr) continue;
    for (auto& kv : node->Scan(d.id, from, to, 100000)) {
      if (ParentOf(kv.first) == path) attrs.emplace(BaseName(kv.first), std::move(kv.second));
    }
  }
  out->clear();
  out->reserve(dir.children.size());
  for (const std::string& name : dir.children) {
    const Inode& child = attrs.at(name);
    out->push_back(DirEntry{name, child.is_dir, child.size, child.mtime});
  }
  VLOG(1) << "readdir " << path << ": " << out->size() << " entries";
  return OpStatus::kOk;
}

}  // namespace metashard
