#include "apiserver/strategy_scale.h"

#include "api/labels.h"
#include "apiserver/strategy.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;

api::Object ScaleOf(const api::Object& workload) {
  json::object scale;
  scale["kind"] = "Scale";
  scale["apiVersion"] = "autoscaling/v1";
  json::object meta;
  static const json::object kEmpty;
  const json::object& wm = workload.metadata() ? *workload.metadata() : kEmpty;
  for (std::string_view f : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    sv::CopyField(meta, wm, f);
  }
  scale["metadata"] = std::move(meta);
  json::object spec;
  int64_t replicas = sv::AsInt(sv::Get(sv::Spec(workload), "replicas")).value_or(0);
  if (replicas != 0) spec["replicas"] = replicas;
  scale["spec"] = std::move(spec);
  json::object status;
  status["replicas"] = sv::AsInt(sv::Get(sv::Status(workload), "replicas")).value_or(0);
  auto selector = api::LabelSelector::FromLabelSelector(sv::Get(sv::Spec(workload), "selector"));
  if (selector.ok() && !selector->MatchesNothing()) {
    std::string s = selector->ToString();
    if (!s.empty()) status["selector"] = s;
  }
  scale["status"] = std::move(status);
  return api::Object(std::move(scale));
}

std::optional<ApiError> ApplyScale(api::Object& workload, const api::Object& scale) {
  std::vector<StatusCause> causes =
      ValidateObjectMeta(scale, /*namespaced=*/true, Strategy::NameRule::kDnsSubdomain);
  const json::value* replicas = sv::Get(sv::Spec(scale), "replicas");
  int64_t n = sv::AsInt(replicas).value_or(0);
  if (n < 0)
    causes.push_back(sv::InvalidInt("spec.replicas", n, "must be greater than or equal to 0"));
  if (!causes.empty()) {
    return Invalid({"autoscaling", "v1", "Scale"}, workload.name(), std::move(causes));
  }
  if (!scale.resource_version().empty()) workload.set_resource_version(scale.resource_version());
  api::EnsureObject(workload.mutable_doc(), "spec")["replicas"] = n;
  return std::nullopt;
}

}  // namespace converge::apiserver
