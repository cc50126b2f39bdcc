#include "controllers/garbagecollector/garbage_collector.h"

#include <spdlog/spdlog.h>

#include <map>
#include <thread>

#include "api/builtin_resources.h"
#include "client/api_errors.h"
#include "client/resource_event_handler.h"
#include "controllers/discovery/server_resources.h"
#include "util/thread_name.h"

namespace converge::controllers::garbagecollector {

namespace {

constexpr std::string_view kNamespacedOwnerReason = "NamespacedOwnerOfClusterScopedObject";
// Read-modify-write attempts on a conflict before the item is retried from the queue (client-go's
// retry.DefaultBackoff has 5 steps).
constexpr int kConflictRetries = 5;
// How often Run re-checks that the monitors' handlers have seen their initial lists.
constexpr auto kSyncPollInterval = std::chrono::milliseconds(20);

client::QueueOptions QueueOpts(const std::string& name, util::Clock* clock,
                               util::Registry* metrics) {
  return {.name = name, .clock = clock, .registry = metrics};
}

}  // namespace

std::vector<api::ResourceInfo> DeletableResources(const std::vector<api::ResourceInfo>& all) {
  std::vector<api::ResourceInfo> out;
  std::set<api::GroupResource> seen;
  for (const api::ResourceInfo& r : all) {
    if (!r.HasVerb("list") || !r.HasVerb("watch") || !r.HasVerb("delete")) continue;
    if (r.gvr.resource == "events" && (r.gvr.group.empty() || r.gvr.group == "events.k8s.io")) {
      continue;
    }
    if (!seen.insert(r.gvr.Gr()).second) continue;
    out.push_back(r);
  }
  return out;
}

GarbageCollector::GarbageCollector(GarbageCollectorOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()),
      absent_(options_.absent_owner_cache_size),
      attempt_to_delete_(QueueOpts(options_.delete_queue_name, clock_, options_.metrics)),
      attempt_to_orphan_(QueueOpts(options_.orphan_queue_name, clock_, options_.metrics)) {}

GarbageCollector::~GarbageCollector() {
  attempt_to_delete_.ShutDown();
  attempt_to_orphan_.ShutDown();
}

util::Status GarbageCollector::Monitor(const std::vector<api::ResourceInfo>& resources,
                                       std::stop_token stop) {
  std::vector<const client::SharedInformer*> added;
  {
    std::lock_guard lock(monitors_mu_);
    for (const api::ResourceInfo& r : resources) {
      mapper_.Add(r.gvr, r.kind, r.namespaced);
      if (!monitored_.insert(r.gvr.Gr()).second) continue;
      if (options_.informers == nullptr) continue;
      client::SharedInformer& informer = options_.informers->InformerFor(r.gvr);
      auto handler = std::make_shared<client::ResourceEventHandlerFuncs>();
      std::string api_version = r.gvr.Gv().ApiVersion();
      std::string kind = r.kind;
      handler->add = [this, api_version, kind](const api::ObjectPtr& obj, bool) {
        HandleEvent({.type = GraphEventType::kAdd,
                     .object = obj,
                     .api_version = api_version,
                     .kind = kind});
      };
      handler->update = [this, api_version, kind](const api::ObjectPtr& old_obj,
                                                  const api::ObjectPtr& obj) {
        HandleEvent({.type = GraphEventType::kUpdate,
                     .object = obj,
                     .old_object = old_obj,
                     .api_version = api_version,
                     .kind = kind});
      };
      handler->del = [this, api_version, kind](const client::DeletedObject& d) {
        if (d.object == nullptr) return;  // a tombstone of an object never seen: nothing to undo
        HandleEvent({.type = GraphEventType::kDelete,
                     .object = d.object,
                     .api_version = api_version,
                     .kind = kind});
      };
      // HandleEvent only queues the change for the graph's thread: called inline.
      auto reg = informer.AddEventHandler(handler, {.inline_delivery = true});
      if (!reg.ok()) return reg.status().WithContext("monitoring " + r.gvr.Gr().ToString());
      registrations_.push_back(*reg);
      added.push_back(&informer);
    }
  }
  // Before Run, whoever owns the informer factory starts it (the controller-manager does, after
  // every controller's Init).
  if (added.empty() || options_.informers == nullptr || !run_started_.load()) {
    return util::Status();
  }
  options_.informers->Start(stop);
  if (!running_.load()) return util::Status();  // Run's initial sync waits for them too
  // A resync while running: pause the workers until the new monitors have synced, so that no
  // decision is made from a graph missing the new resources' objects.
  std::unique_lock pause(workers_mu_);
  if (!WaitForGraphSync(stop)) return util::Cancelled("stopped before the new monitors synced");
  return util::Status();
}

void GarbageCollector::HandleEvent(GraphEvent event) {
  {
    std::lock_guard lock(changes_mu_);
    if (changes_closed_) return;
    changes_.push_back(std::move(event));
    ++changes_enqueued_;
  }
  changes_cv_.notify_all();
}

bool GarbageCollector::PopGraphChange(GraphEvent* event, bool block, std::stop_token stop) {
  std::unique_lock lock(changes_mu_);
  if (block) {
    changes_cv_.wait(lock, stop, [this] { return !changes_.empty() || changes_closed_; });
  }
  if (changes_.empty()) return false;
  *event = std::move(changes_.front());
  changes_.pop_front();
  return true;
}

void GarbageCollector::ProcessGraphChange(const GraphEvent& event) {
  GraphActions actions;
  {
    std::lock_guard lock(graph_mu_);
    actions = graph_.Process(event);
  }
  ApplyActions(actions);
  {
    std::lock_guard lock(changes_mu_);
    ++changes_processed_;
  }
  changes_cv_.notify_all();
}

void GarbageCollector::ApplyActions(const GraphActions& a) {
  for (const ObjectIdentity& id : a.absent) absent_.Add(id);
  for (const std::string& uid : a.attempt_to_delete) attempt_to_delete_.Add(uid);
  for (const std::string& uid : a.attempt_to_delete_rate_limited) {
    attempt_to_delete_.AddRateLimited(uid);
  }
  for (const std::string& uid : a.attempt_to_orphan) attempt_to_orphan_.Add(uid);
  for (const auto& bad : a.invalid_namespace) ReportInvalidNamespace(bad);
}

void GarbageCollector::ReportInvalidNamespace(const GraphActions::InvalidNamespaceOwner& bad) {
  ObjectIdentity owner = IdentityOfReference(bad.owner, bad.dependent.ns);
  spdlog::info("garbage collector: {} references owner {}, which is not in its namespace",
               bad.dependent.ToString(), owner.ToString());
  if (options_.recorder == nullptr) return;
  client::ObjectReference ref;
  ref.api_version = bad.dependent.api_version;
  ref.kind = bad.dependent.kind;
  ref.ns = bad.dependent.ns;
  ref.name = bad.dependent.name;
  ref.uid = bad.dependent.uid;
  options_.recorder->Event(
      ref, client::kEventTypeWarning, "OwnerRefInvalidNamespace",
      "ownerRef " + owner.ToString() + " does not exist in namespace \"" + bad.dependent.ns + "\"");
}

void GarbageCollector::GraphLoop(std::stop_token stop) {
  GraphEvent event;
  while (!stop.stop_requested() && PopGraphChange(&event, /*block=*/true, stop)) {
    ProcessGraphChange(event);
  }
}

bool GarbageCollector::WaitForGraphSync(std::stop_token stop) {
  while (!stop.stop_requested()) {
    bool synced = true;
    {
      std::lock_guard lock(monitors_mu_);
      for (const client::HandlerRegistration& r : registrations_) synced &= r.HasSynced();
    }
    if (synced) break;
    std::this_thread::sleep_for(kSyncPollInterval);
  }
  if (stop.stop_requested()) return false;
  // Every initial event is queued now; wait until the graph has taken them in.
  std::unique_lock lock(changes_mu_);
  const uint64_t target = changes_enqueued_;
  return changes_cv_.wait(lock, stop, [&] { return changes_processed_ >= target; });
}

void GarbageCollector::Run(std::stop_token stop) {
  run_started_.store(true);
  std::jthread graph([this](std::stop_token s) {
    util::SetThreadName("gc-graph");
    GraphLoop(s);
  });
  std::stop_callback stop_graph(stop, [&graph] { graph.request_stop(); });
  {
    // Workers wait for a complete graph (see the header).
    std::unique_lock pause(workers_mu_);
    if (!WaitForGraphSync(stop)) return;
    running_.store(true);
  }
  spdlog::info("garbage collector: graph synced; starting {} workers", options_.workers);
  attempt_to_delete_.Start();
  attempt_to_orphan_.Start();
  std::vector<std::jthread> workers;
  for (int i = 0; i < options_.workers; ++i) {
    workers.emplace_back([this] {
      util::SetThreadName("gc-delete");
      DeleteWorker();
    });
    workers.emplace_back([this] {
      util::SetThreadName("gc-orphan");
      OrphanWorker();
    });
  }
  // Shutdown order: the queues (workers finish their item and return), the workers, then the
  // graph thread (stopped by `stop` through the callback above).
  std::mutex wait_mu;
  std::condition_variable_any wait_cv;
  std::unique_lock wait_lock(wait_mu);
  wait_cv.wait(wait_lock, stop, [] { return false; });
  attempt_to_delete_.ShutDown();
  attempt_to_orphan_.ShutDown();
  workers.clear();
  {
    std::lock_guard lock(changes_mu_);
    changes_closed_ = true;
  }
  changes_cv_.notify_all();
  running_.store(false);
}

void GarbageCollector::DeleteWorker() {
  while (std::optional<std::string> uid = attempt_to_delete_.Get()) {
    Outcome o;
    {
      std::shared_lock running(workers_mu_);
      o = AttemptToDelete(*uid);
    }
    if (o == Outcome::kForget) {
      attempt_to_delete_.Forget(*uid);
    } else {
      attempt_to_delete_.AddRateLimited(*uid);
    }
    attempt_to_delete_.Done(*uid);
  }
}

void GarbageCollector::OrphanWorker() {
  while (std::optional<std::string> uid = attempt_to_orphan_.Get()) {
    Outcome o;
    {
      std::shared_lock running(workers_mu_);
      o = AttemptToOrphan(*uid);
    }
    if (o == Outcome::kForget) {
      attempt_to_orphan_.Forget(*uid);
    } else {
      attempt_to_orphan_.AddRateLimited(*uid);
    }
    attempt_to_orphan_.Done(*uid);
  }
}

GarbageCollector::Outcome GarbageCollector::AttemptToDelete(const std::string& uid) {
  std::optional<ItemView> item;
  {
    std::lock_guard lock(graph_mu_);
    item = ViewOf(graph_, uid);
  }
  if (!item) return Outcome::kForget;  // gone from the graph meanwhile
  ItemResult r = AttemptToDeleteItem(*item);
  if (r.early != Early::kNone) return Outcome::kForget;
  if (!r.status.ok()) {
    spdlog::debug("garbage collector: syncing {}: {}", item->identity.ToString(),
                  r.status.ToString());
    return Outcome::kRequeue;
  }
  // A virtual node that exists must be re-checked until an informer observes it; otherwise an
  // object added and removed while a watch was down could stay in the graph forever.
  if (!item->observed) return Outcome::kRequeue;
  return Outcome::kForget;
}

util::StatusOr<api::Object> GarbageCollector::GetObject(const ObjectIdentity& id) {
  CONVERGE_ASSIGN_OR_RETURN(ResourceMapping m, mapper_.Resolve(id.api_version, id.kind));
  if (m.namespaced && id.ns.empty()) {
    // A virtual node of a namespaced kind seen only from cluster-scoped dependents: there is no
    // namespace to look in, and its absence must not be recorded (the dependents' references
    // are invalid, not dangling).
    return util::FailedPrecondition("cluster-scoped objects cannot refer to namespaced owners (" +
                                    id.ToString() + ")")
        .WithReason(std::string(kNamespacedOwnerReason));
  }
  return options_.client->Get(m.gvr, {m.namespaced ? id.ns : "", id.name});
}

void GarbageCollector::EnqueueVirtualDelete(const ObjectIdentity& id) {
  HandleEvent({.type = GraphEventType::kDelete, .is_virtual = true, .virtual_identity = id});
}

GarbageCollector::ItemResult GarbageCollector::AttemptToDeleteItem(const ItemView& item) {
  // Being deleted is a one-way trip; its dependents are handled when the deletion is observed.
  if (item.being_deleted && !item.deleting_dependents) return {};
  auto latest = GetObject(item.identity);
  if (!latest.ok() && latest.status().reason() == kNamespacedOwnerReason) {
    return {.early = Early::kNamespacedOwnerOfClusterScoped};
  }
  if (!latest.ok() && client::IsNotFound(latest.status())) {
    // A virtual node for an owner that does not exist (or an object deleted meanwhile): a
    // virtual delete event takes it out of the graph and queues its dependents.
    EnqueueVirtualDelete(item.identity);
    return {.early = Early::kVirtualDeleteQueued};
  }
  if (!latest.ok()) return {.status = latest.status()};
  if (latest->uid() != item.identity.uid) {
    EnqueueVirtualDelete(item.identity);
    return {.early = Early::kVirtualDeleteQueued};
  }

  if (item.deleting_dependents) {
    DeletingDependentsDecision d = DecideDeletingDependents(item);
    if (d.remove_finalizer) {
      return {.status = RemoveFinalizer(item.identity, kForegroundFinalizer)};
    }
    for (const std::string& dep : d.enqueue) attempt_to_delete_.Add(dep);
    return {};
  }

  std::vector<OwnerReference> refs = OwnerReferencesOf(*latest);
  if (refs.empty()) return {};
  std::vector<ClassifiedOwner> owners;
  for (const OwnerReference& ref : refs) {
    auto lookup = LookUpOwner(ref, item.identity);
    if (!lookup.ok()) {
      if (lookup.status().reason() == kNamespacedOwnerReason) {
        // Will not resolve by retrying.
        return {.early = Early::kNamespacedOwnerOfClusterScoped};
      }
      return {.status = lookup.status()};
    }
    owners.push_back({ref, ClassifyOwner(ref, *lookup)});
  }
  ItemDecision d = DecideItem(item, *latest, owners);
  switch (d.action) {
    case ItemDecision::Action::kNone: return {};
    case ItemDecision::Action::kRemoveOwnerReferences: {
      spdlog::debug("garbage collector: removing dangling/waiting references from {}",
                    item.identity.ToString());
      std::vector<std::string> uids = d.remove_owner_uids;
      util::Status s = PatchObject(item.identity, &*latest, [&uids](const api::Object& o) {
        return RemoveOwnerReferencesPatch(o, uids);
      });
      if (client::IsNotFound(s)) return {};
      return {.status = s};
    }
    case ItemDecision::Action::kDelete: {
      api::Object current = *latest;
      if (d.unblock_owner_references) {
        util::Status s = PatchObject(item.identity, &current, UnblockOwnerReferencesPatch);
        if (!s.ok()) return {.status = s};
        auto reread = GetObject(item.identity);
        if (!reread.ok()) return {.status = reread.status()};
        current = std::move(*reread);
      }
      spdlog::debug("garbage collector: deleting {} ({})", item.identity.ToString(),
                    d.propagation_policy);
      util::Status s = DeleteObject(item.identity, current, d.propagation_policy);
      if (client::IsNotFound(s)) {
        EnqueueVirtualDelete(item.identity);
        return {.early = Early::kVirtualDeleteQueued};
      }
      return {.status = s};
    }
  }
  return {};
}

util::StatusOr<OwnerLookup> GarbageCollector::LookUpOwner(const OwnerReference& ref,
                                                          const ObjectIdentity& item) {
  ObjectIdentity key = IdentityOfReference(ref, "");
  if (absent_.Has(key)) return OwnerLookup::Absent();  // known-absent cluster-scoped owner
  key.ns = item.ns;
  if (absent_.Has(key)) return OwnerLookup::Absent();  // known-absent namespaced owner
  CONVERGE_ASSIGN_OR_RETURN(ResourceMapping m, mapper_.Resolve(ref.api_version, ref.kind));
  if (!m.namespaced) key.ns.clear();
  if (item.ns.empty() && m.namespaced) {
    return util::FailedPrecondition("cluster-scoped " + item.ToString() +
                                    " refers to a namespaced owner " + key.ToString())
        .WithReason(std::string(kNamespacedOwnerReason));
  }
  auto owner = options_.client->Get(m.gvr, {m.namespaced ? item.ns : "", ref.name});
  if (!owner.ok()) {
    if (client::IsNotFound(owner.status())) {
      absent_.Add(key);
      return OwnerLookup::Absent();
    }
    return owner.status();
  }
  if (owner->uid() != ref.uid) {
    absent_.Add(key);  // a namesake with another uid: the owner itself is gone
    return OwnerLookup::Absent();
  }
  return OwnerLookup::Of(*owner);
}

util::Status GarbageCollector::PatchObject(
    const ObjectIdentity& id, const api::Object* latest,
    const std::function<std::optional<std::string>(const api::Object&)>& make) {
  CONVERGE_ASSIGN_OR_RETURN(ResourceMapping m, mapper_.Resolve(id.api_version, id.kind));
  const api::ObjectKey key{m.namespaced ? id.ns : "", id.name};
  std::optional<api::Object> current;
  if (latest != nullptr) current = *latest;
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    if (!current) {
      auto got = options_.client->Get(m.gvr, key);
      if (!got.ok()) return got.status();
      current = std::move(*got);
    }
    if (current->uid() != id.uid) return util::NotFound(id.ToString() + " was replaced");
    std::optional<std::string> patch = make(*current);
    if (!patch) return util::Status();
    auto r = options_.client->MergePatch(m.gvr, key, *patch);
    if (r.ok()) return util::Status();
    if (!client::IsConflict(r.status())) return r.status();
    current.reset();  // re-read and recompute
  }
  return util::Aborted("patching " + id.ToString() + ": too many conflicts; will retry");
}

