// What the Deployment controller reads from and writes to Deployments and their ReplicaSets
// (upstream's deploymentutil): the annotations, revisions, the status type and its conditions,
// and which ReplicaSet is "new" (runs the current pod template) and which are "old".
//
// Annotations on a ReplicaSet:
//   deployment.kubernetes.io/revision          its rollout sequence number (1, 2, ...); the new
//                                              ReplicaSet always has the highest
//   deployment.kubernetes.io/revision-history  revisions it held before a rollback brought it
//                                              back ("1,3")
//   deployment.kubernetes.io/desired-replicas  spec.replicas of the Deployment when last scaled
//   deployment.kubernetes.io/max-replicas      that plus maxSurge (the base of proportional
//                                              scaling)
// and every annotation of the Deployment except those and kubectl's last-applied-configuration.
// The Deployment carries the revision of its new ReplicaSet.
//
// Thread-safety: values and pure functions.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "controllers/common/conditions.h"
#include "util/clock.h"

namespace converge::controllers::deployment {

inline constexpr std::string_view kRevisionAnnotation = "deployment.kubernetes.io/revision";
inline constexpr std::string_view kRevisionHistoryAnnotation =
    "deployment.kubernetes.io/revision-history";
inline constexpr std::string_view kDesiredReplicasAnnotation =
    "deployment.kubernetes.io/desired-replicas";
inline constexpr std::string_view kMaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";
inline constexpr std::string_view kLastAppliedConfigAnnotation =
    "kubectl.kubernetes.io/last-applied-configuration";
inline constexpr std::string_view kDeprecatedRollbackTo = "deprecated.deployment.rollback.to";
// revision-history is kept under this many characters (about 100 revisions).
inline constexpr size_t kMaxRevisionHistoryLength = 2000;

// Condition types and reasons.
inline constexpr std::string_view kAvailable = "Available";
inline constexpr std::string_view kProgressing = "Progressing";
inline constexpr std::string_view kReplicaFailure = "ReplicaFailure";
inline constexpr std::string_view kReplicaSetUpdatedReason = "ReplicaSetUpdated";
inline constexpr std::string_view kFailedRSCreateReason = "ReplicaSetCreateError";
inline constexpr std::string_view kNewReplicaSetReason = "NewReplicaSetCreated";
inline constexpr std::string_view kFoundNewRSReason = "FoundNewReplicaSet";
inline constexpr std::string_view kNewRSAvailableReason = "NewReplicaSetAvailable";
inline constexpr std::string_view kTimedOutReason = "ProgressDeadlineExceeded";
inline constexpr std::string_view kPausedDeployReason = "DeploymentPaused";
inline constexpr std::string_view kResumedDeployReason = "DeploymentResumed";
inline constexpr std::string_view kMinimumReplicasAvailable = "MinimumReplicasAvailable";
inline constexpr std::string_view kMinimumReplicasUnavailable = "MinimumReplicasUnavailable";

struct DeploymentStatus {
  int64_t observed_generation = 0;
  int64_t replicas = 0;
  int64_t updated_replicas = 0;
  int64_t ready_replicas = 0;
  int64_t available_replicas = 0;
  int64_t unavailable_replicas = 0;
  std::optional<int64_t> collision_count;
  std::vector<Condition> conditions;

  static DeploymentStatus FromObject(const api::Object& d);
  // Zero fields omitted, as the API serializes them.
  boost::json::object ToJson() const;
  friend bool operator==(const DeploymentStatus&, const DeploymentStatus&) = default;
};

// A condition with both times at `now` (NewDeploymentCondition).
Condition NewCondition(std::string_view type, std::string_view status, std::string_view reason,
                       std::string message, util::Clock::WallTime now);
// Adds or replaces the condition of its type; no change when status and reason are the same; the
// transition time survives when the status did not change (SetDeploymentCondition).
void SetCondition(std::vector<Condition>& conditions, Condition c);

// The revision annotation as a number (0 when absent; nullopt when not a number).
std::optional<int64_t> Revision(const api::Object& obj);
int64_t MaxRevision(const std::vector<const api::Object*>& replica_sets);

// Spec accessors with the API's defaults.
int64_t Replicas(const api::Object& obj);  // spec.replicas, default 1
int64_t MinReadySeconds(const api::Object& obj);
std::string_view StrategyType(const api::Object& d);  // "RollingUpdate" (default) or "Recreate"
bool IsRollingUpdate(const api::Object& d);
bool Paused(const api::Object& d);
// progressDeadlineSeconds; nullopt when unset or math.MaxInt32 (no deadline).
std::optional<int64_t> ProgressDeadlineSeconds(const api::Object& d);
// revisionHistoryLimit; nullopt when unset or math.MaxInt32 (keep everything).
std::optional<int64_t> RevisionHistoryLimit(const api::Object& d);
const boost::json::object& PodTemplate(const api::Object& obj);  // spec.template ({} if absent)

// Resolved rolling-update limits (0 for Recreate; maxUnavailable capped at replicas).
int64_t MaxSurge(const api::Object& d);
int64_t MaxUnavailable(const api::Object& d);

// The oldest ReplicaSet whose template equals the Deployment's (ignoring the hash label).
const api::Object* FindNewReplicaSet(const api::Object& d,
                                     const std::vector<const api::Object*>& replica_sets);

// Orders: by creation time then name; by revision (then creation time).
bool CreatedBefore(const api::Object& a, const api::Object& b);
bool RevisionBefore(const api::Object& a, const api::Object& b);

// The annotations a Deployment gives its ReplicaSets (everything but the skipped ones).
bool SkipCopyAnnotation(std::string_view key);

}  // namespace converge::controllers::deployment
