#include "scheduler/cache.h"

#include <algorithm>

namespace converge::scheduler {

Cache::NodeEntry& Cache::TouchLocked(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    recency_.push_front(name);
    it = nodes_.emplace(name, NodeEntry{NodeInfo{}, recency_.begin()}).first;
  } else {
    recency_.splice(recency_.begin(), recency_, it->second.recency);
  }
  it->second.info.generation = ++generation_;
  return it->second;
}

void Cache::MaybeDropNodeLocked(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end() || it->second.info.node || !it->second.info.pods.empty()) return;
  recency_.erase(it->second.recency);
  nodes_.erase(it);
}

void Cache::AddOrUpdateNode(NodeFactsPtr node) {
  std::lock_guard lock(mu_);
  std::string name = node->name;
  NodeEntry& e = TouchLocked(name);
  if (!e.info.node) {
    node_order_.push_back(name);
    ++node_order_version_;
  }
  e.info.node = std::move(node);
}

void Cache::RemoveNode(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.info.node) return;
  TouchLocked(name).info.node = nullptr;
  node_order_.erase(std::find(node_order_.begin(), node_order_.end(), name));
  ++node_order_version_;
  MaybeDropNodeLocked(name);
}

void Cache::AddPodToNodeLocked(const PodInfoPtr& pod, const std::string& node) {
  TouchLocked(node).info.AddPod(pod);
}

void Cache::RemovePodFromNodeLocked(const api::ObjectKey& key, const std::string& node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  TouchLocked(node).info.RemovePod(key);
  MaybeDropNodeLocked(node);
}

util::Status Cache::AssumePod(PodInfoPtr pod, const std::string& node) {
  std::lock_guard lock(mu_);
  if (pods_.contains(pod->key)) {
    return util::FailedPrecondition("pod " + pod->key.ToString() + " is in the cache already");
  }
  AddPodToNodeLocked(pod, node);
  const api::ObjectKey key = pod->key;
  pods_.emplace(key, PodState{std::move(pod), node, true});
  return util::Status();
}

void Cache::ForgetPod(const api::ObjectKey& key) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(key);
  if (it == pods_.end() || !it->second.assumed) return;
  RemovePodFromNodeLocked(key, it->second.node);
  pods_.erase(it);
}

bool Cache::IsAssumed(const api::ObjectKey& key) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(key);
  return it != pods_.end() && it->second.assumed;
}

void Cache::AddPod(PodInfoPtr pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod->key);
  if (it != pods_.end()) {
    // Confirms an assumed pod (or repeats an add): replace it with the API's version, on the
    // node the API says.
    RemovePodFromNodeLocked(pod->key, it->second.node);
    it->second = PodState{pod, std::string(pod->node_name), false};
  } else {
    pods_.emplace(pod->key, PodState{pod, std::string(pod->node_name), false});
  }
  AddPodToNodeLocked(pod, std::string(pod->node_name));
}

void Cache::UpdatePod(PodInfoPtr pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod->key);
  if (it != pods_.end()) RemovePodFromNodeLocked(pod->key, it->second.node);
  std::string node(pod->node_name);
  pods_[pod->key] = PodState{pod, node, false};
  AddPodToNodeLocked(pod, node);
}

bool Cache::RemovePod(const api::ObjectKey& key) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(key);
  if (it == pods_.end()) return false;
  RemovePodFromNodeLocked(key, it->second.node);
  pods_.erase(it);
  return true;
}

void Cache::UpdateSnapshot(Snapshot* snapshot) {
  std::lock_guard lock(mu_);
  for (const std::string& name : recency_) {
    NodeEntry& e = nodes_.at(name);
    if (e.info.generation <= snapshot->generation_) break;
    if (!e.info.node) {
      snapshot->node_map_.erase(name);
      continue;
    }
    auto& slot = snapshot->node_map_[name];
    if (slot) {
      *slot = e.info;
    } else {
      slot = std::make_unique<NodeInfo>(e.info);
    }
  }
  // Nodes dropped from the cache altogether (no pods left) are not in recency_ any more.
  if (snapshot->node_order_version_ != node_order_version_) {
    for (auto it = snapshot->node_map_.begin(); it != snapshot->node_map_.end();) {
      auto n = nodes_.find(it->first);
      it = (n == nodes_.end() || !n->second.info.node) ? snapshot->node_map_.erase(it)
                                                       : std::next(it);
    }
    snapshot->node_list_.clear();
    snapshot->node_list_.reserve(node_order_.size());
    for (const std::string& name : node_order_) {
      snapshot->node_list_.push_back(snapshot->node_map_.at(name).get());
    }
    snapshot->node_order_version_ = node_order_version_;
  }
  snapshot->generation_ = generation_;
}

size_t Cache::NumNodes() const {
  std::lock_guard lock(mu_);
  return node_order_.size();
}

size_t Cache::NumPods() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

std::optional<NodeInfo> Cache::GetNodeInfo(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  return it->second.info;
}

}  // namespace converge::scheduler
