// NodeFacts and NodeInfo: a node as the scheduler sees it (upstream framework.NodeInfo).
//
// NodeFacts is the parsed Node object (labels, taints, allocatable...), immutable and shared.
// NodeInfo adds the pods placed on the node — bound ones and ones the scheduler assumed — and
// the sums of their requests. The cache owns the live NodeInfos; a Snapshot holds copies.
//
// Thread-safety: NodeFacts is immutable. NodeInfo is a value with no locking of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/object.h"
#include "scheduler/node_selector.h"
#include "scheduler/pod_info.h"
#include "scheduler/resources.h"
#include "scheduler/taints.h"

namespace converge::scheduler {

struct NodeFacts {
  api::ObjectPtr node;
  std::string name;
  Labels labels;
  std::vector<Taint> taints;
  bool unschedulable = false;  // spec.unschedulable
  // status.allocatable (status.capacity when allocatable is absent, as the API server defaults).
  Resource allocatable;
  // status.conditions as (type, status), for change detection.
  std::vector<std::pair<std::string, std::string>> conditions;
};

using NodeFactsPtr = std::shared_ptr<const NodeFacts>;

NodeFactsPtr NewNodeFacts(api::ObjectPtr node);

class NodeInfo {
 public:
  // Null while the cache has seen pods bound to a node it has not seen (the pods still count
  // once the Node arrives); such NodeInfos are not in snapshots' node lists.
  NodeFactsPtr node;
  std::vector<PodInfoPtr> pods;
  // Sum of the pods' requests (PodInfo::requests).
  Resource requested;
  // Sum of the pods' non-zero cpu and memory requests (PodInfo::non_zero_requests).
  int64_t non_zero_cpu = 0;
  int64_t non_zero_memory = 0;
  // Bumped on every change; snapshots copy the NodeInfos whose generation moved.
  int64_t generation = 0;

  const std::string& name() const { return node->name; }
  void AddPod(PodInfoPtr pod);
  // Removes the pod with this key; returns whether it was there.
  bool RemovePod(const api::ObjectKey& key);
};

}  // namespace converge::scheduler
