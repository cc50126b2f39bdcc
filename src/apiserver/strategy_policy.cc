// policy/v1 PodDisruptionBudget strategy.
//
// Upstream: pkg/apis/policy/validation/validation.go (ValidatePodDisruptionBudgetSpec) and
// pkg/registry/policy/poddisruptionbudget/strategy.go.
#include "apiserver/strategy.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsObject;
using sv::Causes;

namespace {

Causes ValidateIntOrPercentField(const std::string& path, const json::value* v) {
  Causes out;
  std::optional<sv::IntOrPercent> p = sv::ParseIntOrString(v);
  if (!p) return out;
  if (p->is_string) {
    auto errs = sv::IsValidPercent(p->str_val);
    for (auto& m : errs) out.push_back(sv::InvalidRendered(path, sv::GoIntOrString(v), m));
    if (errs.empty() && sv::IntOrPercentValue(*p) > 100) {
      out.push_back(
          sv::InvalidRendered(path, sv::GoIntOrString(v), "must not be greater than 100%"));
    }
  } else if (p->int_val < 0) {
    out.push_back(sv::InvalidInt(path, p->int_val, "must be greater than or equal to 0"));
  }
  return out;
}

class PodDisruptionBudgetStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    static const json::object kEmpty;
    const json::object* spec = AsObject(obj.doc().if_contains("spec"));
    if (!spec) spec = &kEmpty;
    const json::value* min = spec->if_contains("minAvailable");
    const json::value* max = spec->if_contains("maxUnavailable");
    if (sv::IsSet(min) && sv::IsSet(max)) {
      out.push_back(FieldInvalid("spec", json::value(*spec),
                                 "minAvailable and maxUnavailable cannot be both set"));
    }
    sv::Append(out, ValidateIntOrPercentField("spec.minAvailable", min));
    sv::Append(out, ValidateIntOrPercentField("spec.maxUnavailable", max));
    sv::Append(out, sv::ValidateLabelSelectorField("spec.selector", spec->if_contains("selector")));
    if (const json::value* p = spec->if_contains("unhealthyPodEvictionPolicy"); sv::IsSet(p)) {
      std::string_view v = sv::AsString(p);
      if (v != "AlwaysAllow" && v != "IfHealthyBudget") {
        out.push_back(FieldNotSupported("spec.unhealthyPodEvictionPolicy", *p,
                                        {"AlwaysAllow", "IfHealthyBudget"}));
      }
    }
    return out;
  }

  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object&) const override {
    Causes out;
    const json::object* st = AsObject(obj.doc().if_contains("status"));
    if (!st) return out;
    for (std::string_view f : {"disruptionsAllowed", "currentHealthy", "desiredHealthy",
                               "expectedPods", "observedGeneration"}) {
      sv::Append(out, sv::NonNegative(sv::Child("status", f), st->if_contains(f)));
    }
    return out;
  }
};

}  // namespace

std::shared_ptr<const Strategy> MakePolicyStrategy(ResourceInfoPtr info) {
  if (info->gvr.group != "policy" || info->gvr.resource != "poddisruptionbudgets") return nullptr;
  return std::make_shared<PodDisruptionBudgetStrategy>(std::move(info));
}

}  // namespace converge::apiserver
