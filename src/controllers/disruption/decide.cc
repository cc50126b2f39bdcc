#include "controllers/disruption/decide.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "controllers/common/pod_util.h"
#include "util/time_format.h"

namespace converge::controllers::disruption {

namespace json = boost::json;

namespace {

// Sets the DisruptionAllowed condition as apimeta.SetStatusCondition does: lastTransitionTime
// moves only when the status changes.
void SetDisruptionAllowed(json::object& status, bool allowed, std::string_view reason,
                          std::string_view message, util::Clock::WallTime now) {
  json::object want;
  want["type"] = "DisruptionAllowed";
  want["status"] = allowed ? "True" : "False";
  want["observedGeneration"] = api::FindInt(status, {"observedGeneration"});
  want["lastTransitionTime"] = util::FormatRfc3339(now);
  want["reason"] = reason;
  want["message"] = message;
  json::value& conds = status["conditions"];
  if (!conds.is_array()) conds = json::array();
  for (json::value& c : conds.get_array()) {
    if (!c.is_object() || api::FindString(c.get_object(), {"type"}) != "DisruptionAllowed") {
      continue;
    }
    if (api::FindString(c.get_object(), {"status"}) == api::FindString(want, {"status"})) {
      if (const json::value* t = c.get_object().if_contains("lastTransitionTime")) {
        want["lastTransitionTime"] = *t;
      }
    }
    c = std::move(want);
    return;
  }
  conds.get_array().emplace_back(std::move(want));
}

const json::object& OldStatus(const api::Object& budget) {
  static const json::object kEmpty;
  const json::object* s = api::FindObject(budget.doc(), {"status"});
  return s ? *s : kEmpty;
}

struct DesiredCounts {
  int32_t expected = 0;
  int32_t desired = 0;
  std::vector<std::string> unmanaged;
};

// Upstream's getExpectedPodCount.
util::StatusOr<DesiredCounts> ExpectedPodCount(const BudgetSnapshot& s) {
  DesiredCounts out;
  const json::value* max = api::Find(s.budget->doc(), {"spec", "maxUnavailable"});
  const json::value* min = api::Find(s.budget->doc(), {"spec", "minAvailable"});
  auto scale = [&]() -> util::Status {
    if (!s.resolve) return util::FailedPrecondition("no scale resolver");
    auto e = GetExpectedScale(s.pods, s.resolve);
    if (!e.ok()) return e.status();
    out.expected = e->count;
    out.unmanaged = std::move(e->unmanaged);
    return util::Status();
  };
  if (max && !max->is_null()) {
    CONVERGE_RETURN_IF_ERROR(scale());
    auto v = ScaledValue(*max, out.expected);
    if (!v.ok()) return v.status();
    out.desired = std::max(0, out.expected - *v);
  } else if (min && min->is_int64()) {
    out.desired = static_cast<int32_t>(min->get_int64());
    out.expected = static_cast<int32_t>(s.pods.size());
  } else if (min && min->is_string()) {
    CONVERGE_RETURN_IF_ERROR(scale());
    auto v = ScaledValue(*min, out.expected);
    if (!v.ok()) return v.status();
    out.desired = *v;
  }
  return out;
}

}  // namespace

util::StatusOr<int32_t> ScaledValue(const json::value& v, int32_t total) {
  if (v.is_int64()) return static_cast<int32_t>(v.get_int64());
  if (v.is_uint64()) return static_cast<int32_t>(v.get_uint64());
  if (!v.is_string()) return util::InvalidArgument("invalid type: neither int nor percentage");
  std::string_view s = v.get_string();
  int64_t percent = 0;
  if (s.size() < 2 || s.back() != '%' ||
      std::from_chars(s.data(), s.data() + s.size() - 1, percent).ptr != s.data() + s.size() - 1) {
    return util::InvalidArgument("invalid value for IntOrString: invalid value \"" +
                                 std::string(s) + "\"");
  }
  // Rounded up: ceil(percent * total / 100).
  return static_cast<int32_t>((percent * total + 99) / 100);
}

util::StatusOr<ExpectedScale> GetExpectedScale(const std::vector<api::ObjectPtr>& pods,
                                               const ScaleResolver& resolve) {
  ExpectedScale out;
  // Keyed by the resolved controller, so a Deployment is counted once however many of its
  // ReplicaSets the pods name.
  std::map<std::string, int32_t> scale_by_controller;
  std::set<std::string> resolved_refs;
  for (const api::ObjectPtr& pod : pods) {
    std::optional<OwnerRef> ref = GetControllerOf(*pod);
    if (!ref) {
      out.unmanaged.emplace_back(pod->name());
      continue;
    }
    if (resolved_refs.contains(ref->uid)) continue;
    auto found = resolve(pod->namespace_(), *ref);
    if (!found.ok()) return found.status();
    if (!*found) {
      return util::FailedPrecondition("found no controllers for pod \"" + std::string(pod->name()) +
                                      "\"");
    }
    scale_by_controller[(*found)->uid] = (*found)->replicas;
    resolved_refs.insert(ref->uid);
  }
  for (const auto& [uid, replicas] : scale_by_controller) out.count += replicas;
  return out;
}

BudgetPlan DecideBudget(const BudgetSnapshot& s) {
  BudgetPlan plan;
  const api::Object& budget = *s.budget;
  const json::object& old = OldStatus(budget);
  auto counts = ExpectedPodCount(s);
  if (!counts.ok()) {
    // Fail safe: allow nothing until the counts can be computed again.
    json::object status = old;
    status["disruptionsAllowed"] = 0;
    SetDisruptionAllowed(status, false, "SyncFailed", counts.status().message(), s.now);
    if (status != old) plan.status = std::move(status);
    plan.error = counts.status();
    return plan;
  }
  plan.unmanaged_pods = std::move(counts->unmanaged);

  // disruptedPods: keep entries of live pods younger than kDeletionTimeout.
  json::object disrupted;
  std::optional<util::Clock::WallTime> recheck;
  const json::object* old_disrupted = api::FindObject(old, {"disruptedPods"});
  for (const api::ObjectPtr& pod : s.pods) {
    if (!old_disrupted || pod->being_deleted()) continue;
    auto it = old_disrupted->find(pod->name());
    if (it == old_disrupted->end() || !it->value().is_string()) continue;
    std::optional<util::WallTime> at = util::ParseRfc3339(it->value().get_string());
    if (!at) continue;
    util::Clock::WallTime expires = *at + kDeletionTimeout;
    if (expires < s.now) {
      plan.not_deleted.emplace_back(pod->name());
      continue;
    }
    if (!recheck || expires < *recheck) recheck = expires;
    disrupted[pod->name()] = it->value();
  }
  if (recheck) plan.recheck_after = *recheck - s.now;

  int32_t healthy = 0;
  for (const api::ObjectPtr& pod : s.pods) {
    if (pod->being_deleted() || disrupted.contains(pod->name())) continue;
    if (IsPodReady(*pod)) ++healthy;
  }
  int32_t allowed = healthy - counts->desired;
  if (counts->expected <= 0 || allowed <= 0) allowed = 0;

  json::object status;
  status["observedGeneration"] = budget.generation();
  if (!disrupted.empty()) status["disruptedPods"] = std::move(disrupted);
  status["disruptionsAllowed"] = allowed;
  status["currentHealthy"] = healthy;
  status["desiredHealthy"] = counts->desired;
  status["expectedPods"] = counts->expected;
  if (const json::value* c = old.if_contains("conditions")) status["conditions"] = *c;
  if (allowed > 0) {
    SetDisruptionAllowed(status, true, "SufficientPods", "", s.now);
  } else {
    SetDisruptionAllowed(status, false, "InsufficientPods", "", s.now);
  }
  if (status != old) plan.status = std::move(status);
  return plan;
}

}  // namespace converge::controllers::disruption
