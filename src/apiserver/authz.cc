#include "apiserver/authz.h"

#include <algorithm>

#include "api/go_json.h"
#include "apiserver/authn.h"

namespace converge::apiserver {

namespace {

bool HasGroup(const UserInfo& u, std::string_view group) {
  return std::find(u.groups.begin(), u.groups.end(), group) != u.groups.end();
}

}  // namespace

AuthzAttributes AttributesFor(const RequestInfo& ri, const Request& req, const UserInfo& user) {
  AuthzAttributes a;
  a.user = user;
  a.verb = ri.verb;
  a.resource_request = ri.is_resource_request;
  if (ri.is_resource_request) {
    a.group = ri.group;
    a.version = ri.version;
    a.resource = ri.resource;
    a.subresource = ri.subresource;
    a.ns = ri.ns;
    a.name = ri.name;
    a.field_selector = std::string(req.Query("fieldSelector"));
  } else {
    a.path = req.path;
  }
  return a;
}

std::string GoQuotedList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ' ';
    out += api::GoQuote(v[i]);
  }
  return out + "]";
}

ApiError ForbiddenFor(const AuthzAttributes& attrs, std::string_view reason) {
  std::string msg;
  if (!attrs.resource_request) {
    msg = "User " + api::GoQuote(attrs.user.name) + " cannot " + attrs.verb + " path " +
          api::GoQuote(attrs.path);
  } else {
    std::string resource = attrs.resource;
    if (!attrs.subresource.empty()) resource += "/" + attrs.subresource;
    msg = "User " + api::GoQuote(attrs.user.name) + " cannot " + attrs.verb + " resource " +
          api::GoQuote(resource) + " in API group " + api::GoQuote(attrs.group);
    msg +=
        attrs.ns.empty() ? " at the cluster scope" : " in the namespace " + api::GoQuote(attrs.ns);
  }
  if (!reason.empty()) msg += ": " + std::string(reason);
  if (!attrs.resource_request) {
    ApiError e = Forbidden({}, "", "");
    e.message = "forbidden: " + msg;
    return e;
  }
  return Forbidden({attrs.group, attrs.resource}, attrs.name, msg);
}

// ---------------------------------------------------------------------------------------------
// Rule matching

bool VerbMatches(const PolicyRule& r, std::string_view verb) {
  for (const auto& v : r.verbs) {
    if (v == "*" || v == verb) return true;
  }
  return false;
}

bool ApiGroupMatches(const PolicyRule& r, std::string_view group) {
  for (const auto& g : r.api_groups) {
    if (g == "*" || g == group) return true;
  }
  return false;
}

bool ResourceMatches(const PolicyRule& r, std::string_view combined, std::string_view subresource) {
  for (const auto& res : r.resources) {
    if (res == "*" || res == combined) return true;
    // "*/status" matches the status subresource of everything.
    if (!subresource.empty() && res.size() == subresource.size() + 2 && res.starts_with("*/") &&
        std::string_view(res).substr(2) == subresource) {
      return true;
    }
  }
  return false;
}

bool ResourceNameMatches(const PolicyRule& r, std::string_view name) {
  if (r.resource_names.empty()) return true;
  return std::find(r.resource_names.begin(), r.resource_names.end(), name) !=
         r.resource_names.end();
}

bool NonResourceUrlMatches(const PolicyRule& r, std::string_view path) {
  for (const auto& u : r.non_resource_urls) {
    if (u == "*" || u == path) return true;
    if (u.ends_with('*') && path.starts_with(std::string_view(u).substr(0, u.size() - 1))) {
      return true;
    }
  }
  return false;
}

bool RuleAllows(const AuthzAttributes& attrs, const PolicyRule& r) {
  if (!VerbMatches(r, attrs.verb)) return false;
  if (!attrs.resource_request) return NonResourceUrlMatches(r, attrs.path);
  std::string combined = attrs.resource;
  if (!attrs.subresource.empty()) combined += "/" + attrs.subresource;
  return ApiGroupMatches(r, attrs.group) && ResourceMatches(r, combined, attrs.subresource) &&
         ResourceNameMatches(r, attrs.name);
}

// ---------------------------------------------------------------------------------------------
// Authorizers

AuthzResult AuthorizerChain::Authorize(const AuthzAttributes& attrs) const {
  std::string reasons;
  for (const auto& a : authorizers_) {
    AuthzResult r = a->Authorize(attrs);
    if (r.decision != AuthzDecision::kNoOpinion) return r;
    if (!r.reason.empty()) {
      if (!reasons.empty()) reasons += "\n";
      reasons += r.reason;
    }
  }
  return {AuthzDecision::kNoOpinion, reasons};
}

void AuthorizerChain::RulesFor(const UserInfo& user, std::string_view ns,
                               std::vector<PolicyRule>* out, bool* incomplete) const {
  for (const auto& a : authorizers_) a->RulesFor(user, ns, out, incomplete);
}

AuthzResult PrivilegedGroupAuthorizer::Authorize(const AuthzAttributes& attrs) const {
  if (HasGroup(attrs.user, group_)) return {AuthzDecision::kAllow, ""};
  return {};
}

void PrivilegedGroupAuthorizer::RulesFor(const UserInfo& user, std::string_view ns,
                                         std::vector<PolicyRule>* out, bool* incomplete) const {
  (void)ns;
  (void)incomplete;
  if (!HasGroup(user, group_)) return;
  out->push_back(PolicyRule{.verbs = {"*"}, .api_groups = {"*"}, .resources = {"*"}});
  out->push_back(PolicyRule{.verbs = {"*"}, .non_resource_urls = {"*"}});
}

AuthzResult AlwaysAllowPathsAuthorizer::Authorize(const AuthzAttributes& attrs) const {
  if (!attrs.resource_request && (attrs.verb == "get" || attrs.verb == "head") &&
      IsPublicPath(attrs.path)) {
    return {AuthzDecision::kAllow, ""};
  }
  return {};
}

}  // namespace converge::apiserver