util::Status GarbageCollector::RemoveFinalizer(const ObjectIdentity& id,
                                               std::string_view finalizer) {
  util::Status s = PatchObject(id, nullptr, [finalizer](const api::Object& o) {
    return RemoveFinalizerPatch(o, finalizer);
  });
  if (client::IsNotFound(s)) return util::Status();
  return s;
}

util::Status GarbageCollector::DeleteObject(const ObjectIdentity& id, const api::Object& latest,
                                            const std::string& policy) {
  CONVERGE_ASSIGN_OR_RETURN(ResourceMapping m, mapper_.Resolve(id.api_version, id.kind));
  const api::ObjectKey key{m.namespaced ? id.ns : "", id.name};
  client::DeleteOptions o;
  o.precondition_uid = id.uid;
  o.precondition_resource_version = std::string(latest.resource_version());
  o.propagation_policy = policy;
  util::Status s = options_.client->Delete(m.gvr, key, o);
  if (client::IsConflict(s) && !o.precondition_resource_version.empty()) {
    // Changed since we read it. When its references did not change, the change is unrelated to
    // ownership: delete without the resourceVersion precondition, so that frequent unrelated
    // updates cannot starve collection.
    auto live = options_.client->Get(m.gvr, key);
    if (!live.ok() && client::IsNotFound(live.status())) return util::Status();
    if (live.ok() && live->uid() == id.uid &&
        live->resource_version() != latest.resource_version() &&
        OwnerReferencesOf(*live) == OwnerReferencesOf(latest)) {
      o.precondition_resource_version.clear();
      s = options_.client->Delete(m.gvr, key, o);
    }
  }
  return s;
}

