// Scheduler: Converge's kube-scheduler. It watches pods and nodes, keeps a queue of the pending
// pods that name it (spec.schedulerName, "default-scheduler" by default) and a cache of what every
// node holds, and places one pod per cycle:
//
//   pop (highest priority, then oldest) → snapshot the cache → filter → score → assume the pod
//   on the chosen node in the cache → bind through pods/binding on a worker thread
//
// A pod that fits nowhere gets a FailedScheduling event and PodScheduled=False/Unschedulable
// with upstream's message ("0/3 nodes are available: 3 Insufficient cpu. preemption: ...") and
// waits in the queue for a cluster event that may help it. If evicting lower-priority pods
// would make room, the scheduler does so (preemption) and nominates the node.
//
// Assumed pods make back-to-back cycles see the resources as taken before the bindings reach the
// API; the pod informer's update (the pod bound) confirms them, a failed binding forgets them.
//
// Informers: one for pods that are not terminal (field selector
// status.phase!=Succeeded,status.phase!=Failed, as upstream: a pod that finishes leaves the
// cache and frees its node), whose handler routes bound pods to the cache and pending ones to
// the queue; one for nodes.
//
// Embedding: the all-in-one server constructs a Scheduler with its in-process RestClient and
// calls Run on a thread of its own. Nothing starts in the constructor.
//
// Run order: (leader election on the kube-system/kube-scheduler Lease, when enabled) → start the
// event recorder, the informers, and wait for their caches and handlers → start the bind workers
// and the queue's flush loop → schedule until stop. Shutdown: close the queue (the cycle in
// progress ends), stop the flush loop, finish the bindings already handed to workers, stop the
// informers, flush the events.
//
// Thread-safety: the On* handlers may be called from any thread (they take the cache's and the
// queue's locks). ScheduleOne is called by one thread at a time. Run is called once.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <random>
#include <stop_token>
#include <string>

#include "client/event_recorder.h"
#include "client/leader_elector.h"
#include "client/rest_client.h"
#include "scheduler/cache.h"
#include "scheduler/metrics.h"
#include "scheduler/schedule_algorithm.h"
#include "scheduler/scheduler_client.h"
#include "scheduler/scheduling_queue.h"
#include "scheduler/snapshot.h"
#include "scheduler/worker_pool.h"
#include "util/clock.h"
#include "util/metrics.h"
#include "util/status.h"

namespace converge::scheduler {

struct SchedulerOptions {
  // The API: informers, bindings, status patches, events, the leader Lease. Not owned. May be
  // null when `api` and `event_sink` are given and only the handlers and ScheduleOne are used.
  client::RestClient* client = nullptr;
  std::string scheduler_name = "default-scheduler";
  util::Clock* clock = &util::RealClock();
  util::Registry* metrics = &util::DefaultRegistry();

  // Upstream percentageOfNodesToScore; 0 = adaptive.
  int percentage_of_nodes_to_score = 0;
  util::Clock::Duration pod_initial_backoff = std::chrono::seconds(1);
  util::Clock::Duration pod_max_backoff = std::chrono::seconds(10);
  util::Clock::Duration max_in_unschedulable = std::chrono::minutes(5);
  // Threads writing bindings and status; 0 = on the scheduling thread (tests).
  int bind_workers = 16;
  // Seed of the tie-break between equally scored nodes; 0 = random.
  uint64_t seed = 0;
  // Page size of the informers' initial lists.
  int64_t list_page_size = 500;

  bool leader_elect = true;
  // --leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period.
  client::LeaderElectionTimings leader_election;
  std::string lease_namespace = "kube-system";
  std::string lease_name = "kube-scheduler";
  std::string identity;  // default: hostname + random suffix

