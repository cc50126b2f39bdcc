// Create-only virtual resources that answer questions about authentication and authorization
// (kubectl auth can-i / whoami), and impersonation (kubectl --as).
//
//   authorization.k8s.io/v1  SelfSubjectAccessReview   may I do X?
//                            SubjectAccessReview       may user U (groups G) do X?
//                            LocalSubjectAccessReview  the same, within the URL's namespace
//                            SelfSubjectRulesReview    what may I do in namespace N?
//   authentication.k8s.io/v1 SelfSubjectReview         who am I?
#include <algorithm>

#include "apiserver/codec.h"
#include "apiserver/handler_util.h"
#include "apiserver/server.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

json::array ToJsonArray(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

std::vector<std::string> StringList(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const auto* a = o.if_contains(key); a && a->is_array()) {
    for (const auto& v : a->get_array()) {
      if (v.is_string()) out.emplace_back(v.get_string());
    }
  }
  return out;
}

std::string StringAtPath(const json::object& o, std::initializer_list<std::string_view> path) {
  return std::string(api::FindString(o, path));
}

// The attributes a SubjectAccessReviewSpec asks about; nullopt when it names neither kind.
std::optional<AuthzAttributes> SpecAttributes(const json::object& spec) {
  AuthzAttributes a;
  if (const auto* ra = api::FindObject(spec, {"resourceAttributes"})) {
    a.resource_request = true;
    a.verb = StringAtPath(*ra, {"verb"});
    a.group = StringAtPath(*ra, {"group"});
    a.version = StringAtPath(*ra, {"version"});
    a.resource = StringAtPath(*ra, {"resource"});
    a.subresource = StringAtPath(*ra, {"subresource"});
    a.ns = StringAtPath(*ra, {"namespace"});
    a.name = StringAtPath(*ra, {"name"});
    return a;
  }
  if (const auto* nra = api::FindObject(spec, {"nonResourceAttributes"})) {
    a.verb = StringAtPath(*nra, {"verb"});
    a.path = StringAtPath(*nra, {"path"});
    return a;
  }
  return std::nullopt;
}

// The review object returned: the request's apiVersion/kind/metadata/spec plus `status`.
Response ReviewResponse(const api::Object& in, json::object status) {
  json::object out;
  out["kind"] = in.doc().contains("kind") ? in.doc().at("kind") : json::value();
  out["apiVersion"] = in.doc().contains("apiVersion") ? in.doc().at("apiVersion") : json::value();
  json::object meta;
  if (const auto* m = api::FindObject(in.doc(), {"metadata"})) meta = *m;
  meta["creationTimestamp"] = nullptr;
  out["metadata"] = std::move(meta);
  out["spec"] = in.doc().contains("spec") ? in.doc().at("spec") : json::object();
  out["status"] = std::move(status);
  return JsonResponse(201, json::serialize(out));
}

bool InGroups(const std::vector<std::string>& groups, std::string_view g) {
  return std::find(groups.begin(), groups.end(), g) != groups.end();
}

}  // namespace