GarbageCollector::Outcome GarbageCollector::AttemptToOrphan(const std::string& uid) {
  ObjectIdentity owner;
  std::vector<ObjectIdentity> dependents;
  {
    std::lock_guard lock(graph_mu_);
    const Node* n = graph_.Find(uid);
    if (n == nullptr) return Outcome::kForget;
    owner = n->identity;
    for (const Node* dep : n->SortedDependents()) dependents.push_back(dep->identity);
  }
  bool failed = false;
  for (const ObjectIdentity& dep : dependents) {
    util::Status s = PatchObject(dep, nullptr, [&uid](const api::Object& o) {
      return RemoveOwnerReferencesPatch(o, {uid});
    });
    if (!s.ok() && !client::IsNotFound(s)) {
      spdlog::info("garbage collector: orphaning {} from {}: {}", dep.ToString(), owner.ToString(),
                   s.ToString());
      failed = true;
    }
  }
  if (failed) return Outcome::kRequeue;
  util::Status s = RemoveFinalizer(owner, kOrphanFinalizer);
  if (!s.ok()) {
    spdlog::info("garbage collector: removing the orphan finalizer of {}: {}", owner.ToString(),
                 s.ToString());
    return Outcome::kRequeue;
  }
  return Outcome::kForget;
}

bool GarbageCollector::GraphHasUid(const std::string& uid) const {
  std::lock_guard lock(graph_mu_);
  return graph_.Find(uid) != nullptr;
}

