// What the scheduler writes into a pod's status when it cannot place it: the PodScheduled
// condition (upstream podutil.UpdatePodCondition semantics) and status.nominatedNodeName.
//
// Pure functions; safe to call from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/object.h"
#include "util/clock.h"

namespace converge::scheduler {

// Condition reasons (core/v1 PodReasonUnschedulable, PodReasonSchedulerError,
// PodReasonSchedulingGated).
inline constexpr std::string_view kReasonUnschedulable = "Unschedulable";
inline constexpr std::string_view kReasonSchedulerError = "SchedulerError";
inline constexpr std::string_view kReasonSchedulingGated = "SchedulingGated";
inline constexpr std::string_view kSchedulingGatedMessage =
    "Scheduling is blocked due to non-empty scheduling gates";

// The strategic merge patch of the status subresource that sets PodScheduled=False with `reason`
// and `message` (and status.nominatedNodeName when `nominated_node` is set; "" clears it), or
// nullopt when the pod already says exactly that. lastTransitionTime is `now` unless the
// condition's status was already False. The patch carries metadata.uid as a precondition.
std::optional<std::string> PodScheduledFalsePatch(const api::Object& pod, std::string_view reason,
                                                  std::string_view message,
                                                  const std::optional<std::string>& nominated_node,
                                                  util::Clock::WallTime now);

// Events carry at most 1024 bytes of message (events.k8s.io note); longer ones are cut to 1021
// bytes plus "...", as upstream's truncateMessage does.
std::string TruncateMessage(std::string message);

}  // namespace converge::scheduler
