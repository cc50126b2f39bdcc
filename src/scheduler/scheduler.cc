#include "scheduler/scheduler.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <thread>

#include "client/api_errors.h"
#include "client/leader_elector.h"
#include "client/list_watch.h"
#include "client/shared_informer.h"
#include "scheduler/pod_status.h"
#include "scheduler/preemption.h"
#include "util/ids.h"
#include "util/thread_name.h"

namespace converge::scheduler {

namespace json = boost::json;

namespace {

using Seconds = std::chrono::duration<double>;

double SecondsSince(util::Clock::TimePoint start, util::Clock::TimePoint now) {
  return std::chrono::duration_cast<Seconds>(now - start).count();
}

// Queueing hint for a node that appeared or changed: the pod passes every filter on an empty
// version of the node (upstream's per-plugin hints check the same properties: the node's
// allocatable, labels, taints, unschedulable flag and name).
bool NodeMayHelp(const QueuedPodInfo& info, const NodeFactsPtr& node) {
  NodeInfo empty;
  empty.node = node;
  return RunFilters(DefaultFilters(), *info.pod, empty).ok();
}

// Queueing hint for resources freed on some node (a pod deleted or shrunk, an assumed pod
// forgotten): only pods that lacked resources can gain.
bool ResourcesFreedMayHelp(const QueuedPodInfo& info) {
  for (std::string_view p : info.unschedulable_plugins) {
    if (p == kNodeResourcesFit) return true;
  }
  return false;
}

bool RequestsShrank(const Resource& before, const Resource& after) {
  return after.milli_cpu < before.milli_cpu || after.memory < before.memory ||
         after.ephemeral_storage < before.ephemeral_storage || after.scalar != before.scalar;
}

}  // namespace

bool PodSpecChanged(const api::Object& old_pod, const api::Object& new_pod) {
  api::View old_spec = api::Find(old_pod.view(), {"spec"});
  api::View new_spec = api::Find(new_pod.view(), {"spec"});
  if ((old_spec == nullptr) != (new_spec == nullptr)) return true;
  if (old_spec && *old_spec != *new_spec) return true;
  // Metadata without the members every write changes.
  auto counted = [](std::string_view key) {
    return key != "resourceVersion" && key != "managedFields" && key != "generation";
  };
  const api::ObjectView a = old_pod.metadata();
  const api::ObjectView b = new_pod.metadata();
  size_t compared = 0;
  for (const api::Member m : a) {
    if (!counted(m.key())) continue;
    if (!(m.value() == b.if_contains(m.key()))) return true;
    ++compared;
  }
  for (const api::Member m : b) {
    if (counted(m.key())) --compared;
  }
  return compared != 0;
}

bool NodeSchedulingPropertiesChanged(const NodeFacts& a, const NodeFacts& b) {
  return a.unschedulable != b.unschedulable || !(a.allocatable == b.allocatable) ||
         a.labels != b.labels || a.taints != b.taints || a.conditions != b.conditions;
}

Scheduler::Scheduler(SchedulerOptions options)
    : options_(std::move(options)),
      clock_(options_.clock),
      api_(options_.api),
      metrics_(*options_.metrics, options_.scheduler_name),
      queue_({.clock = options_.clock,
              .pod_initial_backoff = options_.pod_initial_backoff,
              .pod_max_backoff = options_.pod_max_backoff,
              .max_in_unschedulable = options_.max_in_unschedulable}),
      workers_(options_.bind_workers),
      algorithm_({.percentage_of_nodes_to_score = options_.percentage_of_nodes_to_score,
                  .seed = options_.seed}) {
  if (!api_) {
    owned_api_ = std::make_unique<RestSchedulerClient>(options_.client);
    api_ = owned_api_.get();
  }
  client::EventSink* sink = options_.event_sink;
  if (!sink) {
    owned_sink_ = std::make_unique<client::RestEventSink>(options_.client);
    sink = owned_sink_.get();
  }
  client::EventRecorderOptions ro;
  ro.source.component = options_.scheduler_name;
  ro.sink = sink;
  ro.clock = clock_;
  recorder_ = std::make_unique<client::EventRecorder>(ro);
  gauges_hook_ = options_.metrics->AddCollectHook([this] {
    QueueCounts c = queue_.Counts();
    metrics_.pending_active->Set(static_cast<double>(c.active));
    metrics_.pending_backoff->Set(static_cast<double>(c.backoff));
    metrics_.pending_unschedulable->Set(static_cast<double>(c.unschedulable));
    metrics_.pending_gated->Set(static_cast<double>(c.gated));
  });
}

Scheduler::~Scheduler() {
  gauges_hook_.Reset();
  queue_.Close();
  workers_.Stop();
}

bool Scheduler::Responsible(const PodInfo& pod) const {
  return pod.scheduler_name == options_.scheduler_name;
}

// ---- Informer handlers ----

void Scheduler::OnPodAdd(const api::ObjectPtr& pod) {
  PodInfoPtr info = NewPodInfo(pod);
  if (info->terminal) return;
  if (!info->node_name.empty()) {
    cache_.AddPod(info);
    queue_.Delete(info->key);
    return;
  }
  if (!Responsible(*info) || cache_.IsAssumed(info->key)) return;
  queue_.Add(std::move(info));
}

void Scheduler::OnPodUpdate(const api::ObjectPtr& old_pod, const api::ObjectPtr& new_pod) {
  PodInfoPtr info = NewPodInfo(new_pod);
  if (info->terminal) {
    // Finished pods free their node (the field selector turns this into a delete upstream).
    OnPodDelete(info->key, new_pod);
    return;
  }
  bool was_assigned = !api::FindString(old_pod->view(), {"spec", "nodeName"}).empty();
  if (!info->node_name.empty()) {
    if (!was_assigned) {
      // Bound: confirms the assumed pod, or records someone else's binding.
      cache_.AddPod(info);
      queue_.Delete(info->key);
      return;
    }
    static const json::object kNoSpec;
    api::ObjectView old_spec = api::FindObject(old_pod->view(), {"spec"});
    Resource before = PodRequests(old_spec ? *old_spec : kNoSpec);
    bool shrank = RequestsShrank(before, info->requests);
    cache_.UpdatePod(std::move(info));
    if (shrank) queue_.MoveAllToActiveOrBackoffQueue(&ResourcesFreedMayHelp);
    return;
  }
  if (!Responsible(*info)) return;
  // Identical objects (a resync) and pods being bound carry nothing to act on.
  if (old_pod->resource_version() == new_pod->resource_version()) return;
  if (cache_.IsAssumed(info->key)) return;
  queue_.Update(std::move(info), PodSpecChanged(*old_pod, *new_pod));
}

void Scheduler::OnPodDelete(const api::ObjectKey& key, const api::ObjectPtr& /*last*/) {
  bool held_resources = cache_.RemovePod(key);
  queue_.Delete(key);
  if (held_resources) queue_.MoveAllToActiveOrBackoffQueue(&ResourcesFreedMayHelp);
}

void Scheduler::OnNodeAdd(const api::ObjectPtr& node) {
  NodeFactsPtr facts = NewNodeFacts(node);
  cache_.AddOrUpdateNode(facts);
  queue_.MoveAllToActiveOrBackoffQueue(
      [&](const QueuedPodInfo& info) { return NodeMayHelp(info, facts); });
}

void Scheduler::OnNodeUpdate(const api::ObjectPtr& old_node, const api::ObjectPtr& new_node) {
  NodeFactsPtr facts = NewNodeFacts(new_node);
  // Heartbeats (status.conditions' times, lease-driven updates) change nothing the filters read:
  // leave the cache, and the snapshot generations, alone.
  if (!NodeSchedulingPropertiesChanged(*NewNodeFacts(old_node), *facts)) return;
  cache_.AddOrUpdateNode(facts);
  queue_.MoveAllToActiveOrBackoffQueue(
      [&](const QueuedPodInfo& info) { return NodeMayHelp(info, facts); });
}

void Scheduler::OnNodeDelete(const std::string& name) {
  cache_.RemoveNode(name);
}

// ---- The scheduling cycle ----

bool Scheduler::ScheduleOne(std::stop_token stop) {
  std::optional<QueuedPodInfo> popped = queue_.Pop(stop);
  if (!popped) return false;
  const int64_t cycle = popped->cycle;
  const PodInfo& pod = *popped->pod;
  // Upstream skipPodSchedule: a pod being deleted, or one already assumed (an update that
  // raced with its binding).
  if (pod.pod->being_deleted() || cache_.IsAssumed(pod.key)) {
    queue_.Done(pod.key);
    return true;
  }
  const util::Clock::TimePoint start = clock_->Now();
  cache_.UpdateSnapshot(&snapshot_);
  if (snapshot_.NumNodes() == 0) {
    metrics_.attempts_unschedulable->Inc();
    metrics_.attempt_duration_unschedulable->Observe(SecondsSince(start, clock_->Now()));
    popped->unschedulable_plugins.clear();
    HandleFailure(std::move(*popped), cycle, kReasonUnschedulable, std::string(kNoNodesAvailable),
                  std::nullopt);
    return true;
  }
  ScheduleResult result = algorithm_.Schedule(pod, snapshot_);
  metrics_.algorithm_duration->Observe(SecondsSince(start, clock_->Now()));
  if (result.suggested_host.empty()) {
    // PostFilter: preemption.
    metrics_.preemption_attempts->Inc();
    PreemptionResult preemption = Preempt(pod, snapshot_, result.diagnosis);
    result.diagnosis.post_filter_message = preemption.message;
    std::optional<std::string> nominated;
    if (!preemption.nominated_node.empty()) {
      nominated = preemption.nominated_node;
      metrics_.preemption_victims->Observe(static_cast<double>(preemption.victims.size()));
      Evict(pod, preemption.nominated_node, preemption.victims);
    }
    std::string message = FitErrorMessage(snapshot_.NumNodes(), result.diagnosis);
    popped->unschedulable_plugins = std::move(result.diagnosis.unschedulable_plugins);
    metrics_.attempts_unschedulable->Inc();
    metrics_.attempt_duration_unschedulable->Observe(SecondsSince(start, clock_->Now()));
    HandleFailure(std::move(*popped), cycle, kReasonUnschedulable, message, std::move(nominated));
    return true;
  }
  if (util::Status s = cache_.AssumePod(popped->pod, result.suggested_host); !s.ok()) {
    metrics_.attempts_error->Inc();
    metrics_.attempt_duration_error->Observe(SecondsSince(start, clock_->Now()));
    HandleFailure(std::move(*popped), cycle, kReasonSchedulerError, s.message(), std::nullopt);
    return true;
  }
  size_t hash = Hash(pod.key);
  workers_.Submit(
      hash, [this, info = std::move(*popped), cycle, node = result.suggested_host,
             start]() mutable { BindingCycle(std::move(info), cycle, std::move(node), start); });
  return true;
}

void Scheduler::BindingCycle(QueuedPodInfo info, int64_t cycle, std::string node,
                             util::Clock::TimePoint start) {
  const PodInfo& pod = *info.pod;
  const util::Clock::TimePoint bind_start = clock_->Now();
  util::Status s = api_->Bind(pod, node);
  const util::Clock::TimePoint now = clock_->Now();
  if (s.ok()) {
    metrics_.bind_duration_success->Observe(SecondsSince(bind_start, now));
    metrics_.attempts_scheduled->Inc();
    metrics_.attempt_duration_scheduled->Observe(SecondsSince(start, now));
    metrics_.pod_scheduling_attempts->Observe(info.attempts);
    if (info.initial_attempt) {
      std::string attempts = std::to_string(std::min(info.attempts, 15));
      metrics_.sli_duration->WithLabelValues({attempts})
          .Observe(SecondsSince(*info.initial_attempt, now));
    }
    recorder_->Event(*pod.pod, client::kEventTypeNormal, "Scheduled",
                     TruncateMessage("Successfully assigned " + pod.key.ns + "/" + pod.key.name +
                                     " to " + node));
    queue_.Done(pod.key);
    return;
  }
  metrics_.bind_duration_error->Observe(SecondsSince(bind_start, now));
  metrics_.attempts_error->Inc();
  metrics_.attempt_duration_error->Observe(SecondsSince(start, now));
  // The assumed pod's resources are free again.
  cache_.ForgetPod(pod.key);
  queue_.MoveAllToActiveOrBackoffQueue(&ResourcesFreedMayHelp);
  if (client::IsNotFound(s)) {
    queue_.Done(pod.key);  // the pod is gone
    return;
  }
  spdlog::warn("scheduler: binding {} to {}: {}", pod.key.ToString(), node, s.ToString());
  info.unschedulable_plugins.clear();
  HandleFailure(std::move(info), cycle, kReasonSchedulerError, s.message(), std::nullopt);
}

void Scheduler::HandleFailure(QueuedPodInfo info, int64_t cycle, std::string_view reason,
                              const std::string& message,
                              std::optional<std::string> nominated_node) {
  PodInfoPtr pod = info.pod;
  recorder_->Event(*pod->pod, client::kEventTypeWarning, "FailedScheduling",
                   TruncateMessage(message));
  queue_.AddUnschedulableIfNotPresent(std::move(info), cycle, reason != kReasonUnschedulable);
  workers_.Submit(Hash(pod->key), [this, pod, reason = std::string(reason), message,
                                   nominated = std::move(nominated_node)] {
    std::optional<std::string> patch =
        PodScheduledFalsePatch(*pod->pod, reason, message, nominated, clock_->WallNow());
    if (!patch) return;
    util::Status s = api_->PatchPodStatus(*pod, *patch);
    if (!s.ok() && !client::IsNotFound(s)) {
      spdlog::warn("scheduler: updating the status of {}: {}", pod->key.ToString(), s.ToString());
    }
  });
}

void Scheduler::Evict(const PodInfo& preemptor, const std::string& node,
                      const std::vector<PodInfoPtr>& victims) {
  std::string message =
      std::string(preemptor.scheduler_name) + ": preempting to accommodate a higher priority pod";
  std::string event = "Preempted by pod " + std::string(preemptor.uid) + " on node " + node;
  for (const PodInfoPtr& v : victims) {
    workers_.Submit(Hash(v->key), [this, v, message, event] {
      util::Status s = api_->EvictVictim(*v, message);
      if (!s.ok()) {
        spdlog::warn("scheduler: preempting {}: {}", v->key.ToString(), s.ToString());
        return;
      }
      recorder_->Event(*v->pod, client::kEventTypeNormal, "Preempted", event);
    });
  }
}

void Scheduler::WaitForWrites() {
  workers_.WaitIdle();
}

void Scheduler::StartWorkers() {
  workers_.Start();
}

void Scheduler::StopWorkers() {
  workers_.Stop();
}

void Scheduler::RunQueueFlushes(std::stop_token stop) {
  // Upstream: backoffQ every second, leftover unschedulable pods every 30 seconds.
  constexpr auto kBackoffPeriod = std::chrono::seconds(1);
  constexpr int kUnschedulableEvery = 30;
  std::mutex mu;
  std::condition_variable_any cv;
  std::stop_callback wake(stop, [&] {
    std::lock_guard lock(mu);
    cv.notify_all();
  });
  int ticks = 0;
  util::Clock::TimePoint next = clock_->Now() + kBackoffPeriod;
  std::unique_lock lock(mu);
  while (!stop.stop_requested()) {
    if (clock_->Now() < next) {
      clock_->WaitUntil(cv, lock, next);
      continue;
    }
    next += kBackoffPeriod;
    lock.unlock();
    queue_.FlushBackoffQCompleted();
    if (++ticks % kUnschedulableEvery == 0) queue_.FlushUnschedulablePodsLeftover();
    lock.lock();
  }
}

// ---- Run ----

util::Status Scheduler::RunLeading(std::stop_token stop) {
  if (!options_.client) return util::InvalidArgument("the scheduler needs a RestClient to run");
  util::SetThreadName("sched-loop");  // the scheduling loop runs on this thread
  std::jthread recorder_thread([this](std::stop_token st) { recorder_->Run(st); });

  client::SharedInformerOptions po;
  po.name = "scheduler-pods";
  po.lister_watcher = std::make_unique<client::ListWatch>(
      client::ListWatchOptions{.client = options_.client,
                               .gvr = {"", "v1", "pods"},
                               .field_selector = "status.phase!=Succeeded,status.phase!=Failed"});
  po.clock = clock_;
  po.reflector.page_size = options_.list_page_size;
  po.reflector.drop_managed_fields = true;  // as upstream's kube-scheduler
  po.reflector.compact_objects = true;
  client::SharedInformer pods(std::move(po));
  client::SharedInformerOptions no;
  no.name = "scheduler-nodes";
  no.lister_watcher = std::make_unique<client::ListWatch>(
      client::ListWatchOptions{.client = options_.client, .gvr = {"", "v1", "nodes"}});
  no.clock = clock_;
  no.reflector.page_size = options_.list_page_size;
  no.reflector.drop_managed_fields = true;
  no.reflector.compact_objects = true;
  client::SharedInformer nodes(std::move(no));

  auto pod_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
  pod_handler->add = [this](const api::ObjectPtr& o, bool) { OnPodAdd(o); };
  pod_handler->update = [this](const api::ObjectPtr& a, const api::ObjectPtr& b) {
    OnPodUpdate(a, b);
  };
  pod_handler->del = [this](const client::DeletedObject& d) { OnPodDelete(d.key, d.object); };
  auto node_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
  node_handler->add = [this](const api::ObjectPtr& o, bool) { OnNodeAdd(o); };
  node_handler->update = [this](const api::ObjectPtr& a, const api::ObjectPtr& b) {
    OnNodeUpdate(a, b);
  };
  node_handler->del = [this](const client::DeletedObject& d) { OnNodeDelete(d.key.name); };
  // The handlers update the cache and the queue under their own short locks: called inline on
  // the informers' threads.
  auto pod_reg = pods.AddEventHandler(pod_handler, {.inline_delivery = true});
  auto node_reg = nodes.AddEventHandler(node_handler, {.inline_delivery = true});
  if (!pod_reg.ok()) return pod_reg.status();
  if (!node_reg.ok()) return node_reg.status();

  std::stop_source informers_stop;
  std::stop_callback forward(stop, [&] { informers_stop.request_stop(); });
  std::jthread pods_thread([&] { pods.Run(informers_stop.get_token()); });
  std::jthread nodes_thread([&] { nodes.Run(informers_stop.get_token()); });
  auto shutdown_informers = [&] {
    informers_stop.request_stop();
    pods_thread.join();
    nodes_thread.join();
  };
  bool synced = client::WaitForCacheSync(stop, {&pods, &nodes});
  // The handlers must have applied the initial lists too: scheduling on a half-filled cache
  // would overcommit nodes.
  while (synced && !(pod_reg->HasSynced() && node_reg->HasSynced())) {
    if (stop.stop_requested()) {
      synced = false;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!synced) {
    shutdown_informers();
    return util::Cancelled("stopped before the scheduler's caches synced");
  }
  spdlog::info("scheduler: {} caches synced ({} nodes, {} pods pending)", options_.scheduler_name,
               cache_.NumNodes(), queue_.Counts().active);

  StartWorkers();
  std::jthread flusher([this](std::stop_token st) {
    util::SetThreadName("sched-flush");
    RunQueueFlushes(st);
  });
  while (!stop.stop_requested() && ScheduleOne(stop)) {
  }
  // Shutdown order: no new cycles; stop the flushes; finish the bindings handed out; stop the
  // informers; write the events.
  queue_.Close();
  flusher.request_stop();
  flusher.join();
  StopWorkers();
  shutdown_informers();
  // The recorder's thread ends first (joined), then what is still queued is written here.
  recorder_thread.request_stop();
  recorder_thread.join();
  recorder_->Flush();
  return util::Status();
}

util::Status Scheduler::Run(std::stop_token stop) {
  if (!options_.leader_elect) return RunLeading(stop);
  if (!options_.client) return util::InvalidArgument("leader election needs a RestClient");
  std::string identity = options_.identity;
  if (identity.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    identity = std::string(host) + "_" + util::NewUuid();
  }
  client::LeaseLockOptions lo;
  lo.client = options_.client;
  lo.lease = {options_.lease_namespace, options_.lease_name};
  lo.identity = identity;
  client::LeaseLock lock(lo);
  util::Status result;
  client::LeaderElectionConfig cfg;
  cfg.lock = &lock;
  cfg.lease_duration = options_.leader_election.lease_duration;
  cfg.renew_deadline = options_.leader_election.renew_deadline;
  cfg.retry_period = options_.leader_election.retry_period;
  cfg.clock = clock_;
  cfg.on_started_leading = [&](std::stop_token leading) {
    spdlog::info("scheduler: {} is the leader", identity);
    result = RunLeading(leading);
  };
  cfg.on_stopped_leading = [&] { spdlog::info("scheduler: {} stopped leading", identity); };
  auto elector = client::LeaderElector::New(std::move(cfg));
  if (!elector.ok()) return elector.status();
  (*elector)->Run(stop);
  if (!stop.stop_requested()) return client::LeadershipLost();
  return result;
}

util::Status Run(SchedulerOptions options, std::stop_token stop) {
  if (!options.client) return util::InvalidArgument("the scheduler needs a RestClient to run");
  Scheduler scheduler(std::move(options));
  return scheduler.Run(stop);
}

}  // namespace converge::scheduler