bool GarbageCollector::TEST_ProcessGraphChange() {
  GraphEvent event;
  if (!PopGraphChange(&event, /*block=*/false, {})) return false;
  ProcessGraphChange(event);
  return true;
}

bool GarbageCollector::TEST_ProcessAttemptToDelete() {
  if (attempt_to_delete_.Len() == 0) return false;
  std::optional<std::string> uid = attempt_to_delete_.Get();
  if (!uid) return false;
  Outcome o = AttemptToDelete(*uid);
  if (o == Outcome::kForget) {
    attempt_to_delete_.Forget(*uid);
  } else {
    attempt_to_delete_.AddRateLimited(*uid);
  }
  attempt_to_delete_.Done(*uid);
  return true;
}

bool GarbageCollector::TEST_ProcessAttemptToOrphan() {
  if (attempt_to_orphan_.Len() == 0) return false;
  std::optional<std::string> uid = attempt_to_orphan_.Get();
  if (!uid) return false;
  Outcome o = AttemptToOrphan(*uid);
  if (o == Outcome::kForget) {
    attempt_to_orphan_.Forget(*uid);
  } else {
    attempt_to_orphan_.AddRateLimited(*uid);
  }
  attempt_to_orphan_.Done(*uid);
  return true;
}

void GarbageCollector::TEST_StartDelayLoops() {
  attempt_to_delete_.Start();
  attempt_to_orphan_.Start();
}

