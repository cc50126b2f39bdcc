// pods/eviction: a delete that asks the pod's PodDisruptionBudget first (upstream's EvictionREST;
// the decisions are in eviction.h). `kubectl drain` evicts every pod of a node through it and
// retries the 429 answers until the budget allows the disruption or its timeout ends.
#include <string>

#include "apiserver/eviction.h"
#include "apiserver/handler_util.h"
#include "apiserver/server.h"
#include "util/time_format.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

const api::GroupVersionResource kBudgets{"policy", "v1", "poddisruptionbudgets"};
const api::GroupResource kPodsGr{"", "pods"};

// Upstream's EvictionsRetry: how often a conflicting read-modify-write is tried again.
constexpr int kEvictionAttempts = 20;

// The Eviction's deleteOptions, with the request's ?dryRun propagated into them.
ApiOr<DeleteOptions> EvictionDeleteOptions(const json::object& eviction, bool dry_run) {
  DeleteOptions opts;
  opts.dry_run = dry_run;
  const json::object* d = api::FindObject(eviction, {"deleteOptions"});
  if (!d) return opts;
  if (auto it = d->find("gracePeriodSeconds"); it != d->end() && it->value().is_int64()) {
    opts.grace_period_seconds = it->value().get_int64();
  }
  opts.propagation_policy = api::Object::GetString(*d, "propagationPolicy");
  opts.precondition_uid = api::FindString(*d, {"preconditions", "uid"});
  opts.precondition_resource_version = api::FindString(*d, {"preconditions", "resourceVersion"});
  if (const json::array* dry = api::FindArray(*d, {"dryRun"})) {
    for (const auto& v : *dry) {
      if (!v.is_string() || v.get_string() != "All") {
        return BadRequest("Invalid dry run value: supported values: \"All\"");
      }
      opts.dry_run = true;
    }
  }
  return opts;
}

Response EvictionSucceeded() {
  json::object status;
  status["kind"] = "Status";
  status["apiVersion"] = "v1";
  status["metadata"] = json::object();
  status["status"] = "Success";
  status["code"] = 201;
  return JsonResponse(201, json::serialize(status));
}

bool IsConflict(const ApiError& e) {
  return e.code == 409;
}

}  // namespace

// Upstream's addConditionAndDeletePod: marks the pod DisruptionTarget=True (unless dry run),
// then deletes it with `opts`. The condition write checks the preconditions itself and moves a
// resourceVersion precondition to the version it wrote.
ApiOr<DeleteResult> APIServer::EvictPod(RequestContext& ctx, DeleteOptions opts) {
  WriteContext w;
  w.user = &ctx.req.user;
  w.dry_run = opts.dry_run;
  w.field_manager = "kube-apiserver";
  if (!opts.dry_run) {
    w.subresource = "status";
    const std::string now = util::FormatRfc3339(options_.clock->WallNow());
    auto marked = ctx.storage.Update(
        ctx.ns, ctx.ri.name,
        [&](const api::Object* current) -> ApiOr<api::Object> {
          if (!current) return NotFound(kPodsGr, ctx.ri.name);
          if (!opts.precondition_uid.empty() && opts.precondition_uid != current->uid()) {
            return Conflict(kPodsGr, ctx.ri.name,
                            "the UID in the precondition (" + opts.precondition_uid +
                                ") does not match the UID in record (" +
                                std::string(current->uid()) +
                                "). The object might have been deleted and then recreated");
          }
          if (!opts.precondition_resource_version.empty() &&
              opts.precondition_resource_version != current->resource_version()) {
            return Conflict(kPodsGr, ctx.ri.name,
                            "the ResourceVersion in the precondition (" +
                                opts.precondition_resource_version +
                                ") does not match the ResourceVersion in record (" +
                                std::string(current->resource_version()) +
                                "). The object might have been modified");
          }
          api::Object next = *current;
          next.mutable_metadata().erase("resourceVersion");
          MarkDisruptionTarget(next, now);
          return next;
        },
        w);
    if (!marked.ok()) return marked.error();
    if (!opts.precondition_resource_version.empty()) {
      opts.precondition_resource_version = std::to_string((*marked).object->revision);
    }
    w.subresource.clear();
  }
  return ctx.storage.Delete(ctx.ns, ctx.ri.name, opts, w);
}

