#include "controllers/replicaset/replicaset_controller.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <set>
#include <string_view>

#include "api/labels.h"
#include "client/api_errors.h"
#include "client/lister.h"
#include "controllers/common/controller_ref_manager.h"
#include "controllers/common/handler_registrations.h"
#include "controllers/common/pod_util.h"
#include "controllers/common/reconcile_metrics.h"
#include "controllers/replicaset/decide.h"

namespace converge::controllers::replicaset {

namespace json = boost::json;

namespace {

bool IsReplicaSetRef(const OwnerRef& ref) {
  return ref.kind == kReplicaSetKind.kind &&
         api::GroupVersion::Parse(ref.api_version).group == kReplicaSetKind.group;
}

bool SameLabels(const api::Object& a, const api::Object& b) {
  const api::ObjectView la = a.labels();
  const api::ObjectView lb = b.labels();
  return (la.empty() && lb.empty()) || la == lb;
}

}  // namespace

ReplicaSetController::ReplicaSetController(ReplicaSetControllerOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()),
      expectations_({.clock = clock_}) {}

api::ObjectPtr ReplicaSetController::ResolveControllerRef(std::string_view ns,
                                                          const OwnerRef& ref) const {
  if (!IsReplicaSetRef(ref)) return nullptr;
  api::ObjectPtr rs = options_.replica_sets->Get({std::string(ns), ref.name});
  if (rs == nullptr || rs->uid() != ref.uid) return nullptr;  // a different incarnation
  return rs;
}

std::vector<api::ObjectPtr> ReplicaSetController::ReplicaSetsMatching(
    const api::Object& pod) const {
  std::vector<api::ObjectPtr> out;
  client::Lister lister(options_.replica_sets);
  for (const api::ObjectPtr& rs : lister.List(pod.namespace_())) {
    auto selector =
        api::LabelSelector::FromLabelSelector(api::Find(rs->view(), {"spec", "selector"}));
    if (!selector.ok() || selector->Empty() || !selector->Matches(pod.labels())) continue;
    out.push_back(rs);
  }
  return out;
}

void ReplicaSetController::Enqueue(const api::Object& rs) {
  if (options_.enqueue) options_.enqueue(rs.key());
}

void ReplicaSetController::OnReplicaSetAdd(const api::ObjectPtr& rs) {
  Enqueue(*rs);
}

void ReplicaSetController::OnReplicaSetUpdate(const api::ObjectPtr& old_rs,
                                              const api::ObjectPtr& rs) {
  if (old_rs->uid() != rs->uid()) {
    // Deleted and re-created under the same name between two observations.
    OnReplicaSetDelete({old_rs->key(), old_rs, true});
  }
  Enqueue(*rs);
}

void ReplicaSetController::OnReplicaSetDelete(const client::DeletedObject& deleted) {
  // A re-created ReplicaSet of the same name starts with clean expectations.
  expectations_.DeleteExpectations(deleted.key);
  if (options_.enqueue) options_.enqueue(deleted.key);
}

void ReplicaSetController::OnPodAdd(const api::ObjectPtr& pod) {
  if (pod->being_deleted()) {
    // Seen for the first time already terminating (e.g. after a restart): not a creation.
    PodGone(*pod);
    return;
  }
  if (std::optional<OwnerRef> ref = GetControllerOf(*pod)) {
    api::ObjectPtr rs = ResolveControllerRef(pod->namespace_(), *ref);
    if (rs == nullptr) return;
    expectations_.CreationObserved(rs->key());
    Enqueue(*rs);
    return;
  }
  // An orphan: whoever matches may adopt it.
  for (const api::ObjectPtr& rs : ReplicaSetsMatching(*pod)) Enqueue(*rs);
}

void ReplicaSetController::OnPodUpdate(const api::ObjectPtr& old_pod, const api::ObjectPtr& pod) {
  if (old_pod->resource_version() == pod->resource_version()) return;  // a resync
  bool labels_changed = !SameLabels(*old_pod, *pod);
  if (pod->being_deleted()) {
    // Graceful deletion started: replace the pod now rather than when it is finally removed.
    PodGone(*pod);
    if (labels_changed) PodGone(*old_pod);
    return;
  }
  std::optional<OwnerRef> ref = GetControllerOf(*pod);
  std::optional<OwnerRef> old_ref = GetControllerOf(*old_pod);
  bool ref_changed = ref != old_ref;
  if (ref_changed && old_ref) {
    if (api::ObjectPtr old_rs = ResolveControllerRef(old_pod->namespace_(), *old_ref)) {
      Enqueue(*old_rs);
    }
  }
  if (ref) {
    api::ObjectPtr rs = ResolveControllerRef(pod->namespace_(), *ref);
    if (rs == nullptr) return;
    Enqueue(*rs);
    int64_t min_ready = MinReadySeconds(*rs);
    if (!IsPodReady(*old_pod) && IsPodReady(*pod) && min_ready > 0 && options_.enqueue_after) {
      // Available once ready for minReadySeconds; a second more against clock skew.
      options_.enqueue_after(rs->key(), std::chrono::seconds(min_ready) + std::chrono::seconds(1));
    }
    return;
  }
  if (labels_changed || ref_changed) {
    for (const api::ObjectPtr& rs : ReplicaSetsMatching(*pod)) Enqueue(*rs);
  }
}

void ReplicaSetController::OnPodDelete(const client::DeletedObject& deleted) {
  if (deleted.object == nullptr) return;  // a tombstone of a pod never seen: no owner known
  PodGone(*deleted.object);
}

void ReplicaSetController::PodGone(const api::Object& pod) {
  std::optional<OwnerRef> ref = GetControllerOf(pod);
  if (!ref) return;
  api::ObjectPtr rs = ResolveControllerRef(pod.namespace_(), *ref);
  if (rs == nullptr) return;
  expectations_.DeletionObserved(rs->key(), pod.key());
  Enqueue(*rs);
}

std::vector<api::ObjectPtr> ReplicaSetController::RelatedPods(
    const api::Object& rs, const std::vector<api::ObjectPtr>& namespace_pods) {
  std::set<std::string, std::less<>> owners{std::string(rs.uid())};
  if (std::optional<OwnerRef> controller = GetControllerOf(rs)) {
    client::Lister lister(options_.replica_sets);
    for (const api::ObjectPtr& sibling : lister.List(rs.namespace_())) {
      std::optional<OwnerRef> c = GetControllerOf(*sibling);
      if (c && c->uid == controller->uid) owners.insert(std::string(sibling->uid()));
    }
  }
  std::vector<api::ObjectPtr> out;
  for (const api::ObjectPtr& pod : namespace_pods) {
    std::optional<std::string_view> c = pod_facts_.Get(pod).controller_uid;
    if (c && owners.contains(*c)) out.push_back(pod);
  }
  return out;
}

util::Status ReplicaSetController::Act(const api::Object& rs, const api::ObjectKey& key,
                                       int creates, const std::vector<api::ObjectPtr>& deletes,
                                       std::stop_token stop) {
  if (creates > 0) {
    spdlog::info("replicaset {}: too few replicas (need {}), creating {}", key.ToString(),
                 SpecReplicas(rs), creates);
    expectations_.ExpectCreations(key, creates);
    const json::object* tmpl = api::FindObject(rs.doc(), {"spec", "template"});
    static const json::object kEmpty;
    OwnerRef ref = NewControllerRef(rs, kReplicaSetKind);
    // The creates go out in growing batches, which take a while; if spec.replicas is lowered
    // meanwhile (a Deployment scaling this ReplicaSet down mid-rollout), the rest are not sent:
    // the change queued another sync, which counts again. Checked in the informer's cache.
    const int64_t decided_replicas = SpecReplicas(rs);
    auto lowered = [&] {
      api::ObjectPtr now = options_.replica_sets->Get(key);
      return now == nullptr || now->uid() != rs.uid() || SpecReplicas(*now) < decided_replicas;
    };
    std::atomic<bool> superseded = false;  // set by the batch threads
    SlowStartResult r = SlowStartBatch(creates, kSlowStartInitialBatchSize, [&] {
      // Shutting down: the rest of this batch and every later one are not sent (and no longer
      // expected); the next controller to run counts the pods again.
      if (stop.stop_requested()) return util::Cancelled("controller stopping");
      if (lowered()) {
        superseded = true;
        return util::Aborted("spec.replicas was lowered");
      }
      util::Status s =
          options_.pod_control->CreatePod(rs.namespace_(), tmpl ? *tmpl : kEmpty, rs, ref);
      // In a terminating namespace every create fails; that is not this controller's error.
      return IsNamespaceTerminating(s) ? util::Status() : s;
    });
    if (int skipped = creates - r.successes; skipped > 0) {
      // Never attempted, or failed: either way the informer will not report them.
      expectations_.LowerExpectations(key, skipped, 0);
    }
    if (superseded && r.error.code() == util::Code::kAborted) {
      spdlog::info("replicaset {}: spec.replicas lowered while creating; {} of {} created",
                   key.ToString(), r.successes, creates);
      return util::Status();
    }
    return r.error;
  }
  if (!deletes.empty()) {
    spdlog::info("replicaset {}: too many replicas (need {}), deleting {}", key.ToString(),
                 SpecReplicas(rs), deletes.size());
    std::vector<api::ObjectKey> keys;
    for (const api::ObjectPtr& p : deletes) keys.push_back(p->key());
    expectations_.ExpectDeletions(key, keys);
    std::vector<util::Status> results = RunParallel(static_cast<int>(deletes.size()), [&](int i) {
      return options_.pod_control->DeletePod(rs.namespace_(), deletes[i]->name(), rs);
    });
    util::Status first;
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].ok()) continue;
      expectations_.DeletionObserved(key, keys[i]);
      if (!client::IsNotFound(results[i]) && first.ok()) first = results[i];
    }
    return first;
  }
  return util::Status();
}