Response APIServer::HandleVirtual(Request& req, const RequestInfo& ri,
                                  const api::ResourceInfo& info) {
  if (ri.verb != "create") {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  if (info.gvr.group == "authentication.k8s.io" && info.gvr.resource == "tokenreviews") {
    return HandleTokenReview(req);  // handlers_token.cc
  }
  const std::string& resource = info.gvr.resource;
  const std::string kind = info.kind;
  auto body = DecodeObject(req);
  if (!body.ok()) return ErrorResponse(body.error());
  const api::Object& in = *body;
  const json::object empty;
  const json::object* spec_ptr = api::FindObject(in.doc(), {"spec"});
  const json::object& spec = spec_ptr ? *spec_ptr : empty;
  const api::GroupVersionKind gvk = info.Gvk();

  if (resource == "selfsubjectreviews") {
    json::object user;
    user["username"] = req.user.name;
    if (!req.user.uid.empty()) user["uid"] = req.user.uid;
    user["groups"] = ToJsonArray(req.user.groups);
    json::object status;
    status["userInfo"] = std::move(user);
    return ReviewResponse(in, std::move(status));
  }

  if (resource == "selfsubjectaccessreviews" || resource == "subjectaccessreviews" ||
      resource == "localsubjectaccessreviews") {
    std::optional<AuthzAttributes> attrs = SpecAttributes(spec);
    if (!attrs) {
      return ErrorResponse(Invalid(gvk, "",
                                   {FieldRequired("spec.resourceAttributes",
                                                  "exactly one of nonResourceAttributes or "
                                                  "resourceAttributes must be specified")}));
    }
    if (resource == "selfsubjectaccessreviews") {
      attrs->user = req.user;
    } else {
      attrs->user.name = StringAtPath(spec, {"user"});
      attrs->user.uid = StringAtPath(spec, {"uid"});
      attrs->user.groups = StringList(spec, "groups");
      attrs->user.authenticated = true;
      if (attrs->user.name.empty() && attrs->user.groups.empty()) {
        return ErrorResponse(Invalid(gvk, "",
                                     {FieldRequired("spec.user",
                                                    "at least one of user or group must be "
                                                    "specified")}));
      }
    }
    if (resource == "localsubjectaccessreviews") {
      if (attrs->resource_request && attrs->ns != ri.ns) {
        return ErrorResponse(
            Invalid(gvk, "",
                    {FieldInvalidString("spec.resourceAttributes.namespace", attrs->ns,
                                        "must match metadata.namespace")}));
      }
    }
    json::object status;
    if (!authorizer_) {
      status["allowed"] = true;
    } else {
      AuthzResult r = authorizer_->Authorize(*attrs);
      status["allowed"] = r.allowed();
      if (r.decision == AuthzDecision::kDeny) status["denied"] = true;
      if (!r.reason.empty()) status["reason"] = r.reason;
    }
    return ReviewResponse(in, std::move(status));
  }

  if (resource == "selfsubjectrulesreviews") {
    std::string ns = StringAtPath(spec, {"namespace"});
    std::vector<PolicyRule> rules;
    bool incomplete = false;
    if (authorizer_) {
      authorizer_->RulesFor(req.user, ns, &rules, &incomplete);
    } else {
      rules.push_back({.verbs = {"*"}, .api_groups = {"*"}, .resources = {"*"}});
      rules.push_back({.verbs = {"*"}, .non_resource_urls = {"*"}});
    }
    json::array resource_rules, non_resource_rules;
    for (const PolicyRule& r : rules) {
      if (!r.resources.empty()) {
        json::object o;
        o["verbs"] = ToJsonArray(r.verbs);
        o["apiGroups"] = ToJsonArray(r.api_groups);
        o["resources"] = ToJsonArray(r.resources);
        if (!r.resource_names.empty()) o["resourceNames"] = ToJsonArray(r.resource_names);
        resource_rules.push_back(std::move(o));
      }
      if (!r.non_resource_urls.empty()) {
        json::object o;
        o["verbs"] = ToJsonArray(r.verbs);
        o["nonResourceURLs"] = ToJsonArray(r.non_resource_urls);
        non_resource_rules.push_back(std::move(o));
      }
    }
    json::object status;
    status["resourceRules"] = std::move(resource_rules);
    status["nonResourceRules"] = std::move(non_resource_rules);
    status["incomplete"] = incomplete;
    return ReviewResponse(in, std::move(status));
  }

  return ErrorResponse(NotFoundPath());
}

std::optional<ApiError> APIServer::Impersonate(Request& req,
                                               std::optional<UserInfo>* impersonator) {
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
  std::vector<std::pair<std::string, std::string>> extras;
  bool any = false;
  for (const auto& [k, v] : req.headers) {
    if (k == "impersonate-user") {
      user = v;
      any = true;
    } else if (k == "impersonate-group") {
      groups.push_back(v);
      any = true;
    } else if (k == "impersonate-uid") {
      uid = v;
      any = true;
    } else if (k.starts_with("impersonate-extra-")) {
      extras.emplace_back(k.substr(18), v);
      any = true;
    }
  }
  if (!any) return std::nullopt;
  if (user.empty()) {
    return BadRequest(
        "requested impersonation of groups, uid or extra without impersonating a user");
  }
  auto check = [&](std::string group, std::string resource, std::string subresource, std::string ns,
                   std::string name) -> std::optional<ApiError> {
    AuthzAttributes a;
    a.user = req.user;
    a.verb = "impersonate";
    a.resource_request = true;
    a.group = std::move(group);
    a.resource = std::move(resource);
    a.subresource = std::move(subresource);
    a.ns = std::move(ns);
    a.name = std::move(name);
    if (!authorizer_) return std::nullopt;
    AuthzResult r = authorizer_->Authorize(a);
    if (r.allowed()) return std::nullopt;
    return ForbiddenFor(a, r.reason);
  };
  constexpr std::string_view kSaPrefix = "system:serviceaccount:";
  UserInfo next;
  next.name = user;
  next.uid = uid;
  if (user.starts_with(kSaPrefix)) {
    std::string rest = user.substr(kSaPrefix.size());
    size_t colon = rest.find(':');
    std::string ns = colon == std::string::npos ? "" : rest.substr(0, colon);
    std::string name = colon == std::string::npos ? rest : rest.substr(colon + 1);
    if (auto e = check("", "serviceaccounts", "", ns, name)) return e;
    if (groups.empty()) {
      groups = {"system:serviceaccounts", "system:serviceaccounts:" + ns};
    }
  } else {
    if (auto e = check("", "users", "", "", user)) return e;
  }
  for (const auto& g : groups) {
    if (auto e = check("", "groups", "", "", g)) return e;
  }
  if (!uid.empty()) {
    if (auto e = check("authentication.k8s.io", "uids", "", "", uid)) return e;
  }
  for (const auto& [key, value] : extras) {
    if (auto e = check("authentication.k8s.io", "userextras", key, "", value)) return e;
  }
  next.groups = std::move(groups);
  if (user == "system:anonymous") {
    if (!InGroups(next.groups, "system:unauthenticated")) {
      next.groups.push_back("system:unauthenticated");
    }
  } else if (!InGroups(next.groups, "system:authenticated")) {
    next.groups.push_back("system:authenticated");
  }
  next.authenticated = true;
  *impersonator = std::move(req.user);
  req.user = std::move(next);
  return std::nullopt;
}

}  // namespace converge::apiserver
