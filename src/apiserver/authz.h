// Authorization: may this user do this (seed §三 step 2)? Upstream's authorizer chain.
//
// Every request is turned into Attributes (user, verb, API group, resource, subresource,
// namespace, name — or a non-resource path) and asked of a chain of Authorizers in order. Each
// answers Allow, Deny or NoOpinion; the first Allow or Deny decides, and a request that nobody
// allows is 403 Forbidden with upstream's message:
//
//   pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the
//   namespace "default"
//
// The chain the API server builds (server.cc): privileged groups (system:masters) → always-allowed
// paths (health, version, discovery) → the node authorizer → RBAC.
//
// Thread-safety: Authorize and RulesFor are const and thread-safe in every implementation.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/errors.h"
#include "apiserver/request.h"
#include "apiserver/request_info.h"

namespace converge::apiserver {

// What a request asks to do (upstream's authorizer.Attributes).
struct AuthzAttributes {
  UserInfo user;
  // get, list, watch, create, update, patch, delete, deletecollection, and the special verbs
  // (impersonate, bind, escalate, use, ...). For non-resource requests: the lower-case method.
  std::string verb;
  bool resource_request = false;
  std::string group;
  std::string version;
  std::string resource;
  std::string subresource;
  std::string ns;
  std::string name;
  std::string path;  // non-resource requests
  // The request's ?fieldSelector (the node authorizer allows a node to list only its own pods).
  std::string field_selector;
};

// The attributes of an API request made by `user`.
AuthzAttributes AttributesFor(const RequestInfo& ri, const Request& req, const UserInfo& user);

enum class AuthzDecision { kNoOpinion, kAllow, kDeny };

struct AuthzResult {
  AuthzDecision decision = AuthzDecision::kNoOpinion;
  // Why (shown after the forbidden message when the request is denied). May be empty.
  std::string reason;
  bool allowed() const { return decision == AuthzDecision::kAllow; }
};

// One rule of a Role or ClusterRole (rbac.authorization.k8s.io/v1 PolicyRule).
struct PolicyRule {
  std::vector<std::string> verbs;
  std::vector<std::string> api_groups;
  std::vector<std::string> resources;
  std::vector<std::string> resource_names;
  std::vector<std::string> non_resource_urls;
  bool operator==(const PolicyRule&) const = default;
};

class Authorizer {
 public:
  virtual ~Authorizer() = default;
  virtual AuthzResult Authorize(const AuthzAttributes& attrs) const = 0;
  // Appends the rules this authorizer grants `user` in namespace `ns` ("" = cluster-wide rules
  // only); sets *incomplete when it cannot list them all. For SelfSubjectRulesReview and the
  // RBAC escalation checks.
  virtual void RulesFor(const UserInfo& user, std::string_view ns, std::vector<PolicyRule>* out,
                        bool* incomplete) const {
    (void)user;
    (void)ns;
    (void)out;
    (void)incomplete;
  }
};

// Asks each authorizer in order; the first Allow or Deny wins. NoOpinion reasons are joined.
class AuthorizerChain final : public Authorizer {
 public:
  void Add(std::shared_ptr<const Authorizer> a) { authorizers_.push_back(std::move(a)); }
  AuthzResult Authorize(const AuthzAttributes& attrs) const override;
  void RulesFor(const UserInfo& user, std::string_view ns, std::vector<PolicyRule>* out,
                bool* incomplete) const override;

 private:
  std::vector<std::shared_ptr<const Authorizer>> authorizers_;  // constant after start-up
};

// Allows everything to members of a privileged group (system:masters). Upstream's
// privilegedGroups authorizer: it cannot be locked out by deleting RBAC objects.
class PrivilegedGroupAuthorizer final : public Authorizer {
 public:
  explicit PrivilegedGroupAuthorizer(std::string group = "system:masters")
      : group_(std::move(group)) {}
  AuthzResult Authorize(const AuthzAttributes& attrs) const override;
  void RulesFor(const UserInfo& user, std::string_view ns, std::vector<PolicyRule>* out,
                bool* incomplete) const override;

 private:
  const std::string group_;
};

// Allows GET of the paths anyone may read — health, version and discovery
// (upstream's --authorization-always-allow-paths).
class AlwaysAllowPathsAuthorizer final : public Authorizer {
 public:
  AuthzResult Authorize(const AuthzAttributes& attrs) const override;
};

// The 403 for a denied request: `<resource>[.<group>] ["<name>"] is forbidden: User "<user>"
// cannot <verb> resource "<resource>[/<sub>]" in API group "<group>" in the namespace "<ns>"`
// (or `at the cluster scope`, or `forbidden: User "u" cannot get path "/p"`), then
// `: <reason>` when there is one.
ApiError ForbiddenFor(const AuthzAttributes& attrs, std::string_view reason);

// Matching primitives of RBAC rules (upstream's rbac.RuleAllows and friends).
bool VerbMatches(const PolicyRule& r, std::string_view verb);
bool ApiGroupMatches(const PolicyRule& r, std::string_view group);
// `resource` is "pods" or "pods/status"; rules may say "*", "pods/status" or "*/status".
bool ResourceMatches(const PolicyRule& r, std::string_view combined, std::string_view subresource);
bool ResourceNameMatches(const PolicyRule& r, std::string_view name);
// Exact, "*", or a prefix ending in "*".
bool NonResourceUrlMatches(const PolicyRule& r, std::string_view path);
bool RuleAllows(const AuthzAttributes& attrs, const PolicyRule& r);

// Go's %q of a []string: ["a" "b"].
std::string GoQuotedList(const std::vector<std::string>& v);

}  // namespace converge::apiserver
