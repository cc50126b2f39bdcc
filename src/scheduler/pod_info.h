// PodInfo: what the scheduler needs of one Pod, parsed once per version of the object (upstream
// framework.PodInfo plus the pre-computed state its plugins keep in CycleState).
//
// Immutable once built and shared as shared_ptr<const PodInfo>; safe to read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "scheduler/node_selector.h"
#include "scheduler/resources.h"
#include "scheduler/taints.h"

namespace converge::scheduler {

struct PodInfo {
  api::ObjectPtr pod;
  api::ObjectKey key;
  // Views of `pod`, which this holds (one PodInfo per pod is held for as long as the pod exists,
  // so its strings are not copied again).
  std::string_view uid;
  std::string_view node_name;            // spec.nodeName: set once bound
  std::string_view scheduler_name;       // spec.schedulerName ("default-scheduler" when absent)
  std::string_view nominated_node_name;  // status.nominatedNodeName
  int32_t priority = 0;                  // spec.priority
  bool preempt_never = false;            // spec.preemptionPolicy == Never
  bool gated = false;                    // spec.schedulingGates is not empty
  bool terminal = false;                 // status.phase Succeeded or Failed

  // PodRequests without defaults: what NodeResourcesFit checks and a node's requested sum holds.
  Resource requests;
  // PodRequests with the default cpu/memory for containers that request none (scoring).
  Resource non_zero_requests;

  RequiredNodeAffinity required_affinity;
  std::vector<PreferredSchedulingTerm> preferred_affinity;
  // Never null; shared by every pod with the same ones (SharedTolerations).
  TolerationsPtr tolerations = SharedTolerations(nullptr);
};

using PodInfoPtr = std::shared_ptr<const PodInfo>;

PodInfoPtr NewPodInfo(api::ObjectPtr pod);

}  // namespace converge::scheduler
