// Rolling-update arithmetic, as pure functions of numbers (upstream's deploymentutil
// ResolveFenceposts / MaxSurge / MaxUnavailable / NewRSNewReplicas / GetProportion and the
// scale-down steps of rolling.go).
//
// maxSurge and maxUnavailable are an absolute number or a percentage of spec.replicas. A
// percentage of maxSurge rounds UP, of maxUnavailable rounds DOWN (so a rollout can always make
// progress and never drops below the floor). If both resolve to 0 (validation forbids writing
// both as 0, but "0" and "10%" of 3 replicas both resolve to 0) maxUnavailable becomes 1.
//
// Worked example: replicas 10, maxSurge 25% → ceil(2.5) = 3, maxUnavailable 25% → floor(2.5) = 2.
// At most 10 + 3 = 13 pods, at least 10 − 2 = 8 available. Old ReplicaSet A, new ReplicaSet B;
// "avail" is what the ReplicaSets' status reports when the sync runs.
//
//   sync  A spec/avail  B spec/avail  step
//   1     10 / 10        – / –        B created: min(13 − 10, 10 − 0) = 3            → B 3
//                                     scale A down: maxScaledDown = 13 − 8 − (3 − 0) = 2,
//                                     available 10 − 8 = 2 may go                      → A 8
//   2      8 / 8         3 / 3        scale B up: min(13 − 11, 10 − 3) = 2             → B 5
//   3      8 / 8         5 / 3        maxScaledDown = 13 − 8 − (5 − 3) = 3;
//                                     available 8 + 3 − 8 = 3 may go                   → A 5
//   4      5 / 5         5 / 5        scale B up: min(13 − 10, 10 − 5) = 3             → B 8
//   5      5 / 5         8 / 5        maxScaledDown = 13 − 8 − 3 = 2; 10 − 8 = 2       → A 3
//   6      3 / 3         8 / 8        scale B up: min(13 − 11, 10 − 8) = 2             → B 10
//   7      3 / 3        10 / 8        maxScaledDown = 13 − 8 − 2 = 3; 11 − 8 = 3       → A 0
//   8      0 / 0        10 / 10       complete
// At no point are there more than 13 pods or fewer than 8 available.
//
// Counting pods in flight (a Converge refinement of upstream): when it sizes the new ReplicaSet,
// upstream counts each ReplicaSet's spec.replicas; but a ReplicaSet just scaled down still has
// the pods it is deleting, so the total can briefly exceed replicas + maxSurge. Here each
// ReplicaSet counts max(spec.replicas, status.replicas) (SurgeCount). Likewise, when scaling old
// ReplicaSets down, a ReplicaSet counts min(spec.replicas, status.availableReplicas) available
// pods (AvailableCount): pods it is about to delete are not counted on. Both keep the limits true
// at every instant, not only once the ReplicaSets have caught up.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/clock.h"
#include "util/status.h"

namespace converge::controllers::deployment {

// An IntOrString value (42 or "25%") resolved against `total`. Errors: InvalidArgument for
// anything else. A null value resolves to 0.
util::StatusOr<int64_t> ScaledValueFromIntOrPercent(const boost::json::value& v, int64_t total,
                                                    bool round_up);

struct Fenceposts {
  int64_t max_surge = 0;
  int64_t max_unavailable = 0;
};
// Both limits at once (upstream's ResolveFenceposts).
util::StatusOr<Fenceposts> ResolveFenceposts(const boost::json::value& max_surge,
                                             const boost::json::value& max_unavailable,
                                             int64_t desired);

// What the rolling-update steps know about one ReplicaSet.
struct RsCounts {
  int64_t spec = 0;             // spec.replicas
  int64_t status_replicas = 0;  // status.replicas
  int64_t available = 0;        // status.availableReplicas
};
// Pods the ReplicaSet may have now or soon: max(spec, status.replicas).
int64_t SurgeCount(const RsCounts& rs);
// Available pods it will keep: min(spec, status.availableReplicas).
int64_t AvailableCount(const RsCounts& rs);

// The new ReplicaSet's size under RollingUpdate (NewRSNewReplicas): grow it by what maxSurge
// leaves, without passing `replicas`. `all` includes the new ReplicaSet.
int64_t NewReplicaSetReplicas(int64_t replicas, int64_t max_surge, const std::vector<RsCounts>& all,
                              const RsCounts& new_rs);

// How many old pods may go at most this sync: allPods(spec) − minAvailable − unavailable pods of
// the new ReplicaSet (reconcileOldReplicaSets).
int64_t MaxScaledDown(int64_t replicas, int64_t max_unavailable, const std::vector<RsCounts>& all,
                      const RsCounts& new_rs);

// How far each old ReplicaSet goes down to remove unhealthy (unavailable) pods first, oldest
// first, at most `max_cleanup` in total (cleanupUnhealthyReplicas). `old` is sorted oldest first;
// returns the new spec of each.
std::vector<int64_t> CleanupUnhealthy(const std::vector<RsCounts>& old, int64_t max_cleanup);

// How far each old ReplicaSet goes down so that available pods stay >= replicas −
// maxUnavailable (scaleDownOldReplicaSetsForRollingUpdate). `old` sorted oldest first; `all`
// includes them and the new ReplicaSet. Returns the new spec of each old ReplicaSet.
std::vector<int64_t> ScaleDownOld(int64_t replicas, int64_t max_unavailable,
                                  const std::vector<RsCounts>& all,
                                  const std::vector<RsCounts>& old);

// Proportional scaling of the active ReplicaSets when the Deployment is resized during a
// rollout (or while paused) (upstream's scale() and GetProportion).
//
// Example: replicas 10 → 20 with maxSurge 25% (5 at 20 replicas) while A has 8 and B 5, both
// annotated max-replicas 13 (10 + 3). Allowed 20 + 5 = 25, to add 25 − 13 = 12. Largest first:
// A gets round(8 · 25 / 13) − 8 = 15 − 8 = 7, B round(5 · 25 / 13) − 5 = 10 − 5 = 5 (capped by
// what is left, 12 − 7 = 5). A 15, B 10: the ratio survives the resize.
struct ProportionalRs {
  std::string name;
  int64_t replicas = 0;                 // spec.replicas (> 0: only active ones)
  std::optional<int64_t> max_replicas;  // the max-replicas annotation
  util::Clock::WallTime created;
};
// New sizes, in the input order. `status_replicas` is the Deployment's status.replicas (the
// fallback when an annotation is missing).
std::vector<int64_t> ScaleProportionally(const std::vector<ProportionalRs>& active,
                                         int64_t replicas, int64_t max_surge,
                                         int64_t status_replicas);

}  // namespace converge::controllers::deployment