Response APIServer::HandleEviction(RequestContext& ctx) {
  auto body = DecodeObject(ctx.req);
  if (!body.ok()) return ErrorResponse(body.error());
  // policy/v1 and the deprecated policy/v1beta1 Eviction have the same shape.
  const std::string version =
      body->api_version() == "policy/v1beta1" ? std::string("v1beta1") : std::string("v1");
  if (auto err = CheckKind(*body, {"policy", version, "Eviction"})) return ErrorResponse(*err);
  if (body->name() != ctx.ri.name) {
    return ErrorResponse(BadRequest("name in URL does not match name in Eviction object"));
  }
  auto dry = QueryDryRun(ctx.req);
  if (!dry.ok()) return ErrorResponse(dry.error());
  auto original = EvictionDeleteOptions(body->doc(), *dry);
  if (!original.ok()) return ErrorResponse(original.error());
  const bool rv_unset = original->precondition_resource_version.empty();

  // A pod with nothing left to disrupt is deleted without asking a budget. Conflicts (the pod
  // changed between the read and the delete) are retried unless the caller pinned a version.
  std::optional<api::Object> pod;
  for (int attempt = 0;; ++attempt) {
    auto cached = ctx.storage.Get(ctx.ns, ctx.ri.name, "");
    if (!cached.ok()) return ErrorResponse(cached.error());
    auto parsed = (*cached)->Parse();
    if (!parsed.ok()) return ErrorResponse(InternalError(parsed.status().message()));
    pod = std::move(*parsed);
    if (!CanIgnoreBudget(*pod)) break;
    DeleteOptions opts = *original;
    if (ShouldEnforceResourceVersion(*pod) && rv_unset) {
      opts.precondition_resource_version = std::string(pod->resource_version());
    }
    auto deleted = EvictPod(ctx, opts);
    if (deleted.ok()) return EvictionSucceeded();
    if (!IsConflict(deleted.error()) || !rv_unset || attempt + 1 >= kEvictionAttempts) {
      return ErrorResponse(deleted.error());
    }
  }

  ResourceStorage* budgets = Storage(kBudgets);
  std::vector<api::Object> in_namespace;
  if (budgets) {
    ListOptions lo;
    lo.filter.ns = ctx.ns;
    auto list = budgets->List(lo);
    if (!list.ok()) return ErrorResponse(list.error());
    for (const CachedObjectPtr& item : list->items) {
      auto parsed = item->Parse();
      if (parsed.ok()) in_namespace.push_back(std::move(*parsed));
    }
  }
  std::vector<const api::Object*> matching = BudgetsForPod(*pod, in_namespace);
  if (matching.size() > 1) return ErrorResponse(MultipleBudgets());

  // An unready pod that may bypass its budget is deleted only if it is still the version we
  // judged: had it become ready meanwhile, it would count against the budget.
  bool pin_pod_version = false;
  std::string budget_name;
  if (matching.size() == 1) {
    budget_name = std::string(matching[0]->name());
    if (!IsPodReadyForEviction(*pod) && UnreadyPodBypassesBudget(*matching[0])) {
      pin_pod_version = true;
    } else if (original->dry_run) {
      auto checked = CheckAndDecrement(*matching[0], pod->name(), "", /*dry_run=*/true);
      if (!checked.ok()) return ErrorResponse(checked.error());
    } else {
      // Take one disruption from the budget's status; the storage re-reads the budget and
      // decides again when another writer got there first (upstream's RetryOnConflict).
      WriteContext w;
      w.user = &ctx.req.user;
      w.field_manager = "kube-apiserver";
      w.subresource = "status";
      const std::string now = util::FormatRfc3339(options_.clock->WallNow());
      auto written = budgets->Update(
          ctx.ns, budget_name,
          [&](const api::Object* current) -> ApiOr<api::Object> {
            if (!current) return NotFound({"policy", "poddisruptionbudgets"}, budget_name);
            auto next = CheckAndDecrement(*current, pod->name(), now, /*dry_run=*/false);
            if (!next.ok()) return next.error();
            next->mutable_metadata().erase("resourceVersion");
            return std::move(*next);
          },
          w);
      if (!written.ok()) {
        if (IsConflict(written.error())) {
          return ErrorResponse(Timeout(
              "couldn't update PodDisruptionBudget \"" + budget_name + "\" due to conflicts", 10));
        }
        return ErrorResponse(written.error());
      }
    }
  }

  DeleteOptions opts = *original;
  if (pin_pod_version) opts.precondition_resource_version = std::string(pod->resource_version());
  auto deleted = EvictPod(ctx, opts);
  if (!deleted.ok()) {
    if (IsConflict(deleted.error()) && pin_pod_version && rv_unset) {
      return ErrorResponse(BudgetBeingProcessed(budget_name));
    }
    return ErrorResponse(deleted.error());
  }
  return EvictionSucceeded();
}

}  // namespace converge::apiserver
