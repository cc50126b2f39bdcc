// GarbageCollector: deletes objects whose owners are gone, and carries out the foreground and
// orphan propagation policies (upstream's pkg/controller/garbagecollector).
//
// Pieces (the same as upstream's):
//   - monitors: one informer handler per watched resource (every resource with list, watch and
//     delete, events excepted); their events go, in order, to the graph-changes queue;
//   - the graph thread: applies each change to the OwnerGraph (owner_graph.h) and queues the
//     uids the change concerns on attemptToDelete / attemptToOrphan;
//   - attemptToDelete workers: decide (decide.h) from a *live* read of the item and of each of its
//     owners — the cache may lag, so absence is only ever believed from the API server — and
//     delete the item, drop references, or release a foreground owner;
//   - attemptToOrphan workers: remove the owner's references from its dependents, then the
//     owner's `orphan` finalizer.
//
// Workers start only after every monitor has synced and the graph has taken in the initial lists:
// orphaning from a partial graph would leave dependents behind that later look dangling. Monitor()
// may add resources while running (custom resources): workers pause until the new monitors sync,
// as upstream's resync does.
//
// Thread-safety: HandleEvent and Monitor may be called from any thread; Run once. Lock order:
// workers_mu_ before graph_mu_; no lock is held while calling the API.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "api/resource.h"
#include "client/event_recorder.h"
#include "client/rate_limiting_queue.h"
#include "client/shared_informer_factory.h"
#include "controllers/garbagecollector/absent_owner_cache.h"
#include "controllers/garbagecollector/decide.h"
#include "controllers/garbagecollector/gc_client.h"
#include "controllers/garbagecollector/owner_graph.h"
#include "controllers/garbagecollector/resource_mapper.h"
#include "controllers/manager/controller_context.h"
#include "util/clock.h"
#include "util/metrics.h"

namespace converge::controllers::garbagecollector {

// The resources the collector watches among `all`: list, watch and delete verbs, one version per
// group-resource (the first listed), core and events.k8s.io events excepted (upstream ignores
// them: they are many, short-lived and never owners).
std::vector<api::ResourceInfo> DeletableResources(const std::vector<api::ResourceInfo>& all);

struct GarbageCollectorOptions {
  GcClient* client = nullptr;  // required; not owned
  // Where monitors come from; nullptr: no informers (events arrive through HandleEvent only).
  client::SharedInformerFactory* informers = nullptr;
  client::EventRecorder* recorder = nullptr;  // optional
  util::Clock* clock = nullptr;               // nullptr: util::RealClock()
  util::Registry* metrics = nullptr;          // nullptr: util::DefaultRegistry()
  // Queue names for metrics; empty names record none (tests run several collectors).
  std::string delete_queue_name = "garbage_collector_attempt_to_delete";
  std::string orphan_queue_name = "garbage_collector_attempt_to_orphan";
  int workers = 20;  // upstream's --concurrent-gc-syncs
  size_t absent_owner_cache_size = 500;
};

class GarbageCollector final : public RunnableController {
 public:
  explicit GarbageCollector(GarbageCollectorOptions options);
  ~GarbageCollector() override;
  GarbageCollector(const GarbageCollector&) = delete;
  GarbageCollector& operator=(const GarbageCollector&) = delete;

  // Watches `resources` (already-watched ones are skipped) and maps their kinds. Before Run it
  // only registers handlers; during Run it also starts the new informers and, with the workers
  // paused, waits until they have synced (or `stop`).
  util::Status Monitor(const std::vector<api::ResourceInfo>& resources, std::stop_token stop = {});

  // Queues a change for the graph thread (monitors call this; tests too).
  void HandleEvent(GraphEvent event);

  void Run(std::stop_token stop) override;

  // For tests and debugging.
  bool GraphHasUid(const std::string& uid) const;
  ResourceMapper& mapper() { return mapper_; }

  // Single steps for tests that drive the collector without Run. Each handles one queued item
  // and returns whether there was one.
  bool TEST_ProcessGraphChange();
  bool TEST_ProcessAttemptToDelete();
  bool TEST_ProcessAttemptToOrphan();
  // Starts the delay loops of the two work queues (Run does it otherwise).
  void TEST_StartDelayLoops();
  // Nothing queued anywhere, and nothing waiting for a retry delay.
  bool TEST_Idle() const;
  int TEST_Waiting() const;

 private:
  enum class Outcome { kForget, kRequeue };
  // Why attemptToDelete stopped early without an error worth retrying.
  enum class Early { kNone, kVirtualDeleteQueued, kNamespacedOwnerOfClusterScoped };
  struct ItemResult {
    util::Status status;
    Early early = Early::kNone;
  };

  void ApplyActions(const GraphActions& actions);
  void ProcessGraphChange(const GraphEvent& event);
  bool PopGraphChange(GraphEvent* event, bool block, std::stop_token stop);
  void GraphLoop(std::stop_token stop);
  // Waits until every monitor's handler saw its initial list and the graph took it in.
  bool WaitForGraphSync(std::stop_token stop);

  void DeleteWorker();
  void OrphanWorker();
  Outcome AttemptToDelete(const std::string& uid);
  ItemResult AttemptToDeleteItem(const ItemView& item);
  Outcome AttemptToOrphan(const std::string& uid);

  // Owner lookups: Dangling, or the live owner. kFailedPrecondition with reason
  // kNamespacedOwnerReason for a cluster-scoped item naming a namespaced owner.
  util::StatusOr<OwnerLookup> LookUpOwner(const OwnerReference& ref, const ObjectIdentity& item);
  util::StatusOr<api::Object> GetObject(const ObjectIdentity& id);
  // Applies the patch `make` computes from the live object, re-reading on conflicts.
  util::Status PatchObject(
      const ObjectIdentity& id, const api::Object* latest,
      const std::function<std::optional<std::string>(const api::Object&)>& make);
  util::Status RemoveFinalizer(const ObjectIdentity& id, std::string_view finalizer);
  util::Status DeleteObject(const ObjectIdentity& id, const api::Object& latest,
                            const std::string& policy);
  void EnqueueVirtualDelete(const ObjectIdentity& id);
  void ReportInvalidNamespace(const GraphActions::InvalidNamespaceOwner& bad);

  const GarbageCollectorOptions options_;
  util::Clock* const clock_;
  ResourceMapper mapper_;
  AbsentOwnerCache absent_;
  client::RateLimitingQueue<std::string> attempt_to_delete_;
  client::RateLimitingQueue<std::string> attempt_to_orphan_;

  // Held shared by a worker around each item, exclusively while new monitors sync.
  std::shared_mutex workers_mu_;

  mutable std::mutex graph_mu_;
  OwnerGraph graph_;  // guarded by graph_mu_

  mutable std::mutex changes_mu_;
  std::condition_variable_any changes_cv_;
  std::deque<GraphEvent> changes_;  // guarded by changes_mu_
  uint64_t changes_enqueued_ = 0;   // guarded by changes_mu_
  uint64_t changes_processed_ = 0;  // guarded by changes_mu_
  bool changes_closed_ = false;     // guarded by changes_mu_

  mutable std::mutex monitors_mu_;
  std::set<api::GroupResource> monitored_;                  // guarded by monitors_mu_
  std::vector<client::HandlerRegistration> registrations_;  // guarded by monitors_mu_
  std::atomic<bool> run_started_{false};
  std::atomic<bool> running_{false};  // workers started
};

// The controller-manager's entry point ("garbagecollector").
util::StatusOr<std::unique_ptr<RunnableController>> InitGarbageCollector(ControllerContext& ctx);

}  // namespace converge::controllers::garbagecollector
