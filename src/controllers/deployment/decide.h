// The Deployment controller's decisions: one pure function from a snapshot to a plan (upstream's
// syncDeployment with sync.go, rolling.go, recreate.go and progress.go, deciding instead of
// doing). The I/O around it is in deployment_controller.h.
//
//   snapshot: the Deployment, the ReplicaSets it owns (after adoption and release), for Recreate
//             the pods of each ReplicaSet, and the time
//   → plan:   ReplicaSets to create, update (scale, annotations, minReadySeconds) and delete, in
//             the order to issue them, each with the events to record once it succeeded; the
//             Deployment's new status and annotations (written through /status, only when they
//             changed); events about the Deployment; when to look again.
//
// The flow, in upstream's priority order:
//   empty selector           → a SelectingAll warning, nothing else;
//   being deleted            → status only;
//   paused                   → Progressing Unknown "DeploymentPaused" (or "DeploymentResumed"
//                              when unpaused), then scale only (proportionally), clean up old
//                              revisions, status;
//   a scaling event          → (the active ReplicaSets' desired-replicas differ from
//                              spec.replicas) scale only, status;
//   RollingUpdate            → create the new ReplicaSet if missing (sized by maxSurge); if it
//                              can grow, grow it and stop; else shrink old ones within
//                              maxUnavailable; once complete, clean up old revisions;
//   Recreate                 → scale old ReplicaSets to 0; once no old pod runs, create/scale
//                              the new one to spec.replicas.
// Whatever ran, the status follows: counts from the ReplicaSets, Available (minimum
// availability), Progressing (NewReplicaSetAvailable / ReplicaSetUpdated / the progress deadline:
// ProgressDeadlineExceeded), and ReplicaFailure copied from a ReplicaSet.
//
// The new ReplicaSet is named "<deployment>-<hash>" where hash = ComputeHash(template,
// status.collisionCount) and labelled/selected with pod-template-hash=<hash>; rollback is
// kubectl copying an old ReplicaSet's template back, which makes that ReplicaSet the new one again
// with the next revision number (its old one moves to revision-history).
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "controllers/deployment/deployment_util.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::controllers::deployment {

inline const api::GroupVersionKind kDeploymentKind{"apps", "v1", "Deployment"};

struct Snapshot {
  api::ObjectPtr deployment;
  std::vector<api::ObjectPtr> replica_sets;  // owned by the Deployment
  // Recreate only: the pods of each owned ReplicaSet, by ReplicaSet uid.
  std::map<std::string, std::vector<api::ObjectPtr>> pods_by_replica_set;
  util::Clock::WallTime now;
};

struct PlannedEvent {
  std::string type;  // Normal / Warning
  std::string reason;
  std::string message;
  friend bool operator==(const PlannedEvent&, const PlannedEvent&) = default;
};

struct ReplicaSetAction {
  enum class Kind { kCreate, kUpdate, kDelete };
  Kind kind = Kind::kUpdate;
  api::Object object;                // the full object to create or update (from the cached copy)
  std::vector<PlannedEvent> events;  // recorded on the Deployment once this action succeeded
};

struct Plan {
  std::vector<ReplicaSetAction> actions;
  // The Deployment with its new status and annotations, for a /status update; nullopt when
  // neither changed.
  std::optional<api::Object> status_update;
  std::vector<PlannedEvent> events;  // about the Deployment, recorded after the writes
  std::optional<util::Clock::Duration> requeue_after;  // a progress-deadline check
  bool requeue = false;                                // that check is due now (rate limited)
};

Plan Decide(const Snapshot& snapshot);

// The Deployment's status after creating its new ReplicaSet failed: Progressing False
// ReplicaSetCreateError with `message` when it has a progress deadline (nullopt otherwise).
std::optional<api::Object> StatusAfterCreateFailure(const api::Object& deployment,
                                                    const std::string& message,
                                                    util::Clock::WallTime now);
// The Deployment with status.collisionCount incremented (a hash collision on the new
// ReplicaSet's name).
api::Object WithCollisionCountBumped(const api::Object& deployment);

// Go's %q for the plain names used in messages.
std::string Quote(std::string_view s);

}  // namespace converge::controllers::deployment
