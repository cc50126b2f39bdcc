// coordination.k8s.io/v1 Lease strategy.
//
// Upstream: pkg/apis/coordination/validation/validation.go (ValidateLeaseSpec) and
// pkg/registry/coordination/lease/strategy.go. Leases have no status and no defaults.
#include "apiserver/strategy.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsInt;
using sv::Causes;

namespace {

Causes ValidateLeaseSpec(const api::Object& lease) {
  Causes out;
  const json::object* spec = api::FindObject(lease.doc(), {"spec"});
  if (!spec) return out;
  auto get = [&](std::string_view k) { return spec->if_contains(k); };
  if (std::optional<int64_t> d = AsInt(get("leaseDurationSeconds")); d && *d <= 0) {
    out.push_back(sv::InvalidInt("spec.leaseDurationSeconds", *d, "must be greater than 0"));
  }
  if (std::optional<int64_t> t = AsInt(get("leaseTransitions")); t && *t < 0) {
    out.push_back(
        sv::InvalidInt("spec.leaseTransitions", *t, "must be greater than or equal to 0"));
  }
  std::string_view strategy = sv::AsString(get("strategy"));
  if (sv::IsSet(get("strategy"))) {
    if (strategy.find('/') == std::string_view::npos) {
      if (strategy != "OldestEmulationVersion") {
        out.push_back(
            FieldNotSupported("spec.strategy", json::value(strategy), {"OldestEmulationVersion"}));
      }
    } else {
      sv::Append(out, sv::ValidateQualifiedNameField("spec.strategy", strategy));
    }
  }
  if (!sv::AsString(get("preferredHolder")).empty() && strategy.empty()) {
    out.push_back(
        FieldForbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"));
  }
  return out;
}

class LeaseStrategy : public Strategy {
 public:
  using Strategy::Strategy;
  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateLeaseSpec(obj);
  }
};

}  // namespace

std::shared_ptr<const Strategy> MakeCoordinationStrategy(ResourceInfoPtr info) {
  if (info->gvr.group != "coordination.k8s.io" || info->gvr.resource != "leases") return nullptr;
  return std::make_shared<LeaseStrategy>(std::move(info));
}

}  // namespace converge::apiserver
