#include "coordinator/kv_node.h"

#include <utility>

#include "base/logging.h"

namespace qkv {

KvNode::KvNode(net::NodeId id, net::Transport* transport, coordinator::Ring* ring,
               storage::EngineOptions engine_options, coordinator::QuorumOptions quorum_options)
    : id_(std::move(id)), transport_(transport), ring_(ring) {
  engine_ = std::make_unique<storage::Engine>(std::move(engine_options));
  replica_ = std::make_unique<replica::ReplicaServer>(id_, engine_.get());
  writer_ = std::make_unique<coordinator::QuorumWriter>(id_, ring_, transport_, &clock_,
                                                        quorum_options);
  reader_ = std::make_unique<coordinator::QuorumReader>(id_, ring_, transport_, &clock_,
                                                        quorum_options);
}

KvNode::~KvNode() { Stop(); }

Status KvNode::Start() {
  Status s = engine_->Open();
  if (!s.ok()) {
    LOG(ERROR) << id_ << ": engine failed to open: " << s;
    return s;
  }
  transport_->Register(id_, replica_.get());
  ring_->AddNode(id_);
  LOG(INFO) << "node " << id_ << " serving";
  return Status::OK();
}

void KvNode::Stop() {
  if (transport_ != nullptr) {
    transport_->Unregister(id_);
    transport_ = nullptr;
  }
}

Status KvNode::Put(const std::string& key, const std::string& value, uint64_t* version) {
  coordinator::WriteResult result;
  Status s = writer_->Put(key, value, &result);
  if (s.ok()) *version = result.version;
  return s;
}

Status KvNode::Get(const std::string& key, std::string* value, uint64_t* version, bool* found) {
  coordinator::ReadResult result;
  Status s = reader_->Get(key, &result);
  if (!s.ok()) return s;
  *found = result.found;
  *value = result.value;
  *version = result.version;
  return s;
}

Status KvNode::Delete(const std::string& key) {
  coordinator::WriteResult result;
  return writer_->Delete(key, &result);
}

}  // namespace qkv
