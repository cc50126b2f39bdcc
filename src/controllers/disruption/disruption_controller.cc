#include "controllers/disruption/disruption_controller.h"

#include <spdlog/spdlog.h>

#include "api/labels.h"
#include "client/api_errors.h"
#include "client/lister.h"
#include "controllers/common/handler_registrations.h"
#include "controllers/common/reconcile_metrics.h"

namespace converge::controllers::disruption {

namespace json = boost::json;

namespace {

bool RefIs(const OwnerRef& ref, std::string_view group, std::string_view kind) {
  return ref.kind == kind && api::GroupVersion::Parse(ref.api_version).group == group;
}

int32_t SpecReplicas(const api::Object& obj) {
  // spec.replicas defaults to 1 for every workload that has it.
  return static_cast<int32_t>(api::FindInt(obj.doc(), {"spec", "replicas"}, 1));
}

util::StatusOr<api::LabelSelector> BudgetSelector(const api::Object& budget) {
  return api::LabelSelector::FromLabelSelector(api::Find(budget.doc(), {"spec", "selector"}));
}

}  // namespace

DisruptionController::DisruptionController(DisruptionControllerOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()) {}

void DisruptionController::Event(const api::Object& obj, std::string_view type,
                                 std::string_view reason, const std::string& message) const {
  if (options_.recorder) options_.recorder->Event(obj, type, reason, message);
}

void DisruptionController::OnBudgetChange(const api::Object& budget) {
  if (options_.enqueue) options_.enqueue(budget.key());
}

void DisruptionController::OnPodChange(const api::Object& pod) {
  if (!options_.enqueue) return;
  client::Lister budgets(options_.budgets);
  for (const api::ObjectPtr& budget : budgets.List(pod.namespace_())) {
    auto selector = BudgetSelector(*budget);
    if (selector.ok() && selector->Matches(pod.labels())) options_.enqueue(budget->key());
  }
}

util::StatusOr<std::optional<ControllerScale>> DisruptionController::ResolveScale(
    std::string_view ns, const OwnerRef& ref) const {
  const std::string name_space(ns);
  if (RefIs(ref, "apps", "ReplicaSet")) {
    api::ObjectPtr rs = options_.replica_sets->Get({name_space, ref.name});
    if (rs == nullptr || rs->uid() != ref.uid) return std::optional<ControllerScale>();
    // A ReplicaSet of a Deployment: the Deployment's replicas are what the user asked for.
    if (std::optional<OwnerRef> owner = GetControllerOf(*rs);
        owner && RefIs(*owner, "apps", "Deployment")) {
      api::ObjectPtr d = options_.deployments->Get({name_space, owner->name});
      if (d == nullptr || d->uid() != owner->uid) return std::optional<ControllerScale>();
      return std::optional<ControllerScale>(
          ControllerScale{std::string(d->uid()), SpecReplicas(*d)});
    }
    return std::optional<ControllerScale>(
        ControllerScale{std::string(rs->uid()), SpecReplicas(*rs)});
  }
  const api::GroupVersionResource* gvr = nullptr;
  if (RefIs(ref, "apps", "StatefulSet")) gvr = &kStatefulSets;
  if (RefIs(ref, "", "ReplicationController")) gvr = &kReplicationControllers;
  if (gvr == nullptr) return std::optional<ControllerScale>();
  auto obj = options_.client->Get(*gvr, {name_space, ref.name});
  if (!obj.ok()) {
    if (client::IsNotFound(obj.status())) return std::optional<ControllerScale>();
    return obj.status();
  }
  if (obj->uid() != ref.uid) return std::optional<ControllerScale>();
  return std::optional<ControllerScale>(
      ControllerScale{std::string(obj->uid()), SpecReplicas(*obj)});
}

client::ReconcileResult DisruptionController::Sync(const api::ObjectKey& key) {
  api::ObjectPtr budget = options_.budgets->Get(key);
  if (budget == nullptr) return client::ReconcileResult::Done();
  auto selector = BudgetSelector(*budget);
  if (!selector.ok()) {
    // Validation prevents this; retrying cannot help.
    return client::ReconcileResult::Terminal(
        selector.status().WithContext("selector of " + key.ToString()));
  }
  client::Lister pods(options_.pods);
  BudgetSnapshot snapshot{
      .budget = budget,
      .pods = pods.List(budget->namespace_(), *selector),
      .resolve = [this](std::string_view ns, const OwnerRef& ref) { return ResolveScale(ns, ref); },
      .now = clock_->WallNow()};
  BudgetPlan plan = DecideBudget(snapshot);

  for (const api::ObjectPtr& pod : snapshot.pods) {
    for (const std::string& name : plan.not_deleted) {
      if (pod->name() != name) continue;
      Event(*pod, client::kEventTypeWarning, "NotDeleted",
            "Pod was expected by PDB " + key.ToString() + " to be deleted but it wasn't");
    }
  }
  if (plan.status) {
    if (!plan.error.ok()) {
      Event(
          *budget, client::kEventTypeWarning, "CalculateExpectedPodCountFailed",
          "Failed to calculate the number of expected pods: " + std::string(plan.error.message()));
    } else if (snapshot.pods.empty()) {
      Event(*budget, client::kEventTypeNormal, "NoPods", "No matching pods found");
    }
    if (!plan.unmanaged_pods.empty()) {
      Event(*budget, client::kEventTypeWarning, "UnmanagedPods",
            "Pods selected by this PodDisruptionBudget (selector: " +
                json::serialize(*api::Find(budget->doc(), {"spec", "selector"})) +
                ") were found to be unmanaged. As a result, the status of the PDB cannot be "
                "calculated correctly, which may result in undefined behavior. To account for "
                "these pods please set \".spec.minAvailable\" field of the PDB to an integer "
                "value.");
    }
    api::Object copy = *budget;  // never modify the cached object
    copy.mutable_doc()["status"] = std::move(*plan.status);
    auto written = options_.client->UpdateStatus(kBudgets, copy);
    if (!written.ok()) {
      // A Conflict means the cache is behind: the runner retries once it has caught up.
      return client::ReconcileResult::Error(
          written.status().WithContext("updating status of " + key.ToString()));
    }
  }
  if (!plan.error.ok()) return client::ReconcileResult::Error(plan.error);
  if (plan.recheck_after) return client::ReconcileResult::RequeueAfter(*plan.recheck_after);
  return client::ReconcileResult::Done();
}

namespace {

class Runnable final : public RunnableController {
 public:
  util::Status Init(ControllerContext& ctx) {
    client::SharedInformer& budgets = ctx.informers->InformerFor(kBudgets);
    client::SharedInformer& pods = ctx.informers->InformerFor(kPods);
    client::SharedInformer& replica_sets = ctx.informers->InformerFor(kReplicaSets);
    client::SharedInformer& deployments = ctx.informers->InformerFor(kDeployments);
    client::EventRecorder* recorder = ctx.recorder("controllermanager");

    DisruptionControllerOptions o;
    o.client = ctx.client;
    o.budgets = &budgets.indexer();
    o.pods = &pods.indexer();
    o.replica_sets = &replica_sets.indexer();
    o.deployments = &deployments.indexer();
    o.recorder = recorder;
    o.clock = ctx.clock;
    o.enqueue = [this](const api::ObjectKey& k) { runner_->Enqueue(k); };
    controller_ = std::make_unique<DisruptionController>(std::move(o));

    client::ControllerOptions ro;
    ro.name = "disruption";
    ro.workers = 1;  // upstream runs one worker
    ro.clock = ctx.clock;
    ro.metrics = ctx.metrics;
    ro.wait_for_sync = {&budgets, &pods, &replica_sets, &deployments};
    ro.recorder = recorder;
    const client::Indexer* cache = &budgets.indexer();
    ro.lookup = [cache](const api::ObjectKey& k) { return cache->Get(k); };
    DisruptionController* c = controller_.get();
    ro.reconcile =
        InstrumentReconcile("disruption", ctx.metrics, ctx.clock,
                            [c](const api::ObjectKey& k, std::stop_token) { return c->Sync(k); });
    runner_ = std::make_unique<client::Controller>(std::move(ro));

    auto budget_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    budget_handler->add = [c](const api::ObjectPtr& o, bool) { c->OnBudgetChange(*o); };
    budget_handler->update = [c](const api::ObjectPtr&, const api::ObjectPtr& o) {
      c->OnBudgetChange(*o);
    };
    auto pod_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    pod_handler->add = [c](const api::ObjectPtr& o, bool) { c->OnPodChange(*o); };
    pod_handler->update = [c](const api::ObjectPtr& old_pod, const api::ObjectPtr& pod) {
      if (old_pod->resource_version() == pod->resource_version()) return;  // a resync
      c->OnPodChange(*pod);
      c->OnPodChange(*old_pod);  // labels may have moved it out of a budget
    };
    pod_handler->del = [c](const client::DeletedObject& d) {
      if (d.object) c->OnPodChange(*d.object);
    };
    CONVERGE_RETURN_IF_ERROR(handlers_.Add(budgets, budget_handler));
    CONVERGE_RETURN_IF_ERROR(handlers_.Add(pods, pod_handler));
    return util::Status();
  }

  void Run(std::stop_token stop) override {
    // Workers start once the handlers have seen every initial object (upstream waits on the
    // handler registrations' HasSynced).
    if (!handlers_.WaitForSynced(stop)) return;
    runner_->Run(stop);
  }

 private:
  std::unique_ptr<DisruptionController> controller_;
  std::unique_ptr<client::Controller> runner_;
  HandlerRegistrations handlers_;  // last: removed (joined) before the rest is destroyed
};

}  // namespace

util::StatusOr<std::unique_ptr<RunnableController>> NewDisruptionController(
    ControllerContext& ctx) {
  auto r = std::make_unique<Runnable>();
  CONVERGE_RETURN_IF_ERROR(r->Init(ctx));
  return std::unique_ptr<RunnableController>(std::move(r));
}

}  // namespace converge::controllers::disruption