util::Status ReplicaSetController::WriteStatus(const api::Object& rs, const json::object& status) {
  api::Object copy = rs;  // never modify the cached object
  copy.mutable_doc()["status"] = status;
  auto written = options_.client->UpdateStatus(kReplicaSets, copy);
  if (written.ok()) return util::Status();
  if (!client::IsConflict(written.status())) return written.status();
  // Someone else wrote the ReplicaSet since our cache saw it: re-read it and retry once. The
  // status comes from the pods, which that write did not change.
  auto fresh = options_.client->Get(kReplicaSets, rs.key());
  if (!fresh.ok()) return fresh.status();
  fresh->mutable_doc()["status"] = status;
  return options_.client->UpdateStatus(kReplicaSets, *fresh).status();
}

client::ReconcileResult ReplicaSetController::Sync(const api::ObjectKey& key,
                                                   std::stop_token stop) {
  api::ObjectPtr rs = options_.replica_sets->Get(key);
  if (rs == nullptr) {
    expectations_.DeleteExpectations(key);
    return client::ReconcileResult::Done();
  }
  bool satisfied = expectations_.SatisfiedExpectations(key);
  auto selector =
      api::LabelSelector::FromLabelSelector(api::Find(rs->view(), {"spec", "selector"}));
  if (!selector.ok()) {
    // Validation prevents this; retrying cannot help.
    return client::ReconcileResult::Terminal(
        selector.status().WithContext("selector of " + key.ToString()));
  }
  util::Clock::WallTime now = clock_->WallNow();
  client::Lister pod_lister(options_.pods);
  std::vector<api::ObjectPtr> namespace_pods = pod_lister.List(rs->namespace_());

  ClaimOptions claim;
  claim.controller = rs.get();
  claim.controller_gvk = kReplicaSetKind;
  claim.selector = *selector;
  client::RestClient* client = options_.client;
  claim.can_adopt = RecheckDeletionTimestamp(
      [client, key] { return client->Get(kReplicaSets, key); }, std::string(rs->uid()));
  PodControl* pods = options_.pod_control;
  claim.patch = [pods](const api::Object& pod, const std::string& patch) {
    return pods->PatchPod(pod.namespace_(), pod.name(), patch);
  };
  // Claiming, as ClaimObjects(claim, FilterActivePods(namespace_pods)) would, but reading each
  // pod's facts from the memo: only adoptions and releases (rare) go through ClaimObjects. The
  // loop touches only the memo's entries and the shared uid and label-set answers; the owned pods
  // are collected as positions and moved out of namespace_pods afterwards.
  std::vector<size_t> owned_at;
  std::vector<const PodFacts*> owned_facts;  // valid while the pods are held
  std::vector<api::ObjectPtr> to_claim;
  LabelMemo selected(claim.selector);
  const ClaimController owner = ClaimController::Of(*rs);
  for (size_t i = 0; i < namespace_pods.size(); ++i) {
    const api::ObjectPtr& pod = namespace_pods[i];
    const PodFacts& f = pod_facts_.Get(pod);
    if (!f.active) continue;
    switch (DecideClaim(
        owner,
        {.object = pod.get(), .controller_uid = f.controller_uid, .being_deleted = f.being_deleted},
        selected.Matches(f))) {
      case ClaimAction::kIgnore: break;
      case ClaimAction::kOwned:
        owned_at.push_back(i);
        owned_facts.push_back(&f);
        break;
      case ClaimAction::kAdopt:
      case ClaimAction::kRelease: to_claim.push_back(pod); break;
    }
  }
  std::vector<api::ObjectPtr> claimed;
  if (!to_claim.empty()) {
    ClaimResult r = ClaimObjects(claim, to_claim);
    if (!r.error.ok()) return client::ReconcileResult::Error(r.error);
    claimed = std::move(r.claimed);
    for (const api::ObjectPtr& pod : claimed) owned_facts.push_back(&pod_facts_.Get(pod));
  }

  // Sibling pods only rank deletions: computed only when there are pods to delete.
  const size_t owned_count = owned_at.size() + claimed.size();
  const bool too_many = static_cast<int64_t>(owned_count) > SpecReplicas(*rs);
  std::vector<api::ObjectPtr> related =
      too_many ? RelatedPods(*rs, namespace_pods) : std::vector<api::ObjectPtr>{};
  std::vector<api::ObjectPtr> owned;
  owned.reserve(owned_count);
  for (size_t i : owned_at) owned.push_back(std::move(namespace_pods[i]));
  for (api::ObjectPtr& pod : claimed) owned.push_back(std::move(pod));
  Snapshot snapshot{.rs = rs,
                    .pods = std::move(owned),
                    .related_pods = std::move(related),
                    .expectations_satisfied = satisfied,
                    .now = now,
                    .burst_replicas = options_.burst_replicas};
  ReplicaPlan plan = DecideReplicas(snapshot);
  util::Status manage_error = Act(*rs, key, plan.creates, plan.deletes, stop);
  if (stop.stop_requested()) {
    // Not a failure to report in status: the next controller to run picks up from here.
    return client::ReconcileResult::Error(util::Cancelled("controller stopping"));
  }

  ReplicaSetStatus status = CalculateStatus(*rs, owned_facts, manage_error, now);
  if (StatusNeedsUpdate(*rs, status)) {
    status.observed_generation = rs->generation();
    if (util::Status s = WriteStatus(*rs, status.ToJson()); !s.ok()) {
      return client::ReconcileResult::Error(s.WithContext("updating status of " + key.ToString()));
    }
  }
  if (!manage_error.ok()) return client::ReconcileResult::Error(manage_error);
  if (std::optional<util::Clock::Duration> after = RequeueAfter(*rs, snapshot.pods, now)) {
    return client::ReconcileResult::RequeueAfter(*after);
  }
  return client::ReconcileResult::Done();
}

