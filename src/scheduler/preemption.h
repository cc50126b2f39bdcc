// Preemption (upstream DefaultPreemption's PostFilter): when a pod fits nowhere, find a node
// where evicting pods of lower priority would make room, and which pods to evict.
//
//   1. A pod with preemptionPolicy Never may not preempt: "not eligible due to
//      preemptionPolicy=Never.".
//      A pod whose nominated node still has terminating lower-priority pods (victims of an
//      earlier attempt) waits for them: "not eligible due to a terminating pod on the nominated
//      node.".
//   2. Nodes whose rejection is UnschedulableAndUnresolvable (taints, selectors, unschedulable)
//      are out: "Preemption is not helpful for scheduling".
//   3. On every other node, remove all pods of lower priority; none: "No preemption victims
//      found for incoming pod"; the pod still does not fit: the filter's reasons. Otherwise the
//      node is a candidate; victims are reprieved greedily, most important first, while the pod
//      still fits.
//   4. The candidate chosen: lowest highest-victim priority, then lowest sum of victim
//      priorities, then fewest victims, then the first found.
// Without a candidate, the message (prefixed "preemption: ") is a FitError over those per-node
// statuses, which is how users read it in FailedScheduling events:
//   "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
//
// Not implemented: PodDisruptionBudgets (upstream prefers victims whose eviction violates none),
// and the accounting of nominated pods in later cycles.
//
// Pure function; safe to call from any thread.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "scheduler/filters.h"
#include "scheduler/schedule_algorithm.h"
#include "scheduler/snapshot.h"

namespace converge::scheduler {

struct PreemptionResult {
  // When no candidate exists: the PostFilter message ("preemption: ..."), for the FitError.
  std::string message;
  // When a candidate exists: the node to nominate and the pods to evict there.
  std::string nominated_node;
  std::vector<PodInfoPtr> victims;
};

inline constexpr std::string_view kNoVictimsMessage =
    "No preemption victims found for incoming pod";
inline constexpr std::string_view kPreemptionNotHelpful =
    "Preemption is not helpful for scheduling";

PreemptionResult Preempt(const PodInfo& pod, const Snapshot& snapshot, const Diagnosis& diagnosis,
                         std::span<const FilterPlugin> filters = DefaultFilters());

}  // namespace converge::scheduler