bool GarbageCollector::TEST_Idle() const {
  std::lock_guard lock(changes_mu_);
  return changes_.empty() && attempt_to_delete_.Len() == 0 && attempt_to_orphan_.Len() == 0 &&
         attempt_to_delete_.NumWaiting() == 0 && attempt_to_orphan_.NumWaiting() == 0;
}

int GarbageCollector::TEST_Waiting() const {
  return attempt_to_delete_.NumWaiting() + attempt_to_orphan_.NumWaiting();
}

namespace {

// How often discovery is re-read for resources added since (upstream's GC resync period).
constexpr auto kResourceResyncPeriod = std::chrono::seconds(30);

// The collector plus the REST client adapter it uses, and the discovery resync that adds
// monitors for resources the server starts serving (custom resources).
class RunnableGarbageCollector final : public RunnableController {
 public:
  RunnableGarbageCollector(client::RestClient* rest, util::Clock* clock,
                           std::unique_ptr<RestGcClient> client,
                           std::unique_ptr<GarbageCollector> gc)
      : rest_(rest), clock_(clock), client_(std::move(client)), gc_(std::move(gc)) {}

  void Run(std::stop_token stop) override {
    std::jthread resync([this, stop](std::stop_token own) { ResyncLoop(stop, own); });
    gc_->Run(stop);
  }