namespace {

class Runnable final : public RunnableController {
 public:
  explicit Runnable(ControllerContext& ctx)
      : pod_control_(ctx.client, ctx.recorder("replicaset-controller")) {}

  util::Status Init(ControllerContext& ctx) {
    client::SharedInformer& rs_informer = ctx.informers->InformerFor(kReplicaSets);
    client::SharedInformer& pod_informer = ctx.informers->InformerFor(kPods);
    ReplicaSetControllerOptions o;
    o.client = ctx.client;
    o.replica_sets = &rs_informer.indexer();
    o.pods = &pod_informer.indexer();
    o.pod_control = &pod_control_;
    o.clock = ctx.clock;
    o.enqueue = [this](const api::ObjectKey& k) { runner_->Enqueue(k); };
    o.enqueue_after = [this](const api::ObjectKey& k, util::Clock::Duration d) {
      runner_->EnqueueAfter(k, d);
    };
    controller_ = std::make_unique<ReplicaSetController>(std::move(o));

    client::ControllerOptions ro;
    ro.name = "replicaset";
    ro.workers = ctx.workers;
    ro.clock = ctx.clock;
    ro.metrics = ctx.metrics;
    ro.wait_for_sync = {&rs_informer, &pod_informer};
    ro.recorder = ctx.recorder("replicaset-controller");
    const client::Indexer* rs_cache = &rs_informer.indexer();
    ro.lookup = [rs_cache](const api::ObjectKey& k) { return rs_cache->Get(k); };
    ReplicaSetController* c = controller_.get();
    ro.reconcile = InstrumentReconcile(
        "replicaset", ctx.metrics, ctx.clock,
        [c](const api::ObjectKey& k, std::stop_token stop) { return c->Sync(k, stop); });
    runner_ = std::make_unique<client::Controller>(std::move(ro));

    auto rs_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    rs_handler->add = [c](const api::ObjectPtr& o, bool) { c->OnReplicaSetAdd(o); };
    rs_handler->update = [c](const api::ObjectPtr& a, const api::ObjectPtr& b) {
      c->OnReplicaSetUpdate(a, b);
    };
    rs_handler->del = [c](const client::DeletedObject& d) { c->OnReplicaSetDelete(d); };
    auto pod_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    pod_handler->add = [c](const api::ObjectPtr& o, bool) { c->OnPodAdd(o); };
    pod_handler->update = [c](const api::ObjectPtr& a, const api::ObjectPtr& b) {
      c->OnPodUpdate(a, b);
    };
    pod_handler->del = [c](const client::DeletedObject& d) { c->OnPodDelete(d); };
    CONVERGE_RETURN_IF_ERROR(handlers_.Add(rs_informer, rs_handler));
    CONVERGE_RETURN_IF_ERROR(handlers_.Add(pod_informer, pod_handler));
    return util::Status();
  }

  void Run(std::stop_token stop) override {
    // Workers start once the handlers have seen every initial object (upstream waits on the
    // handler registrations' HasSynced).
    if (!handlers_.WaitForSynced(stop)) return;
    runner_->Run(stop);
  }

 private:
  RealPodControl pod_control_;
  std::unique_ptr<ReplicaSetController> controller_;
  std::unique_ptr<client::Controller> runner_;
  HandlerRegistrations handlers_;  // last: removed (joined) before the rest is destroyed
};

}  // namespace

util::StatusOr<std::unique_ptr<RunnableController>> NewReplicaSetController(
    ControllerContext& ctx) {
  auto r = std::make_unique<Runnable>(ctx);
  CONVERGE_RETURN_IF_ERROR(r->Init(ctx));
  return std::unique_ptr<RunnableController>(std::move(r));
}

}  // namespace converge::controllers::replicaset
