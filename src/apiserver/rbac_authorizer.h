// RBAC: Roles, ClusterRoles, RoleBindings and ClusterRoleBindings (rbac.authorization.k8s.io/v1)
// decide who may do what.
//
// A request is allowed when some binding whose subjects include the user (by name, by group, or
// as a ServiceAccount) refers to a role with a rule that allows it: ClusterRoleBindings grant
// their ClusterRole everywhere; RoleBindings grant their Role or ClusterRole in their namespace
// only. There are no deny rules.
//
// Evaluation never reads the store: RbacPolicy is an immutable, indexed snapshot of the four
// kinds, rebuilt from the API server's watch caches when one of them changed (RbacPolicySource).
// Aggregated ClusterRoles (aggregationRule) are evaluated with the union of the rules of the
// ClusterRoles their selectors match, as upstream's aggregation controller would write them.
//
// Thread-safety: RbacPolicy is immutable; RbacAuthorizer and RbacPolicySource are thread-safe.
#pragma once

#include <boost/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "apiserver/authz.h"
#include "apiserver/cache_change_detector.h"
#include "apiserver/watch_cache.h"

namespace converge::apiserver {

struct RbacSubject {
  std::string kind;  // User, Group, ServiceAccount
  std::string name;
  std::string ns;  // ServiceAccount only
};

struct RbacRoleRef {
  std::string kind;  // Role or ClusterRole
  std::string name;
};

struct RbacBinding {
  std::string ns;  // empty for ClusterRoleBindings
  std::string name;
  RbacRoleRef role_ref;
  std::vector<RbacSubject> subjects;
};

// Whether `subject` (of a binding in `binding_ns`) names `user`.
bool SubjectMatches(const RbacSubject& subject, std::string_view binding_ns, const UserInfo& user);

// PolicyRules of a Role/ClusterRole document ("rules"), of a JSON array of rules.
std::vector<PolicyRule> RulesFromJson(const boost::json::array* rules);
boost::json::array RulesToJson(const std::vector<PolicyRule>& rules);
RbacBinding BindingFromJson(const boost::json::object& doc);

// An immutable snapshot of every RBAC object, indexed for evaluation.
class RbacPolicy {
 public:
  // Builds from the object documents. ClusterRoles with an aggregationRule get the rules of the
  // ClusterRoles their selectors match (in name order, without duplicates) after their own.
  static std::shared_ptr<const RbacPolicy> Build(
      const std::vector<boost::json::object>& cluster_roles,
      const std::vector<boost::json::object>& roles,
      const std::vector<boost::json::object>& cluster_role_bindings,
      const std::vector<boost::json::object>& role_bindings);

  // Calls visit(rule) for every rule granted to `user` in `ns` ("" = cluster-wide grants only)
  // until it returns true; returns whether one did.
  bool VisitRules(const UserInfo& user, std::string_view ns,
                  const std::function<bool(const PolicyRule&)>& visit) const;
  // The rules of a role reference in `ns` (a Role there, or a ClusterRole); null when missing.
  const std::vector<PolicyRule>* RoleRules(const RbacRoleRef& ref, std::string_view ns) const;

 private:
  // ClusterRole name → effective rules.
  std::unordered_map<std::string, std::vector<PolicyRule>> cluster_roles_;
  // "namespace/name" → rules.
  std::unordered_map<std::string, std::vector<PolicyRule>> roles_;
  std::vector<RbacBinding> cluster_role_bindings_;
  std::unordered_map<std::string, std::vector<RbacBinding>> role_bindings_;  // by namespace
};

// Keeps an RbacPolicy current from the four watch caches. Current() polls (without blocking) a
// watch on each cache and rebuilds the snapshot only when something changed; between changes it
// returns the same snapshot, so a request costs four short polls.
class RbacPolicySource {
 public:
  struct Caches {
    WatchCache* cluster_roles = nullptr;
    WatchCache* roles = nullptr;
    WatchCache* cluster_role_bindings = nullptr;
    WatchCache* role_bindings = nullptr;
  };
  explicit RbacPolicySource(Caches caches)
      : caches_(caches),
        changes_{CacheChangeDetector(caches.cluster_roles, 1 << 16),
                 CacheChangeDetector(caches.roles, 1 << 16),
                 CacheChangeDetector(caches.cluster_role_bindings, 1 << 16),
                 CacheChangeDetector(caches.role_bindings, 1 << 16)} {}
  std::shared_ptr<const RbacPolicy> Current() const;

 private:
  // Polls every detector (all of them, so each restarts an ended watch); whether any changed.
  bool ChangedLocked() const;

  const Caches caches_;
  mutable std::mutex mu_;
  mutable CacheChangeDetector changes_[4];            // guarded by mu_
  mutable std::shared_ptr<const RbacPolicy> policy_;  // guarded by mu_
};

class RbacAuthorizer final : public Authorizer {
 public:
  using PolicyFn = std::function<std::shared_ptr<const RbacPolicy>()>;
  // `policy` returns the current snapshot. `refresh`, when set, is called once after a request
  // was denied (it waits until the caches hold every committed write) and the request is
  // evaluated again: a binding created a moment ago is honoured without a retry loop.
  explicit RbacAuthorizer(PolicyFn policy, std::function<void()> refresh = {})
      : policy_(std::move(policy)), refresh_(std::move(refresh)) {}
  AuthzResult Authorize(const AuthzAttributes& attrs) const override;
  void RulesFor(const UserInfo& user, std::string_view ns, std::vector<PolicyRule>* out,
                bool* incomplete) const override;
  std::shared_ptr<const RbacPolicy> policy() const { return policy_(); }

 private:
  const PolicyFn policy_;
  const std::function<void()> refresh_;
};

}  // namespace converge::apiserver