 private:
  void ResyncLoop(std::stop_token stop, std::stop_token own) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::stop_callback wake_on_stop(stop, [&] { cv.notify_all(); });
    std::stop_callback wake_on_own(own, [&] { cv.notify_all(); });
    std::unique_lock lock(mu);
    while (!stop.stop_requested() && !own.stop_requested()) {
      const auto deadline = clock_->Now() + kResourceResyncPeriod;
      while (clock_->Now() < deadline && !stop.stop_requested() && !own.stop_requested()) {
        clock_->WaitUntil(cv, lock, deadline);
      }
      if (stop.stop_requested() || own.stop_requested()) break;
      lock.unlock();
      auto found = discovery::ServerPreferredResources(*rest_, stop);
      if (found.ok()) {
        gc_->mapper().Add(found->resources);
        util::Status s = gc_->Monitor(DeletableResources(found->resources), stop);
        if (!s.ok()) spdlog::info("garbage collector: resync: {}", s.ToString());
      }
      lock.lock();
    }
  }

  client::RestClient* const rest_;
  util::Clock* const clock_;
  std::unique_ptr<RestGcClient> client_;
  std::unique_ptr<GarbageCollector> gc_;  // destroyed first: it uses client_
};

}  // namespace

util::StatusOr<std::unique_ptr<RunnableController>> InitGarbageCollector(ControllerContext& ctx) {
  auto rest = std::make_unique<RestGcClient>(ctx.client);
  GarbageCollectorOptions o;
  o.client = rest.get();
  o.informers = ctx.informers;
  o.recorder = ctx.recorder ? ctx.recorder("garbage-collector-controller") : nullptr;
  o.clock = ctx.clock;
  o.metrics = ctx.metrics;
  o.workers = std::max(ctx.workers, 1) * 4;
  auto gc = std::make_unique<GarbageCollector>(std::move(o));
  // Every built-in kind resolves (owners may be of kinds not watched); the deletable ones are
  // watched.
  gc->mapper().Add(api::BuiltinResources());
  CONVERGE_RETURN_IF_ERROR(gc->Monitor(DeletableResources(api::BuiltinResources())));
  return std::unique_ptr<RunnableController>(std::make_unique<RunnableGarbageCollector>(
      ctx.client, ctx.clock, std::move(rest), std::move(gc)));
}

}  // namespace converge::controllers::garbagecollector