  // Test seams; when null, REST implementations over `client` are used.
  SchedulerClient* api = nullptr;           // not owned
  client::EventSink* event_sink = nullptr;  // not owned
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Runs until `stop` fires or, with leader election, leadership is lost (then the result is
  // client::LeadershipLost; upstream's scheduler exits then). Errors: the informers never synced
  // before stop (kCancelled), a bad configuration.
  util::Status Run(std::stop_token stop);

  // ---- What Run wires together, public so that tests can drive it without informers. ----

  // Pod informer handlers (the informer holds non-terminal pods only).
  void OnPodAdd(const api::ObjectPtr& pod);
  void OnPodUpdate(const api::ObjectPtr& old_pod, const api::ObjectPtr& new_pod);
  // `last` may be null (a tombstone of a pod never seen).
  void OnPodDelete(const api::ObjectKey& key, const api::ObjectPtr& last);
  // Node informer handlers.
  void OnNodeAdd(const api::ObjectPtr& node);
  void OnNodeUpdate(const api::ObjectPtr& old_node, const api::ObjectPtr& new_node);
  void OnNodeDelete(const std::string& name);

  // Pops one pod (blocking until there is one) and runs its scheduling cycle; its binding runs
  // on a bind worker (or inline with bind_workers = 0). Returns false once the queue is closed or
  // `stop` fires.
  bool ScheduleOne(std::stop_token stop);
  // Blocks until every binding and status write handed to the workers is done.
  void WaitForWrites();
  // Runs the queue's periodic flushes until stop (every second: backoff; every 30 s:
  // unschedulable pods left over).
  void RunQueueFlushes(std::stop_token stop);
  // Starts / stops the bind workers (Run does this; tests with bind_workers > 0 too).
  void StartWorkers();
  void StopWorkers();

  SchedulingQueue& queue() { return queue_; }
  Cache& cache() { return cache_; }
  client::EventRecorder& recorder() { return *recorder_; }
  const SchedulerOptions& options() const { return options_; }
  const SchedulerMetrics& metrics() const { return metrics_; }

 private:
  // Runs everything while leading.
  util::Status RunLeading(std::stop_token stop);
  bool Responsible(const PodInfo& pod) const;
  // A scheduling attempt failed: event, requeue, status.
  void HandleFailure(QueuedPodInfo info, int64_t cycle, std::string_view reason,
                     const std::string& message, std::optional<std::string> nominated_node);
  // The binding cycle of an assumed pod.
  void BindingCycle(QueuedPodInfo info, int64_t cycle, std::string node,
                    util::Clock::TimePoint start);
  void Evict(const PodInfo& preemptor, const std::string& node,
             const std::vector<PodInfoPtr>& victims);
  void UpdatePendingGauges();
  size_t Hash(const api::ObjectKey& key) const { return std::hash<api::ObjectKey>{}(key); }

  const SchedulerOptions options_;
  util::Clock* const clock_;
  std::unique_ptr<SchedulerClient> owned_api_;
  SchedulerClient* api_;
  std::unique_ptr<client::EventSink> owned_sink_;
  std::unique_ptr<client::EventRecorder> recorder_;
  SchedulerMetrics metrics_;
  SchedulingQueue queue_;
  Cache cache_;
  WorkerPool workers_;
  util::CollectHook gauges_hook_;

  // Used by the scheduling thread only.
  ScheduleAlgorithm algorithm_;
  Snapshot snapshot_;
};

// Runs a scheduler with `options` until `stop` fires (or, with leader election, leadership is
// lost): what `converge scheduler` and the all-in-one server call. Blocks; call it on a thread of
// its own. `options.client` is required (an HTTP or in-process RestClient; not owned, must outlive
// the call). Errors: as Scheduler::Run.
util::Status Run(SchedulerOptions options, std::stop_token stop);

// Whether two versions of a pending pod differ in more than status and bookkeeping metadata
// (resourceVersion, managedFields, generation): upstream's isPodUpdated.
bool PodSpecChanged(const api::Object& old_pod, const api::Object& new_pod);
// Whether a node update can change scheduling: allocatable, labels, taints, unschedulable or the
// conditions' statuses (heartbeats alone cannot).
bool NodeSchedulingPropertiesChanged(const NodeFacts& old_node, const NodeFacts& new_node);

}  // namespace converge::scheduler
