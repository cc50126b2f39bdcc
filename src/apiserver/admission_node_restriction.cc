#include "apiserver/admission_node_restriction.h"

#include "api/object.h"
#include "apiserver/node_authorizer.h"

namespace converge::apiserver {

std::optional<ApiError> NodeRestriction::Validate(const AdmissionAttributes& attrs) {
  if (!attrs.user || !attrs.resource || !attrs.object) return std::nullopt;
  std::optional<std::string> node = NodeNameOf(*attrs.user);
  if (!node) return std::nullopt;
  const api::GroupVersionResource& gvr = attrs.resource->gvr;
  const api::GroupResource gr{gvr.group, gvr.resource};
  std::string name(attrs.object->name());
  if (name.empty()) name = attrs.name;
  if (gvr.group.empty() && gvr.resource == "nodes") {
    if (name != *node) {
      return Forbidden(gr, name,
                       "node \"" + *node + "\" is not allowed to modify node \"" + name + "\"");
    }
    return std::nullopt;
  }
  if (gvr.group.empty() && gvr.resource == "pods") {
    std::string_view bound = api::FindString(attrs.object->doc(), {"spec", "nodeName"});
    if (bound != *node) {
      return Forbidden(gr, name,
                       "node \"" + *node + "\" can only create or update pods bound to it");
    }
    return std::nullopt;
  }
  if (gvr.group == "coordination.k8s.io" && gvr.resource == "leases") {
    if (attrs.ns != "kube-node-lease" || name != *node) {
      return Forbidden(gr, name,
                       "can only access node lease with the same name as the requesting node");
    }
  }
  return std::nullopt;
}

}  // namespace converge::apiserver
