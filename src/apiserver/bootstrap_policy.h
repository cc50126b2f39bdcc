// Upstream's bootstrap RBAC policy (api/bootstrap_policy.json): cluster-admin, admin, edit, view,
// the system: roles the components and nodes need, and their bindings (cluster-admin to
// system:masters, system:basic-user and system:discovery to system:authenticated, ...).
//
// ReconcileBootstrapPolicy runs at start-up like kube-apiserver's rbac/bootstrap-roles post-start
// hook: missing objects are created; existing ones whose annotation
// rbac.authorization.kubernetes.io/autoupdate is not "false" get the rules, subjects, labels and
// annotations they lack added (never removed: local additions survive). Finally every aggregated
// ClusterRole (aggregationRule) gets the union of the rules its selectors match written into its
// rules, as upstream's clusterrole-aggregation controller would.
//
// Thread-safety: functions are independent; the loaded policy is immutable.
#pragma once

#include <vector>

#include "api/object.h"
#include "apiserver/authz.h"
#include "util/status.h"

namespace converge::apiserver {

class APIServer;

struct BootstrapPolicy {
  std::vector<api::Object> cluster_roles;
  std::vector<api::Object> cluster_role_bindings;
  std::vector<api::Object> roles;
  std::vector<api::Object> role_bindings;
};

// The policy as API objects (parsed once from the embedded file).
const BootstrapPolicy& DefaultBootstrapPolicy();

// The rules of the bootstrap system:node ClusterRole (the node authorizer's rules).
std::vector<PolicyRule> NodeRules();

// Creates or updates the bootstrap objects through `server`'s storage as system:apiserver.
util::Status ReconcileBootstrapPolicy(APIServer& server);

}  // namespace converge::apiserver
