#include "apiserver/admission_namespace_lifecycle.h"

namespace converge::apiserver {

namespace {

bool IsImmortal(std::string_view ns) {
  return ns == "default" || ns == "kube-system" || ns == "kube-public";
}

}  // namespace

std::optional<ApiError> NamespaceLifecycle::Validate(const AdmissionAttributes& attrs) {
  const api::ResourceInfo& info = *attrs.resource;
  if (info.gvr.group.empty() && info.gvr.resource == "namespaces") {
    if (attrs.operation == "DELETE" && IsImmortal(attrs.name)) {
      return Forbidden({"", "namespaces"}, attrs.name, "this namespace may not be deleted");
    }
    return std::nullopt;
  }
  if (!info.namespaced || attrs.operation != "CREATE" || attrs.ns.empty()) return std::nullopt;
  std::optional<Phase> phase = lookup_(attrs.ns);
  if (!phase) return NotFound({"", "namespaces"}, attrs.ns);
  if (*phase == Phase::kTerminating) {
    // Events may still be written: controllers report what they do while a namespace empties.
    if (info.gvr.resource == "events") return std::nullopt;
    ApiError e = Forbidden(info.gvr.Gr(), attrs.name,
                           "unable to create new content in namespace " + attrs.ns +
                               " because it is being terminated");
    e.causes.push_back({"NamespaceTerminating", "namespace " + attrs.ns + " is being terminated",
                        "metadata.namespace"});
    return e;
  }
  return std::nullopt;
}

}  // namespace converge::apiserver
