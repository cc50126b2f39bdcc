// Filter plugins: whether a pod may run on a node. Each is a pure function of the pod and the
// node (with the pods already placed on it), as upstream's Filter extension point, run in
// upstream's default order; the first plugin that rejects a node decides its status.
//
//   NodeUnschedulable  spec.unschedulable, unless the pod tolerates the
//                      node.kubernetes.io/unschedulable:NoSchedule taint
//   NodeName           spec.nodeName, when the pod names a node
//   TaintToleration    NoSchedule and NoExecute taints the pod does not tolerate (this is also
//                      how node readiness reaches the scheduler: the node lifecycle controller and
//                      the kubelet taint nodes that are not ready or unreachable)
//   NodeAffinity       spec.nodeSelector and required node affinity
//   NodeResourcesFit   pod count, cpu, memory, ephemeral storage and scalar resources against
//                      allocatable minus what the node's pods request
//
// Reasons are upstream's strings: they are what users read in FailedScheduling events.
//
// Pure functions; safe to call from any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/node_info.h"
#include "scheduler/pod_info.h"

namespace converge::scheduler {

// Upstream framework.Code, the subset filters return.
enum class Code {
  kSuccess,
  // Rejected; preemption might help.
  kUnschedulable,
  // Rejected; preemption on this node cannot help.
  kUnschedulableAndUnresolvable,
};

struct FilterStatus {
  Code code = Code::kSuccess;
  std::string_view plugin;           // the rejecting plugin (a static name)
  std::vector<std::string> reasons;  // one or more upstream reason strings

  bool ok() const { return code == Code::kSuccess; }
};

inline constexpr std::string_view kNodeUnschedulable = "NodeUnschedulable";
inline constexpr std::string_view kNodeName = "NodeName";
inline constexpr std::string_view kTaintToleration = "TaintToleration";
inline constexpr std::string_view kNodeAffinity = "NodeAffinity";
inline constexpr std::string_view kNodeResourcesFit = "NodeResourcesFit";
inline constexpr std::string_view kNodeResourcesBalancedAllocation =
    "NodeResourcesBalancedAllocation";

inline constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";
inline constexpr std::string_view kErrReasonNodeName =
    "node(s) didn't match the requested node name";
inline constexpr std::string_view kErrReasonNodeAffinity =
    "node(s) didn't match Pod's node affinity/selector";

FilterStatus FilterNodeUnschedulable(const PodInfo& pod, const NodeInfo& node);
FilterStatus FilterNodeName(const PodInfo& pod, const NodeInfo& node);
FilterStatus FilterTaintToleration(const PodInfo& pod, const NodeInfo& node);
FilterStatus FilterNodeAffinity(const PodInfo& pod, const NodeInfo& node);
FilterStatus FilterNodeResourcesFit(const PodInfo& pod, const NodeInfo& node);

struct InsufficientResource {
  std::string resource;  // "cpu", "memory", "pods", ...
  std::string reason;    // "Insufficient cpu", "Too many pods"
  int64_t requested = 0;
  int64_t used = 0;
  int64_t capacity = 0;
};
// The resources the node lacks for the pod (upstream fitsRequest), in upstream's order: pods,
// cpu, memory, ephemeral-storage, then scalar resources by name.
std::vector<InsufficientResource> FitsRequest(const Resource& pod_request, const NodeInfo& node);

struct FilterPlugin {
  std::string_view name;
  FilterStatus (*filter)(const PodInfo& pod, const NodeInfo& node);
};

// The filters in upstream's default order.
std::span<const FilterPlugin> DefaultFilters();

// Runs `filters` in order; the first rejection is the node's status.
FilterStatus RunFilters(std::span<const FilterPlugin> filters, const PodInfo& pod,
                        const NodeInfo& node);

}  // namespace converge::scheduler
