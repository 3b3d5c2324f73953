// Key space of the metadata service.
//
// Every inode is stored under its absolute path, so a directory's children are
// a contiguous run of keys. The key space is cut into ranges [start, end); an
// empty end key means "to the end of the key space".
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace metashard {

using Key = std::string;
using RangeId = uint64_t;
using NodeId = int;

constexpr RangeId kNoRange = 0;

// The smallest key strictly greater than `key`.
inline Key NextKey(const Key& key) { return key + '\0'; }

// The smallest key that does not have `prefix` as a prefix, or "" if none.
inline Key PrefixEnd(Key prefix) {
  while (!prefix.empty()) {
    unsigned char last = static_cast<unsigned char>(prefix.back());
    if (last != 0xff) {
      prefix.back() = static_cast<char>(last + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return prefix;
}

struct RangeDescriptor {
  RangeId id = kNoRange;
  Key start;
  Key end;  // exclusive; empty = unbounded
  uint64_t generation = 0;
  std::vector<NodeId> replicas;
  NodeId leaseholder = -1;

  bool Contains(const Key& key) const { return key >= start && (end.empty() || key < end); }
  bool EndsBefore(const Key& key) const { return !end.empty() && end <= key; }
};

// Printable form of a key: non-printable bytes are escaped as \xNN.
inline std::string PrettyKey(const Key& key) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

inline std::ostream& operator<<(std::ostream& os, const RangeDescriptor& d) {
  os << "r" << d.id << "[" << (d.start.empty() ? "/min" : PrettyKey(d.start)) << ", "
     << (d.end.empty() ? "/max" : PrettyKey(d.end)) << ") gen=" << d.generation;
  return os;
}

}  // namespace metashard
