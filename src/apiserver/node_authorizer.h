// The node authorizer: a kubelet's identity (user system:node:<name> in group system:nodes) may
// touch only what belongs to its node (upstream's Node authorization mode, simplified to the
// objects Converge's simulated kubelets use):
//
//   nodes               its own Node (get, update, patch, delete, nodes/status); list/watch
//                       only with fieldSelector metadata.name=<name>; create (NodeRestriction
//                       admission checks the name)
//   pods                pods bound to it (spec.nodeName = <name>): get, update, patch, delete,
//                       pods/status, pods/eviction; list/watch only with fieldSelector
//                       spec.nodeName=<name>; create (NodeRestriction checks the binding)
//   leases              its own Lease in kube-node-lease
//   events              create, update, patch
//   everything else     the rules of upstream's system:node role (services, configmaps, ...)
//
// Anything else gets no opinion with upstream's reason ("no relationship found between node
// 'n1' and this object"), so RBAC decides — and grants nodes nothing by default.
//
// Thread-safety: Authorize is const and thread-safe when `pod_node` is.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/authz.h"

namespace converge::apiserver {

struct NodeAuthorizerOptions {
  // The spec.nodeName of pod ns/name ("" when unbound), nullopt when there is no such pod.
  std::function<std::optional<std::string>(std::string_view ns, std::string_view name)> pod_node;
  // What a node may do to objects the authorizer does not track (upstream's NodeRules()).
  std::vector<PolicyRule> node_rules;
};

// The node name of a node identity ("system:node:<name>" in group system:nodes), or nullopt.
std::optional<std::string> NodeNameOf(const UserInfo& user);

// Whether a fieldSelector string has the term `field=value` (as `=` or `==`).
bool FieldSelectorRequires(std::string_view selector, std::string_view field,
                           std::string_view value);

class NodeAuthorizer final : public Authorizer {
 public:
  explicit NodeAuthorizer(NodeAuthorizerOptions options) : options_(std::move(options)) {}
  AuthzResult Authorize(const AuthzAttributes& attrs) const override;
  void RulesFor(const UserInfo& user, std::string_view ns, std::vector<PolicyRule>* out,
                bool* incomplete) const override;

 private:
  const NodeAuthorizerOptions options_;
};

}  // namespace converge::apiserver
