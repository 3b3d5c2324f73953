// Client-facing metadata API (stat, create, mkdir, readdir).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gateway/router.h"
#include "store/meta_node.h"

namespace metashard {

struct DirEntry {
  std::string name;
  bool is_dir = false;
  uint64_t size = 0;
  int64_t mtime = 0;
};

class Gateway {
 public:
  Gateway(Router* router, std::map<NodeId, MetaNode*> nodes);

  OpStatus Stat(const std::string& path, Inode* out);
  OpStatus Mkdir(const std::string& path);
  OpStatus Create(const std::string& path, uint64_t size);
  OpStatus ReadDir(const std::string& path, std::vector<DirEntry>* out);

 private:
  OpStatus AddEntry(const std::string& path, bool is_dir, uint64_t size);
  MetaNode* NodeFor(const RangeDescriptor& desc);

  Router* router_;
  std::map<NodeId, MetaNode*> nodes_;
  std::atomic<uint64_t> next_ino_{2};
};

std::string ParentOf(const std::string& path);
std::string BaseName(const std::string& path);

}  // namespace metashard
