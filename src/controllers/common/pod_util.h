// Pod state as controllers read it (upstream's pkg/api/v1/pod helpers and controller_utils):
// readiness, availability after minReadySeconds, activity.
//
// A pod is
//   ready      when its Ready condition is "True";
//   available  when it is ready and has been for at least minReadySeconds (0: as soon as ready);
//              "been ready since" is the Ready condition's lastTransitionTime;
//   active     when it is not being deleted and not in a terminal phase (Succeeded, Failed): it
//              counts towards a ReplicaSet's replicas.
//
// Thread-safety: free functions over immutable objects.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "util/clock.h"

namespace converge::controllers {

// status.phase ("" when unset).
std::string_view PodPhase(const api::Object& pod);

// The Ready condition, or an absent view.
api::ObjectView GetPodReadyCondition(const api::Object& pod);
bool IsPodReady(const api::Object& pod);
// When the pod became ready (the Ready condition's lastTransitionTime); nullopt when not ready or
// the time is missing.
std::optional<util::Clock::WallTime> PodReadyTime(const api::Object& pod);
// Ready for at least `min_ready_seconds` at `now` (upstream: readySince + minReady < now, or
// minReadySeconds == 0).
bool IsPodAvailable(const api::Object& pod, int64_t min_ready_seconds, util::Clock::WallTime now);
// When a ready pod that is not yet available becomes available; nullopt otherwise.
std::optional<util::Clock::WallTime> PodAvailableAt(const api::Object& pod,
                                                    int64_t min_ready_seconds);

// Not terminal and not being deleted (controller.IsPodActive).
bool IsPodActive(const api::Object& pod);
std::vector<api::ObjectPtr> FilterActivePods(const std::vector<api::ObjectPtr>& pods);

// The highest restartCount among the pod's container statuses.
int64_t MaxContainerRestarts(const api::Object& pod);

// metadata.creationTimestamp parsed; nullopt when absent.
std::optional<util::Clock::WallTime> CreationTime(const api::Object& obj);

}  // namespace converge::controllers
