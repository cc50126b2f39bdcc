// RBAC escalation prevention: nobody grants permissions they do not hold (upstream's
// pkg/registry/rbac/validation and the rbac storage wrappers).
//
//   - Creating or updating a Role/ClusterRole whose rules the user does not hold is 403, unless
//     the user may `escalate` that role.
//   - Creating or updating a RoleBinding/ClusterRoleBinding is 403 unless the user may `bind` the
//     referenced role or already holds every rule in it (in the binding's namespace).
//   - Setting a ClusterRole's aggregationRule needs every permission (cluster-admin).
//   - system:masters is exempt.
//
//   roles.rbac.authorization.k8s.io "r" is forbidden: user "alice" (groups=["g"
//   "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
//   {APIGroups:[""], Resources:["pods"], Verbs:["delete"]}
//
// The checks run as a validating admission plugin, so they see the final object of a create,
// update, patch or apply.
//
// Thread-safety: the plugin is stateless apart from the const authorizer; thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/admission.h"
#include "apiserver/authz.h"
#include "apiserver/rbac_authorizer.h"

namespace converge::apiserver {

// The parts of `requested` that `owner` rules do not cover, as upstream reports them: broken into
// one verb/group/resource/name each, then verbs of the same group/resource merged back.
std::vector<PolicyRule> UncoveredRules(const std::vector<PolicyRule>& owner,
                                       const std::vector<PolicyRule>& requested);

// upstream's PolicyRule.CompactString: {APIGroups:[""], Resources:["pods"], Verbs:["get"]}.
std::string CompactString(const PolicyRule& r);

// nullopt when `user` holds every rule of `requested` in `ns` according to `authorizer`; else
// the "user ... is attempting to grant RBAC permissions not currently held:..." message.
std::optional<std::string> ConfirmNoEscalation(const Authorizer& authorizer, const UserInfo& user,
                                               std::string_view ns,
                                               const std::vector<PolicyRule>& requested);

class RbacEscalationAdmission final : public AdmissionPlugin {
 public:
  // `authorizer` is the server's whole chain (escalate/bind checks and the user's rules);
  // `policy` gives the current RBAC snapshot (the rules a binding's roleRef grants).
  RbacEscalationAdmission(std::shared_ptr<const Authorizer> authorizer,
                          std::function<std::shared_ptr<const RbacPolicy>()> policy)
      : authorizer_(std::move(authorizer)), policy_(std::move(policy)) {}
  std::string_view name() const override { return "RBACEscalation"; }
  std::optional<ApiError> Validate(const AdmissionAttributes& attrs) override;

 private:
  const std::shared_ptr<const Authorizer> authorizer_;
  const std::function<std::shared_ptr<const RbacPolicy>()> policy_;
};

}  // namespace converge::apiserver
