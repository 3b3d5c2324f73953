// Wire messages exchanged between coordinators and replicas.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace qkv {
namespace net {

using NodeId = std::string;

struct PutRequest {
  std::string key;
  std::string value;
  uint64_t version = 0;
  bool tombstone = false;
  NodeId coordinator;
  uint64_t request_id = 0;
};

struct PutResponse {
  Status status;
  NodeId replica;
  // Version the replica holds for the key after handling the request.
  uint64_t version = 0;
  bool applied = false;
};

struct GetRequest {
  std::string key;
  NodeId coordinator;
  uint64_t request_id = 0;
};

struct GetResponse {
  Status status;
  NodeId replica;
  bool found = false;
  std::string value;
  uint64_t version = 0;
  bool tombstone = false;
};

}  // namespace net
}  // namespace qkv
