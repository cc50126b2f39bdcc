// Node health as upstream's node lifecycle controller judges it (tryUpdateNodeHealth), as pure
// functions over the node, its Lease and what the controller remembers.
//
// A node is alive while its kubelet shows signs of life: a new Ready.lastHeartbeatTime or a new
// Lease renewTime. The controller timestamps each sign with its own clock when it sees it
// (probeTimestamp; the kubelet's clock is never compared with ours). When no sign came for the
// grace period — nodeMonitorGracePeriod (50 s in 1.32), or nodeStartupGracePeriod (60 s) for a
// node that never posted Ready — Ready, MemoryPressure, DiskPressure and PIDPressure become
// Unknown ("NodeStatusUnknown", "Kubelet stopped posting node status."; "NodeStatusNeverUpdated",
// "Kubelet never posted node status." for conditions that never existed).
//
// Taints follow the Ready condition:
//   - NoSchedule (TaintNodesByCondition, applied at once): not-ready for Ready=False,
//     unreachable for Ready=Unknown, memory-/disk-/pid-pressure and network-unavailable for those
//     conditions True, unschedulable for spec.unschedulable;
//   - NoExecute (taint-based eviction): not-ready for False, unreachable for Unknown; added
//     through a rate-limited queue per zone, swapped or removed at once.
//
// Thread-safety: values and pure functions.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "controllers/nodelifecycle/taints.h"

namespace converge::controllers::nodelifecycle {

using WallTime = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;

// What the controller remembers of a node between rounds (upstream nodeHealthData).
struct NodeHealth {
  bool known = false;
  WallTime probe_timestamp{};
  WallTime ready_transition_timestamp{};
  std::string heartbeat;    // Ready.lastHeartbeatTime last seen
  std::string lease_renew;  // the Lease's renewTime last seen
  std::string ready;        // the Ready status last seen
};

struct NodeHealthOptions {
  Duration grace = std::chrono::seconds(50);          // --node-monitor-grace-period
  Duration startup_grace = std::chrono::seconds(60);  // --node-startup-grace-period
};

struct NodeHealthDecision {
  std::string observed_ready;  // Ready as read from the node ("" when absent)
  std::string current_ready;   // Ready after this decision
  // The node's status.conditions to write when marking it Unknown; nullopt: no write.
  std::optional<boost::json::array> new_conditions;
};

// Judges `node` at `now`. `lease_renew_time` is the renewTime of its Lease ("" when none).
// Updates `health`.
NodeHealthDecision DecideNodeHealth(const api::Object& node, std::string_view lease_renew_time,
                                    NodeHealth& health, WallTime now,
                                    const NodeHealthOptions& options);

// The status of condition `type` of `node` ("" when absent).
std::string ConditionStatus(const api::Object& node, std::string_view type);

// The node's taints with the NoSchedule taints its conditions call for (and no stale ones);
// nullopt when they are already right.
std::optional<std::vector<Taint>> NoScheduleTaintUpdate(const api::Object& node);

// What to do with the NoExecute taints for a Ready status of `ready`.
struct NoExecuteAction {
  enum class Kind { kNone, kAddRateLimited, kSwapNow, kRemoveNow };
  Kind kind = Kind::kNone;
  std::vector<Taint> taints;  // the node's new taints, for kSwapNow and kRemoveNow
};
NoExecuteAction DecideNoExecute(const std::vector<Taint>& taints, std::string_view ready,
                                WallTime now);
// The taints after adding the NoExecute taint for `ready` (removing the other); nullopt when
// nothing changes (e.g. the node recovered meanwhile).
std::optional<std::vector<Taint>> WithNoExecuteTaint(const std::vector<Taint>& taints,
                                                     std::string_view ready, WallTime now);

boost::json::array TaintsJson(const std::vector<Taint>& taints);

}  // namespace converge::controllers::nodelifecycle
