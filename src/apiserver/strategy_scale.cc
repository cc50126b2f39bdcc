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
  const json::object& wm = sv::Metadata(workload);
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

namespace {

std::vector<std::string_view> PathParts(std::string_view path) {
  if (path.starts_with('.')) path.remove_prefix(1);
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size() && !path.empty()) {
    size_t dot = path.find('.', start);
    if (dot == std::string_view::npos) dot = path.size();
    parts.push_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  return parts;
}

const json::value* AtPath(const json::object& o, std::string_view path) {
  const json::object* cur = &o;
  const json::value* v = nullptr;
  for (std::string_view part : PathParts(path)) {
    if (cur == nullptr) return nullptr;
    v = cur->if_contains(part);
    if (v == nullptr) return nullptr;
    cur = v->if_object();
  }
  return v;
}

json::object ScaleMetadata(const api::Object& obj) {
  json::object meta;
  const json::object& m = sv::Metadata(obj);
  for (std::string_view f : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    sv::CopyField(meta, m, f);
  }
  return meta;
}

// Scale validation of a custom resource's Scale (apiextensions' ValidateScale checks only the
// replica count, so cluster-scoped kinds scale too); the replica count.
std::optional<ApiError> CheckScale(const api::Object& target, const api::Object& scale,
                                   int64_t* replicas) {
  std::vector<StatusCause> causes;
  *replicas = sv::AsInt(sv::Get(sv::Spec(scale), "replicas")).value_or(0);
  if (*replicas < 0) {
    causes.push_back(
        sv::InvalidInt("spec.replicas", *replicas, "must be greater than or equal to 0"));
  }
  if (!causes.empty()) {
    return Invalid({"autoscaling", "v1", "Scale"}, target.name(), std::move(causes));
  }
  return std::nullopt;
}

}  // namespace

api::Object CustomResourceScaleOf(const api::Object& cr, const api::CustomResourceScale& paths) {
  json::object scale;
  scale["kind"] = "Scale";
  scale["apiVersion"] = "autoscaling/v1";
  scale["metadata"] = ScaleMetadata(cr);
  json::object spec;
  int64_t replicas = sv::AsInt(AtPath(cr.doc(), paths.spec_replicas_path)).value_or(0);
  if (replicas != 0) spec["replicas"] = replicas;
  scale["spec"] = std::move(spec);
  json::object status;
  status["replicas"] = sv::AsInt(AtPath(cr.doc(), paths.status_replicas_path)).value_or(0);
  if (!paths.label_selector_path.empty()) {
    std::string_view selector = sv::AsString(AtPath(cr.doc(), paths.label_selector_path));
    if (!selector.empty()) status["selector"] = selector;
  }
  scale["status"] = std::move(status);
  return api::Object(std::move(scale));
}

std::optional<ApiError> ApplyCustomResourceScale(api::Object& cr, const api::Object& scale,
                                                 const api::CustomResourceScale& paths) {
  int64_t n = 0;
  if (auto err = CheckScale(cr, scale, &n)) return err;
  if (!scale.resource_version().empty()) cr.set_resource_version(scale.resource_version());
  std::vector<std::string_view> parts = PathParts(paths.spec_replicas_path);
  if (parts.empty()) return std::nullopt;
  json::object* cur = &cr.mutable_doc();
  for (size_t i = 0; i + 1 < parts.size(); ++i) cur = &api::EnsureObject(*cur, parts[i]);
  (*cur)[parts.back()] = n;
  return std::nullopt;
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
