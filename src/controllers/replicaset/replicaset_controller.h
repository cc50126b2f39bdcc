// The ReplicaSet controller's I/O layer: keeps the pods of each ReplicaSet at spec.replicas and
// reports what it sees in status (upstream's pkg/controller/replicaset).
//
// Sync(key), once per change, level-based:
//   1. read the ReplicaSet from the cache (gone: forget its expectations; done);
//   2. list the namespace's active pods from the cache and claim them (adopt orphans that match
//      the selector, release owned pods that no longer match; controller_ref_manager.h); what
//      this and the status read of each pod comes from a PodFactsCache (pod_facts.h), so a sync
//      touches an unchanged pod's JSON only once, however many syncs see it;
//   3. decide (decide.h) and act: creates go out in slow-start batches under
//      ExpectCreations; deletes go out together under ExpectDeletions(keys); a create or delete
//      that fails is un-expected at once (it will never be observed);
//   4. write status through /status only when it changed (StatusNeedsUpdate); on a Conflict,
//      read the ReplicaSet again and retry once (seed §七: re-read, re-apply, never overwrite
//      blindly) — the status is computed from pods, which the conflict did not change;
//   5. requeue when a ready pod will become available after minReadySeconds.
// Errors (claim, create/delete, status) come back as a ReconcileResult error: the runner retries
// with backoff. Cached objects are never modified: every write starts from a copy.
//
// The informer handlers only resolve owners, record observations in the expectations and
// enqueue keys (STYLE.md): a pod's creation lowers its controller's "adds", its deletion (or the
// deletionTimestamp appearing) its "dels"; an orphan pod wakes every ReplicaSet whose selector
// matches it.
//
// Thread-safety: Sync may run concurrently for different keys (never for the same key: the work
// queue guarantees it); the handlers may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>

#include "client/controller.h"
#include "client/indexer.h"
#include "client/resource_event_handler.h"
#include "client/rest_client.h"
#include "controllers/common/expectations.h"
#include "controllers/common/pod_control.h"
#include "controllers/common/pod_facts.h"
#include "controllers/common/slow_start.h"
#include "controllers/manager/controller_context.h"
#include "util/clock.h"

namespace converge::controllers::replicaset {

inline const api::GroupVersionKind kReplicaSetKind{"apps", "v1", "ReplicaSet"};
inline const api::GroupVersionResource kReplicaSets{"apps", "v1", "replicasets"};
inline const api::GroupVersionResource kPods{"", "v1", "pods"};

struct ReplicaSetControllerOptions {
  client::RestClient* client = nullptr;           // status writes, fresh reads; required
  const client::Indexer* replica_sets = nullptr;  // the ReplicaSet informer's cache; required
  const client::Indexer* pods = nullptr;          // the Pod informer's cache; required
  PodControl* pod_control = nullptr;              // required
  util::Clock* clock = nullptr;                   // nullptr: util::RealClock()
  int burst_replicas = kBurstReplicas;
  // How handlers ask for a sync; set by the runner wiring (NewReplicaSetController).
  std::function<void(const api::ObjectKey&)> enqueue;
  std::function<void(const api::ObjectKey&, util::Clock::Duration)> enqueue_after;
};

class ReplicaSetController {
 public:
  explicit ReplicaSetController(ReplicaSetControllerOptions options);

  client::ReconcileResult Sync(const api::ObjectKey& key, std::stop_token stop = {});

  // Informer handlers.
  void OnReplicaSetAdd(const api::ObjectPtr& rs);
  void OnReplicaSetUpdate(const api::ObjectPtr& old_rs, const api::ObjectPtr& rs);
  void OnReplicaSetDelete(const client::DeletedObject& deleted);
  void OnPodAdd(const api::ObjectPtr& pod);
  void OnPodUpdate(const api::ObjectPtr& old_pod, const api::ObjectPtr& pod);
  void OnPodDelete(const client::DeletedObject& deleted);

  ControllerExpectations& expectations() { return expectations_; }

 private:
  // The ReplicaSet a controller reference names, when it is one and still has that uid.
  api::ObjectPtr ResolveControllerRef(std::string_view ns, const OwnerRef& ref) const;
  // ReplicaSets whose selector matches an orphan pod.
  std::vector<api::ObjectPtr> ReplicaSetsMatching(const api::Object& pod) const;
  void Enqueue(const api::Object& rs);
  // A pod is gone or going: lower its controller's deletion expectations and wake it.
  void PodGone(const api::Object& pod);
  // Pods of every ReplicaSet with the same controller as `rs` (deletion ranking).
  std::vector<api::ObjectPtr> RelatedPods(const api::Object& rs,
                                          const std::vector<api::ObjectPtr>& namespace_pods);
  // Creates or deletes per the plan; the first error, if any. Creates stop being sent once
  // `stop` is requested.
  util::Status Act(const api::Object& rs, const api::ObjectKey& key, int creates,
                   const std::vector<api::ObjectPtr>& deletes, std::stop_token stop);
  util::Status WriteStatus(const api::Object& rs, const boost::json::object& status);

  const ReplicaSetControllerOptions options_;
  util::Clock* const clock_;
  ControllerExpectations expectations_;
  PodFactsCache pod_facts_;  // shared by the syncs of every ReplicaSet
};

// The controller-manager's entry point ("replicaset"): registers the informer handlers and
// returns the runnable controller (RealPodControl, events from "replicaset-controller").
util::StatusOr<std::unique_ptr<RunnableController>> NewReplicaSetController(ControllerContext& ctx);

}  // namespace converge::controllers::replicaset
