// The ReplicaSet controller's decisions, as pure functions of a snapshot (upstream's
// manageReplicas choice of what to do, calculateStatus and updateReplicaSetStatus's "is there
// anything to write" test). The I/O around them is in replicaset_controller.h.
//
//   snapshot: the ReplicaSet, the active pods it owns (after adoption and release), whether its
//             expectations are satisfied, the time
//   → DecideReplicas:  how many pods to create, or which pods to delete (at most the burst cap)
//   → CalculateStatus: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas and the
//                      ReplicaFailure condition (set from the error of carrying the plan out)
//   → StatusNeedsUpdate, RequeueAfter
//
// Example: spec.replicas 5, 2 active pods, expectations satisfied → create 3. The same snapshot
// with unsatisfied expectations (the 3 creates of the previous sync are not in the cache yet) →
// do nothing: that is what prevents over-creation from a stale cache.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <span>
#include <vector>

#include "api/object.h"
#include "controllers/common/conditions.h"
#include "controllers/common/pod_facts.h"
#include "controllers/common/slow_start.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::controllers::replicaset {

inline constexpr std::string_view kReplicaFailure = "ReplicaFailure";

struct Snapshot {
  api::ObjectPtr rs;
  std::vector<api::ObjectPtr> pods;          // active pods the ReplicaSet owns
  std::vector<api::ObjectPtr> related_pods;  // pods of sibling ReplicaSets (deletion ranking)
  bool expectations_satisfied = true;
  util::Clock::WallTime now;
  int burst_replicas = kBurstReplicas;
};

struct ReplicaPlan {
  int creates = 0;
  std::vector<api::ObjectPtr> deletes;  // the pods to delete, cheapest first

  bool empty() const { return creates == 0 && deletes.empty(); }
};

// spec.replicas (default 1, as the API defaults it).
int64_t SpecReplicas(const api::Object& rs);
int64_t MinReadySeconds(const api::Object& rs);

// Nothing while expectations are unsatisfied or the ReplicaSet is being deleted.
ReplicaPlan DecideReplicas(const Snapshot& snapshot);

struct ReplicaSetStatus {
  int64_t replicas = 0;
  int64_t fully_labeled_replicas = 0;
  int64_t ready_replicas = 0;
  int64_t available_replicas = 0;
  int64_t observed_generation = 0;
  std::vector<Condition> conditions;

  static ReplicaSetStatus FromObject(const api::Object& rs);
  // The JSON form, omitting zero fields as the API does (replicas is always present).
  boost::json::object ToJson() const;
  friend bool operator==(const ReplicaSetStatus&, const ReplicaSetStatus&) = default;
};

// The status after this sync. `manage_error` is the error of creating/deleting pods (OK if none
// or nothing was attempted): it sets ReplicaFailure (reason FailedCreate when pods are missing,
// FailedDelete when there are too many) if not already set; OK clears it.
ReplicaSetStatus CalculateStatus(const api::Object& rs, const std::vector<api::ObjectPtr>& pods,
                                 const util::Status& manage_error, util::Clock::WallTime now);
// The same over the pods' facts (not null). The template-label selector is evaluated once per
// label set for a PodFactsCache's facts (LabelMemo), once per pod for others.
ReplicaSetStatus CalculateStatus(const api::Object& rs, std::span<const PodFacts* const> pods,
                                 const util::Status& manage_error, util::Clock::WallTime now);

// False in the steady state: counts and conditions unchanged and the generation observed.
bool StatusNeedsUpdate(const api::Object& rs, const ReplicaSetStatus& status);

// When a pod that is ready but not yet available (minReadySeconds) becomes available, plus a
// second against clock skew; nullopt when no pod is waiting.
std::optional<util::Clock::Duration> RequeueAfter(const api::Object& rs,
                                                  const std::vector<api::ObjectPtr>& pods,
                                                  util::Clock::WallTime now);

}  // namespace converge::controllers::replicaset
