// The disruption controller's I/O layer: keeps each PodDisruptionBudget's status (how many of
// its pods are healthy, how many may be disrupted) current, so that pods/eviction can decide
// (upstream's pkg/controller/disruption; the arithmetic is in decide.h).
//
// Sync(key), level-based:
//   1. read the budget from the cache (gone: done);
//   2. list the namespace's pods from the cache that its selector matches;
//   3. decide (decide.h), resolving pods' controllers to their spec.replicas through the
//      ReplicaSet and Deployment caches (a ReplicaSet a Deployment controls counts as the
//      Deployment) or a fresh read of a StatefulSet or ReplicationController;
//   4. write status through /status only when it changed, with the cached resourceVersion: a
//      Conflict is returned as an error and the runner retries from a fresh cache;
//   5. requeue when an entry of status.disruptedPods expires.
// Events on the budget: NoPods, UnmanagedPods, CalculateExpectedPodCountFailed (written with the
// status change they explain, not on every sync); NotDeleted on a pod an eviction listed that
// outlived its deletion timeout.
//
// The informer handlers only enqueue: a budget's own changes, and for a pod every budget in its
// namespace whose selector matches it (before or after the change).
//
// Thread-safety: Sync may run concurrently for different keys (never for the same key); the
// handlers may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>

#include "client/controller.h"
#include "client/event_recorder.h"
#include "client/indexer.h"
#include "client/resource_event_handler.h"
#include "client/rest_client.h"
#include "controllers/disruption/decide.h"
#include "controllers/manager/controller_context.h"
#include "util/clock.h"

namespace converge::controllers::disruption {

inline const api::GroupVersionResource kBudgets{"policy", "v1", "poddisruptionbudgets"};
inline const api::GroupVersionResource kPods{"", "v1", "pods"};
inline const api::GroupVersionResource kReplicaSets{"apps", "v1", "replicasets"};
inline const api::GroupVersionResource kDeployments{"apps", "v1", "deployments"};
inline const api::GroupVersionResource kStatefulSets{"apps", "v1", "statefulsets"};
inline const api::GroupVersionResource kReplicationControllers{"", "v1", "replicationcontrollers"};

struct DisruptionControllerOptions {
  client::RestClient* client = nullptr;           // status writes, StatefulSet/RC reads; required
  const client::Indexer* budgets = nullptr;       // required
  const client::Indexer* pods = nullptr;          // required
  const client::Indexer* replica_sets = nullptr;  // required
  const client::Indexer* deployments = nullptr;   // required
  client::EventRecorder* recorder = nullptr;      // optional
  util::Clock* clock = nullptr;                   // nullptr: util::RealClock()
  std::function<void(const api::ObjectKey&)> enqueue;
};

class DisruptionController {
 public:
  explicit DisruptionController(DisruptionControllerOptions options);

  client::ReconcileResult Sync(const api::ObjectKey& key);

  // Informer handlers.
  void OnBudgetChange(const api::Object& budget);
  void OnPodChange(const api::Object& pod);

  // Resolves a pod's controller reference to its scale (decide.h's ScaleResolver).
  util::StatusOr<std::optional<ControllerScale>> ResolveScale(std::string_view ns,
                                                              const OwnerRef& ref) const;

 private:
  void Event(const api::Object& obj, std::string_view type, std::string_view reason,
             const std::string& message) const;

  const DisruptionControllerOptions options_;
  util::Clock* const clock_;
};

// The controller-manager's entry point ("disruption"): registers the informer handlers and
// returns the runnable controller (events from "controllermanager", as upstream's).
util::StatusOr<std::unique_ptr<RunnableController>> NewDisruptionController(ControllerContext& ctx);

}  // namespace converge::controllers::disruption
