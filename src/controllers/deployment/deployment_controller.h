// The Deployment controller's I/O layer (upstream's pkg/controller/deployment): reads caches,
// claims ReplicaSets, runs the pure Decide (decide.h) and carries the plan out.
//
// Sync(key):
//   1. the Deployment from the cache (gone: done);
//   2. every ReplicaSet of its namespace, claimed: orphans matching the selector are adopted,
//      owned ones that stopped matching are released (controller_ref_manager.h); for Recreate,
//      the pods of the owned ReplicaSets;
//   3. Decide, then act in the plan's order, stopping at the first failure (the runner retries
//      with backoff; the next sync decides again from the caches):
//        create  → AlreadyExists: ours (it is just not in the cache yet) → retry; someone
//                  else's name (a hash collision) → status.collisionCount+1 so that the next
//                  name differs. Any other failure → Progressing False ReplicaSetCreateError
//                  and a Warning event.
//        update  → a Conflict means the cache was stale: retry (seed §七).
//        delete  → NotFound is fine.
//      Then the status (and revision annotation) through /status, and the events of each
//      action that succeeded ("Scaled up replica set web-7c5d8 from 0 to 1").
//   4. requeue for the progress-deadline check when the plan asks.
// Cached objects are never modified; writes start from the plan's copies.
//
// Handlers enqueue the owning Deployment of a ReplicaSet (or, for an orphan, every Deployment
// whose selector matches it), and of a deleted pod when the Deployment uses Recreate (it waits
// for old pods to be gone).
//
// Thread-safety: Sync runs concurrently for different keys; handlers from any thread.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>

#include "client/controller.h"
#include "client/event_recorder.h"
#include "client/indexer.h"
#include "client/resource_event_handler.h"
#include "client/rest_client.h"
#include "controllers/common/owner_refs.h"
#include "controllers/manager/controller_context.h"
#include "util/clock.h"

namespace converge::controllers::deployment {

inline const api::GroupVersionResource kDeployments{"apps", "v1", "deployments"};
inline const api::GroupVersionResource kReplicaSets{"apps", "v1", "replicasets"};
inline const api::GroupVersionResource kPods{"", "v1", "pods"};

struct DeploymentControllerOptions {
  client::RestClient* client = nullptr;           // required
  const client::Indexer* deployments = nullptr;   // required
  const client::Indexer* replica_sets = nullptr;  // required
  const client::Indexer* pods = nullptr;          // required
  client::EventRecorder* recorder = nullptr;      // required
  util::Clock* clock = nullptr;                   // nullptr: util::RealClock()
  std::function<void(const api::ObjectKey&)> enqueue;
};

class DeploymentController {
 public:
  explicit DeploymentController(DeploymentControllerOptions options);

  client::ReconcileResult Sync(const api::ObjectKey& key, std::stop_token stop = {});

  void OnDeployment(const api::ObjectPtr& d);
  void OnDeploymentDelete(const client::DeletedObject& deleted);
  void OnReplicaSetAdd(const api::ObjectPtr& rs);
  void OnReplicaSetUpdate(const api::ObjectPtr& old_rs, const api::ObjectPtr& rs);
  void OnReplicaSetDelete(const client::DeletedObject& deleted);
  void OnPodDelete(const client::DeletedObject& deleted);

 private:
  api::ObjectPtr ResolveControllerRef(std::string_view ns, const OwnerRef& ref) const;
  std::vector<api::ObjectPtr> DeploymentsMatching(const api::Object& rs) const;
  void Enqueue(const api::Object& d);

  const DeploymentControllerOptions options_;
  util::Clock* const clock_;
};

// The controller-manager's entry point ("deployment"); events from "deployment-controller".
util::StatusOr<std::unique_ptr<RunnableController>> NewDeploymentController(ControllerContext& ctx);

}  // namespace converge::controllers::deployment
