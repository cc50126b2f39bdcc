// Cache: the scheduler's view of nodes and of the pods placed on them (upstream
// internal/cache), including pods the scheduler has assumed but the API has not yet confirmed.
//
// Pod lifecycle in the cache (upstream's state machine, without assumed-pod expiry):
//
//   AssumePod ──▶ assumed ──(informer sees the pod bound: AddPod)──▶ added (confirmed)
//                   │                                                  │
//                   └─(binding failed: ForgetPod)──▶ gone    UpdatePod / RemovePod
//
// Assuming a pod counts its requests on the chosen node at once, so the next cycle — which runs
// before the binding reaches the API — sees the node's resources as taken. The informer's add of
// the bound pod confirms the assumption (moving it if the API put the pod elsewhere). A pod
// deleted while assumed is removed.
//
// Pods bound to a node the cache has not seen are kept on a placeholder NodeInfo (no Node), so
// they count once the Node arrives. Removing a Node keeps its NodeInfo while pods remain.
//
// UpdateSnapshot refreshes a Snapshot incrementally: every NodeInfo change bumps a global
// generation and moves the node to the head of a recency list, so only NodeInfos changed since
// the snapshot's generation are copied.
//
// Thread-safety: every method is safe to call concurrently (one mutex).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/types.h"
#include "scheduler/node_info.h"
#include "scheduler/pod_info.h"
#include "scheduler/snapshot.h"
#include "util/status.h"

namespace converge::scheduler {

class Cache {
 public:
  Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // Nodes (from the node informer).
  void AddOrUpdateNode(NodeFactsPtr node);
  void RemoveNode(const std::string& name);

  // Marks `pod` as placed on `node` before the binding is written. FailedPrecondition when the
  // pod is already in the cache (assumed or added).
  util::Status AssumePod(PodInfoPtr pod, const std::string& node);
  // Undoes AssumePod (the binding failed). No-op unless the pod is assumed.
  void ForgetPod(const api::ObjectKey& key);
  bool IsAssumed(const api::ObjectKey& key) const;

  // Bound pods (from the pod informer; pod->node_name set). AddPod confirms an assumed pod.
  void AddPod(PodInfoPtr pod);
  void UpdatePod(PodInfoPtr pod);
  // Returns whether the pod was in the cache (bound or assumed).
  bool RemovePod(const api::ObjectKey& key);

  // Brings `snapshot` up to date.
  void UpdateSnapshot(Snapshot* snapshot);

  size_t NumNodes() const;
  size_t NumPods() const;
  // A copy of one NodeInfo (tests, debugging); nullopt when unknown.
  std::optional<NodeInfo> GetNodeInfo(const std::string& name) const;

 private:
  struct NodeEntry {
    NodeInfo info;
    std::list<std::string>::iterator recency;  // position in recency_
  };
  struct PodState {
    PodInfoPtr pod;
    std::string node;
    bool assumed = false;
  };

  // The entry for `name`, created (without a Node) when absent; moved to the recency head and
  // given a new generation.
  NodeEntry& TouchLocked(const std::string& name);
  void AddPodToNodeLocked(const PodInfoPtr& pod, const std::string& node);
  void RemovePodFromNodeLocked(const api::ObjectKey& key, const std::string& node);
  // Drops a node entry that has neither a Node nor pods.
  void MaybeDropNodeLocked(const std::string& name);

  mutable std::mutex mu_;
  std::unordered_map<std::string, NodeEntry> nodes_;  // guarded by mu_
  // Node names, most recently changed first (mu_).
  std::list<std::string> recency_;
  // Names of nodes with a Node object, in add order (mu_); the snapshot's node order.
  std::vector<std::string> node_order_;
  int64_t node_order_version_ = 0;                     // guarded by mu_; bumped on changes
  std::unordered_map<api::ObjectKey, PodState> pods_;  // guarded by mu_
  int64_t generation_ = 0;                             // guarded by mu_
};

}  // namespace converge::scheduler
