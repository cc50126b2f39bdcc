#include "controllers/deployment/deployment_controller.h"

#include <spdlog/spdlog.h>

#include <set>

#include "api/labels.h"
#include "client/api_errors.h"
#include "client/lister.h"
#include "controllers/common/controller_ref_manager.h"
#include "controllers/common/handler_registrations.h"
#include "controllers/common/reconcile_metrics.h"
#include "controllers/common/template_hash.h"
#include "controllers/deployment/decide.h"

namespace converge::controllers::deployment {

namespace json = boost::json;

namespace {

bool IsDeploymentRef(const OwnerRef& ref) {
  return ref.kind == kDeploymentKind.kind &&
         api::GroupVersion::Parse(ref.api_version).group == kDeploymentKind.group;
}

bool SameLabels(const api::Object& a, const api::Object& b) {
  const api::ObjectView la = a.labels();
  const api::ObjectView lb = b.labels();
  return (la.empty() && lb.empty()) || la == lb;
}

util::StatusOr<api::LabelSelector> SelectorOf(const api::Object& obj) {
  return api::LabelSelector::FromLabelSelector(api::Find(obj.view(), {"spec", "selector"}));
}

}  // namespace

DeploymentController::DeploymentController(DeploymentControllerOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()) {}

api::ObjectPtr DeploymentController::ResolveControllerRef(std::string_view ns,
                                                          const OwnerRef& ref) const {
  if (!IsDeploymentRef(ref)) return nullptr;
  api::ObjectPtr d = options_.deployments->Get({std::string(ns), ref.name});
  if (d == nullptr || d->uid() != ref.uid) return nullptr;
  return d;
}

std::vector<api::ObjectPtr> DeploymentController::DeploymentsMatching(const api::Object& rs) const {
  std::vector<api::ObjectPtr> out;
  client::Lister lister(options_.deployments);
  for (const api::ObjectPtr& d : lister.List(rs.namespace_())) {
    auto selector = SelectorOf(*d);
    if (!selector.ok() || selector->Empty() || !selector->Matches(rs.labels())) continue;
    out.push_back(d);
  }
  return out;
}

void DeploymentController::Enqueue(const api::Object& d) {
  if (options_.enqueue) options_.enqueue(d.key());
}

void DeploymentController::OnDeployment(const api::ObjectPtr& d) {
  Enqueue(*d);
}

void DeploymentController::OnDeploymentDelete(const client::DeletedObject& deleted) {
  if (options_.enqueue) options_.enqueue(deleted.key);
}

void DeploymentController::OnReplicaSetAdd(const api::ObjectPtr& rs) {
  if (rs->being_deleted()) {
    OnReplicaSetDelete({rs->key(), rs, false});
    return;
  }
  if (std::optional<OwnerRef> ref = GetControllerOf(*rs)) {
    if (api::ObjectPtr d = ResolveControllerRef(rs->namespace_(), *ref)) Enqueue(*d);
    return;
  }
  for (const api::ObjectPtr& d : DeploymentsMatching(*rs)) Enqueue(*d);
}

void DeploymentController::OnReplicaSetUpdate(const api::ObjectPtr& old_rs,
                                              const api::ObjectPtr& rs) {
  if (old_rs->resource_version() == rs->resource_version()) return;  // a resync
  std::optional<OwnerRef> ref = GetControllerOf(*rs);
  std::optional<OwnerRef> old_ref = GetControllerOf(*old_rs);
  bool ref_changed = ref != old_ref;
  if (ref_changed && old_ref) {
    if (api::ObjectPtr d = ResolveControllerRef(old_rs->namespace_(), *old_ref)) Enqueue(*d);
  }
  if (ref) {
    if (api::ObjectPtr d = ResolveControllerRef(rs->namespace_(), *ref)) Enqueue(*d);
    return;
  }
  if (!SameLabels(*old_rs, *rs) || ref_changed) {
    for (const api::ObjectPtr& d : DeploymentsMatching(*rs)) Enqueue(*d);
  }
}

void DeploymentController::OnReplicaSetDelete(const client::DeletedObject& deleted) {
  if (deleted.object == nullptr) return;
  if (std::optional<OwnerRef> ref = GetControllerOf(*deleted.object)) {
    if (api::ObjectPtr d = ResolveControllerRef(deleted.object->namespace_(), *ref)) Enqueue(*d);
  }
}

void DeploymentController::OnPodDelete(const client::DeletedObject& deleted) {
  if (deleted.object == nullptr) return;
  std::optional<OwnerRef> rs_ref = GetControllerOf(*deleted.object);
  if (!rs_ref || rs_ref->kind != "ReplicaSet") return;
  api::ObjectPtr rs =
      options_.replica_sets->Get({std::string(deleted.object->namespace_()), rs_ref->name});
  if (rs == nullptr || rs->uid() != rs_ref->uid) return;
  std::optional<OwnerRef> d_ref = GetControllerOf(*rs);
  if (!d_ref) return;
  api::ObjectPtr d = ResolveControllerRef(rs->namespace_(), *d_ref);
  // Recreate waits for the old pods to be gone; other strategies do not care.
  if (d != nullptr && !IsRollingUpdate(*d)) Enqueue(*d);
}

client::ReconcileResult DeploymentController::Sync(const api::ObjectKey& key, std::stop_token) {
  api::ObjectPtr d = options_.deployments->Get(key);
  if (d == nullptr) return client::ReconcileResult::Done();
  auto selector = SelectorOf(*d);
  if (!selector.ok()) {
    return client::ReconcileResult::Terminal(selector.status().WithContext(
        "deployment " + key.ToString() + " has invalid label selector"));
  }
  util::Clock::WallTime now = clock_->WallNow();

  // Claim the ReplicaSets.
  client::Lister rs_lister(options_.replica_sets);
  client::RestClient* client = options_.client;
  ClaimOptions claim;
  claim.controller = d.get();
  claim.controller_gvk = kDeploymentKind;
  claim.selector = *selector;
  claim.can_adopt = RecheckDeletionTimestamp(
      [client, key] { return client->Get(kDeployments, key); }, std::string(d->uid()));
  claim.patch = [client](const api::Object& rs, const std::string& patch) {
    return client->Patch(kReplicaSets, rs.key(), client::PatchType::kStrategicMerge, patch)
        .status();
  };
  ClaimResult owned = ClaimObjects(claim, rs_lister.List(d->namespace_()));
  if (!owned.error.ok()) return client::ReconcileResult::Error(owned.error);

  Snapshot snapshot;
  snapshot.deployment = d;
  snapshot.replica_sets = owned.claimed;
  snapshot.now = now;
  if (!IsRollingUpdate(*d) && !selector->Empty()) {
    std::set<std::string, std::less<>> uids;
    for (const api::ObjectPtr& rs : owned.claimed) uids.insert(std::string(rs->uid()));
    client::Lister pod_lister(options_.pods);
    for (const api::ObjectPtr& pod : pod_lister.List(d->namespace_(), *selector)) {
      std::optional<OwnerRef> ref = GetControllerOf(*pod);
      if (ref && uids.contains(ref->uid)) snapshot.pods_by_replica_set[ref->uid].push_back(pod);
    }
  }

  Plan plan = Decide(snapshot);

  for (const ReplicaSetAction& action : plan.actions) {
    util::Status s;
    switch (action.kind) {
      case ReplicaSetAction::Kind::kCreate: {
        auto created = client->Create(kReplicaSets, d->namespace_(), action.object);
        s = created.status();
        if (client::IsAlreadyExists(s)) {
          api::ObjectPtr existing = options_.replica_sets->Get(action.object.key());
          if (existing == nullptr) {
            // Ours, most likely, from a sync whose result the cache has not shown yet.
            return client::ReconcileResult::Error(s);
          }
          if (IsControlledBy(*existing, *d) &&
              EqualIgnoreHash(PodTemplate(*existing), PodTemplate(*d))) {
            return client::ReconcileResult::Requeue();
          }
          // Another object holds the name: a hash collision. Count it, so that the next hash
          // (and name) differs.
          auto bumped = client->UpdateStatus(kDeployments, WithCollisionCountBumped(*d));
          if (bumped.ok()) {
            spdlog::info("deployment {}: hash collision on {}; collisionCount bumped",
                         key.ToString(), action.object.name());
          }
          return client::ReconcileResult::Error(s);
        }
        if (!s.ok()) {
          std::string msg = "Failed to create new replica set " + Quote(action.object.name()) +
                            ": " + s.message();
          if (std::optional<api::Object> failed = StatusAfterCreateFailure(*d, msg, now)) {
            // Best effort: the failure to report matters more than this write.
            (void)client->UpdateStatus(kDeployments, *failed);
          }
          options_.recorder->Event(*d, client::kEventTypeWarning, "ReplicaSetCreateError", msg);
          return client::ReconcileResult::Error(s);
        }
        break;
      }
      case ReplicaSetAction::Kind::kUpdate:
        s = client->Update(kReplicaSets, action.object).status();
        if (!s.ok()) return client::ReconcileResult::Error(s.WithContext("updating replica set"));
        break;
      case ReplicaSetAction::Kind::kDelete:
        s = client->Delete(kReplicaSets, action.object.key());
        if (!s.ok() && !client::IsNotFound(s)) {
          return client::ReconcileResult::Error(s.WithContext("deleting old replica set"));
        }
        break;
    }
    for (const PlannedEvent& e : action.events) {
      options_.recorder->Event(*d, e.type, e.reason, e.message);
    }
  }
  if (plan.status_update) {
    auto written = client->UpdateStatus(kDeployments, *plan.status_update);
    if (!written.ok()) {
      return client::ReconcileResult::Error(
          written.status().WithContext("updating status of " + key.ToString()));
    }
  }
  for (const PlannedEvent& e : plan.events) {
    options_.recorder->Event(*d, e.type, e.reason, e.message);
  }
  if (plan.requeue) return client::ReconcileResult::Requeue();
  if (plan.requeue_after) return client::ReconcileResult::RequeueAfter(*plan.requeue_after);
  return client::ReconcileResult::Done();
}

namespace {

class Runnable final : public RunnableController {
 public:
  util::Status Init(ControllerContext& ctx) {
    client::SharedInformer& d_informer = ctx.informers->InformerFor(kDeployments);
    client::SharedInformer& rs_informer = ctx.informers->InformerFor(kReplicaSets);
    client::SharedInformer& pod_informer = ctx.informers->InformerFor(kPods);
    client::EventRecorder* recorder = ctx.recorder("deployment-controller");
    DeploymentControllerOptions o;
    o.client = ctx.client;
    o.deployments = &d_informer.indexer();
    o.replica_sets = &rs_informer.indexer();
    o.pods = &pod_informer.indexer();
    o.recorder = recorder;
    o.clock = ctx.clock;
    o.enqueue = [this](const api::ObjectKey& k) { runner_->Enqueue(k); };
    controller_ = std::make_unique<DeploymentController>(std::move(o));

    client::ControllerOptions ro;
    ro.name = "deployment";
    ro.workers = ctx.workers;
    ro.clock = ctx.clock;
    ro.metrics = ctx.metrics;
    ro.wait_for_sync = {&d_informer, &rs_informer, &pod_informer};
    ro.recorder = recorder;
    const client::Indexer* d_cache = &d_informer.indexer();
    ro.lookup = [d_cache](const api::ObjectKey& k) { return d_cache->Get(k); };
    DeploymentController* c = controller_.get();
    ro.reconcile = InstrumentReconcile(
        "deployment", ctx.metrics, ctx.clock,
        [c](const api::ObjectKey& k, std::stop_token stop) { return c->Sync(k, stop); });
    runner_ = std::make_unique<client::Controller>(std::move(ro));

    auto d_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    d_handler->add = [c](const api::ObjectPtr& o, bool) { c->OnDeployment(o); };
    d_handler->update = [c](const api::ObjectPtr&, const api::ObjectPtr& o) { c->OnDeployment(o); };
    d_handler->del = [c](const client::DeletedObject& d) { c->OnDeploymentDelete(d); };
    auto rs_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    rs_handler->add = [c](const api::ObjectPtr& o, bool) { c->OnReplicaSetAdd(o); };
    rs_handler->update = [c](const api::ObjectPtr& a, const api::ObjectPtr& b) {
      c->OnReplicaSetUpdate(a, b);
    };
    rs_handler->del = [c](const client::DeletedObject& d) { c->OnReplicaSetDelete(d); };
    auto pod_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    pod_handler->del = [c](const client::DeletedObject& d) { c->OnPodDelete(d); };
    for (auto [informer, handler] :
         {std::pair{&d_informer, std::shared_ptr<client::ResourceEventHandler>(d_handler)},
          std::pair{&rs_informer, std::shared_ptr<client::ResourceEventHandler>(rs_handler)},
          std::pair{&pod_informer, std::shared_ptr<client::ResourceEventHandler>(pod_handler)}}) {
      CONVERGE_RETURN_IF_ERROR(handlers_.Add(*informer, handler));
    }
    return util::Status();
  }

  void Run(std::stop_token stop) override {
    // Workers start once the handlers have seen every initial object (upstream waits on the
    // handler registrations' HasSynced).
    if (!handlers_.WaitForSynced(stop)) return;
    runner_->Run(stop);
  }

 private:
  std::unique_ptr<DeploymentController> controller_;
  std::unique_ptr<client::Controller> runner_;
  HandlerRegistrations handlers_;  // last: removed (joined) before the rest is destroyed
};

}  // namespace

util::StatusOr<std::unique_ptr<RunnableController>> NewDeploymentController(
    ControllerContext& ctx) {
  auto r = std::make_unique<Runnable>();
  CONVERGE_RETURN_IF_ERROR(r->Init(ctx));
  return std::unique_ptr<RunnableController>(std::move(r));
}

}  // namespace converge::controllers::deployment
