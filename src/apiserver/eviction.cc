#include "apiserver/eviction.h"

#include <string>

#include "api/labels.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

constexpr std::string_view kCannotEvict =
    "Cannot evict pod as it would violate the pod's disruption budget.";

std::string_view Phase(const api::Object& pod) {
  return api::FindString(pod.doc(), {"status", "phase"});
}

bool IsTerminal(const api::Object& pod) {
  std::string_view phase = Phase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

int64_t StatusInt(const api::Object& budget, std::string_view field) {
  return api::FindInt(budget.doc(), {"status", field});
}

// Upstream's pdbhelper.UpdateDisruptionAllowedCondition: DisruptionAllowed True/SufficientPods
// while disruptions are allowed, else False/InsufficientPods; lastTransitionTime moves only when
// the status flips.
void SetDisruptionAllowedCondition(json::object& status, std::string_view now) {
  bool allowed = api::FindInt(status, {"disruptionsAllowed"}) > 0;
  json::object want;
  want["type"] = "DisruptionAllowed";
  want["status"] = allowed ? "True" : "False";
  want["reason"] = allowed ? "SufficientPods" : "InsufficientPods";
  want["message"] = "";
  want["observedGeneration"] = api::FindInt(status, {"observedGeneration"});
  want["lastTransitionTime"] = now;
  json::value& conds = status["conditions"];
  if (!conds.is_array()) conds = json::array();
  for (json::value& c : conds.get_array()) {
    if (!c.is_object() || api::FindString(c.get_object(), {"type"}) != "DisruptionAllowed") {
      continue;
    }
    json::object& existing = c.get_object();
    if (api::FindString(existing, {"status"}) == api::FindString(want, {"status"})) {
      if (const json::value* t = existing.if_contains("lastTransitionTime")) {
        want["lastTransitionTime"] = *t;
      }
    }
    existing = std::move(want);
    return;
  }
  conds.get_array().emplace_back(std::move(want));
}

}  // namespace

void MarkDisruptionTarget(api::Object& pod, std::string_view now) {
  json::object& status = api::EnsureObject(pod.mutable_doc(), "status");
  json::value& conds = status["conditions"];
  if (!conds.is_array()) conds = json::array();
  json::object want;
  want["type"] = kDisruptionTargetCondition;
  want["status"] = "True";
  want["lastProbeTime"] = nullptr;
  want["lastTransitionTime"] = now;
  want["reason"] = "EvictionByEvictionAPI";
  want["message"] = "Eviction API: evicting";
  for (json::value& c : conds.get_array()) {
    if (!c.is_object() || api::FindString(c.get_object(), {"type"}) != kDisruptionTargetCondition) {
      continue;
    }
    if (api::FindString(c.get_object(), {"status"}) == "True") {
      if (const json::value* t = c.get_object().if_contains("lastTransitionTime")) {
        want["lastTransitionTime"] = *t;
      }
    }
    c = std::move(want);
    return;
  }
  conds.get_array().emplace_back(std::move(want));
}

bool CanIgnoreBudget(const api::Object& pod) {
  return IsTerminal(pod) || Phase(pod) == "Pending" || pod.being_deleted();
}

bool ShouldEnforceResourceVersion(const api::Object& pod) {
  return !IsTerminal(pod) && !pod.being_deleted();
}

bool IsPodReadyForEviction(const api::Object& pod) {
  const json::array* conds = api::FindArray(pod.doc(), {"status", "conditions"});
  if (!conds) return false;
  for (const json::value& c : *conds) {
    if (!c.is_object()) continue;
    if (api::FindString(c.get_object(), {"type"}) == "Ready") {
      return api::FindString(c.get_object(), {"status"}) == "True";
    }
  }
  return false;
}

std::vector<const api::Object*> BudgetsForPod(const api::Object& pod,
                                              const std::vector<api::Object>& budgets) {
  std::vector<const api::Object*> out;
  for (const api::Object& b : budgets) {
    if (b.namespace_() != pod.namespace_()) continue;
    auto selector = api::LabelSelector::FromLabelSelector(api::Find(b.doc(), {"spec", "selector"}));
    if (!selector.ok() || !selector->Matches(pod.labels())) continue;
    out.push_back(&b);
  }
  return out;
}

bool UnreadyPodBypassesBudget(const api::Object& budget) {
  if (api::FindString(budget.doc(), {"spec", "unhealthyPodEvictionPolicy"}) == "AlwaysAllow") {
    return true;
  }
  int64_t desired = StatusInt(budget, "desiredHealthy");
  return StatusInt(budget, "currentHealthy") >= desired && desired > 0;
}

ApiError BudgetBeingProcessed(std::string_view budget_name) {
  ApiError e = TooManyRequests(std::string(kCannotEvict), 10);
  e.causes.push_back({"DisruptionBudget",
                      "The disruption budget " + std::string(budget_name) +
                          " is still being processed by the server.",
                      ""});
  return e;
}

ApiError MultipleBudgets() {
  ApiError e;
  e.code = 500;
  e.message =
      "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
      "support.";
  return e;
}

ApiOr<api::Object> CheckAndDecrement(const api::Object& budget, std::string_view pod_name,
                                     std::string_view now, bool dry_run) {
  const std::string name(budget.name());
  const api::GroupResource gr{"policy", "poddisruptionbudget"};
  if (StatusInt(budget, "observedGeneration") < budget.generation()) {
    return BudgetBeingProcessed(name);
  }
  int64_t allowed = StatusInt(budget, "disruptionsAllowed");
  if (allowed < 0) return Forbidden(gr, name, "pdb disruptions allowed is negative");
  const json::object* disrupted = api::FindObject(budget.doc(), {"status", "disruptedPods"});
  if (disrupted && disrupted->size() > kMaxDisruptedPods) {
    return Forbidden(gr, name,
                     "DisruptedPods map too big - too many evictions not confirmed by PDB "
                     "controller");
  }
  if (allowed == 0) {
    ApiError e = TooManyRequests(std::string(kCannotEvict), 0);
    e.causes.push_back({"DisruptionBudget",
                        "The disruption budget " + name + " needs " +
                            std::to_string(StatusInt(budget, "desiredHealthy")) +
                            " healthy pods and has " +
                            std::to_string(StatusInt(budget, "currentHealthy")) + " currently",
                        ""});
    return e;
  }
  api::Object next = budget;
  json::object& status = api::EnsureObject(next.mutable_doc(), "status");
  status["disruptionsAllowed"] = allowed - 1;
  if (allowed - 1 == 0) SetDisruptionAllowedCondition(status, now);
  if (!dry_run) api::EnsureObject(status, "disruptedPods")[pod_name] = now;
  return next;
}

}  // namespace converge::apiserver
