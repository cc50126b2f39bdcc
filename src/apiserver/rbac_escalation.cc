#include "apiserver/rbac_escalation.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "api/go_json.h"
#include "api/object.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

constexpr std::string_view kRbacGroup = "rbac.authorization.k8s.io";

bool Has(const std::vector<std::string>& set, std::string_view v) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

bool HasAll(const std::vector<std::string>& set, const std::vector<std::string>& want) {
  for (const auto& w : want) {
    if (!Has(set, w)) return false;
  }
  return true;
}

// One verb on one group/resource (and at most one name), or one verb on one URL.
std::vector<PolicyRule> Breakdown(const PolicyRule& rule) {
  std::vector<PolicyRule> out;
  for (const auto& group : rule.api_groups) {
    for (const auto& resource : rule.resources) {
      for (const auto& verb : rule.verbs) {
        if (rule.resource_names.empty()) {
          out.push_back({.verbs = {verb}, .api_groups = {group}, .resources = {resource}});
        }
        for (const auto& name : rule.resource_names) {
          out.push_back({.verbs = {verb},
                         .api_groups = {group},
                         .resources = {resource},
                         .resource_names = {name}});
        }
      }
    }
  }
  for (const auto& url : rule.non_resource_urls) {
    for (const auto& verb : rule.verbs)
      out.push_back({.verbs = {verb}, .non_resource_urls = {url}});
  }
  return out;
}

bool ResourcesCoverAll(const std::vector<std::string>& set, const std::vector<std::string>& want) {
  if (Has(set, "*") || HasAll(set, want)) return true;
  for (const auto& path : want) {
    if (Has(set, path)) continue;
    size_t slash = path.find('/');
    if (slash == std::string::npos) return false;
    if (!Has(set, "*/" + path.substr(slash + 1))) return false;
  }
  return true;
}

bool UrlCovers(std::string_view owner, std::string_view sub) {
  if (owner == sub) return true;
  if (!owner.ends_with('*')) return false;
  while (owner.ends_with('*')) owner.remove_suffix(1);
  return sub.starts_with(owner);
}

bool UrlsCoverAll(const std::vector<std::string>& set, const std::vector<std::string>& want) {
  for (const auto& path : want) {
    bool covered = false;
    for (const auto& owner : set) covered |= UrlCovers(owner, path);
    if (!covered) return false;
  }
  return true;
}

bool RuleCovers(const PolicyRule& owner, const PolicyRule& sub) {
  bool verbs = Has(owner.verbs, "*") || HasAll(owner.verbs, sub.verbs);
  bool groups = Has(owner.api_groups, "*") || HasAll(owner.api_groups, sub.api_groups);
  bool resources = ResourcesCoverAll(owner.resources, sub.resources);
  bool urls = UrlsCoverAll(owner.non_resource_urls, sub.non_resource_urls);
  bool names = sub.resource_names.empty() ? owner.resource_names.empty()
                                          : owner.resource_names.empty() ||
                                                HasAll(owner.resource_names, sub.resource_names);
  return verbs && groups && resources && names && urls;
}

// Merges the verbs of rules naming one group, one resource and at most one name (upstream's
// CompactRules); other rules stay as they are.
std::vector<PolicyRule> Compact(const std::vector<PolicyRule>& rules) {
  std::vector<PolicyRule> out;
  std::map<std::tuple<std::string, std::string, bool, std::string>, PolicyRule> simple;
  for (const PolicyRule& r : rules) {
    bool is_simple = r.resource_names.size() <= 1 && r.non_resource_urls.empty() &&
                     r.api_groups.size() == 1 && r.resources.size() == 1;
    if (!is_simple) {
      out.push_back(r);
      continue;
    }
    auto key = std::make_tuple(r.api_groups[0], r.resources[0], !r.resource_names.empty(),
                               r.resource_names.empty() ? "" : r.resource_names[0]);
    auto [it, inserted] = simple.try_emplace(key, r);
    if (!inserted) it->second.verbs.insert(it->second.verbs.end(), r.verbs.begin(), r.verbs.end());
  }
  for (auto& [key, r] : simple) out.push_back(std::move(r));
  return out;
}

bool IsMaster(const UserInfo* user) {
  return !user || Has(user->groups, "system:masters");
}

bool Authorized(const Authorizer& a, const UserInfo& user, std::string_view verb,
                std::string_view resource, std::string_view ns, std::string_view name) {
  AuthzAttributes attrs;
  attrs.user = user;
  attrs.verb = verb;
  attrs.resource_request = true;
  attrs.group = kRbacGroup;
  attrs.resource = resource;
  attrs.ns = ns;
  attrs.name = name;
  return a.Authorize(attrs).allowed();
}

}  // namespace

std::vector<PolicyRule> UncoveredRules(const std::vector<PolicyRule>& owner,
                                       const std::vector<PolicyRule>& requested) {
  std::vector<PolicyRule> missing;
  for (const PolicyRule& r : requested) {
    for (PolicyRule& sub : Breakdown(r)) {
      bool covered = false;
      for (const PolicyRule& o : owner) {
        if (RuleCovers(o, sub)) {
          covered = true;
          break;
        }
      }
      if (!covered) missing.push_back(std::move(sub));
    }
  }
  return Compact(missing);
}

std::string CompactString(const PolicyRule& r) {
  std::vector<std::string> parts;
  if (!r.api_groups.empty()) parts.push_back("APIGroups:" + GoQuotedList(r.api_groups));
  if (!r.resources.empty()) parts.push_back("Resources:" + GoQuotedList(r.resources));
  if (!r.non_resource_urls.empty()) {
    parts.push_back("NonResourceURLs:" + GoQuotedList(r.non_resource_urls));
  }
  if (!r.resource_names.empty()) parts.push_back("ResourceNames:" + GoQuotedList(r.resource_names));
  if (!r.verbs.empty()) parts.push_back("Verbs:" + GoQuotedList(r.verbs));
  std::string out = "{";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out + "}";
}

std::optional<std::string> ConfirmNoEscalation(const Authorizer& authorizer, const UserInfo& user,
                                               std::string_view ns,
                                               const std::vector<PolicyRule>& requested) {
  std::vector<PolicyRule> owner;
  bool incomplete = false;
  authorizer.RulesFor(user, ns, &owner, &incomplete);
  std::vector<PolicyRule> missing = UncoveredRules(owner, requested);
  if (missing.empty()) return std::nullopt;
  std::set<std::string> descriptions;  // sorted, as upstream's sets.String.List()
  for (const PolicyRule& r : missing) descriptions.insert(CompactString(r));
  std::string msg = "user " + api::GoQuote(user.name) + " (groups=" + GoQuotedList(user.groups) +
                    ") is attempting to grant RBAC permissions not currently held:";
  for (const auto& d : descriptions) msg += "\n" + d;
  return msg;
}

std::optional<ApiError> RbacEscalationAdmission::Validate(const AdmissionAttributes& attrs) {
  if (!attrs.resource || attrs.resource->gvr.group != kRbacGroup || !attrs.object) {
    return std::nullopt;
  }
  if (attrs.operation != "CREATE" && attrs.operation != "UPDATE") return std::nullopt;
  if (IsMaster(attrs.user)) return std::nullopt;
  const UserInfo& user = *attrs.user;
  const std::string& resource = attrs.resource->gvr.resource;
  const json::object& doc = attrs.object->doc();
  std::string name(attrs.object->name());
  if (name.empty()) name = attrs.name;
  const api::GroupResource gr{std::string(kRbacGroup), resource};
  const std::string ns = attrs.resource->namespaced ? attrs.ns : "";

  if (resource == "roles" || resource == "clusterroles") {
    std::vector<PolicyRule> rules = RulesFromJson(api::FindArray(doc, {"rules"}));
    const json::value* aggregation = doc.if_contains("aggregationRule");
    bool has_aggregation = aggregation && !aggregation->is_null();
    if (attrs.old_object && !has_aggregation &&
        rules == RulesFromJson(api::FindArray(attrs.old_object->doc(), {"rules"}))) {
      return std::nullopt;  // the rules did not change
    }
    if (Authorized(*authorizer_, user, "escalate", resource, ns, name)) return std::nullopt;
    if (has_aggregation) {
      // An aggregationRule can gather anything, so it takes every permission to set one.
      std::vector<PolicyRule> all = {
          {.verbs = {"*"}, .api_groups = {"*"}, .resources = {"*"}},
          {.verbs = {"*"}, .non_resource_urls = {"*"}},
      };
      if (ConfirmNoEscalation(*authorizer_, user, "", all)) {
        return Forbidden(gr, name, "must have cluster-admin privileges to use the aggregationRule");
      }
    }
    if (auto msg = ConfirmNoEscalation(*authorizer_, user, ns, rules)) {
      return Forbidden(gr, name, *msg);
    }
    return std::nullopt;
  }
  if (resource == "rolebindings" || resource == "clusterrolebindings") {
    RbacBinding binding = BindingFromJson(doc);
    std::string ref_resource = binding.role_ref.kind == "Role" ? "roles" : "clusterroles";
    if (Authorized(*authorizer_, user, "bind", ref_resource, ns, binding.role_ref.name)) {
      return std::nullopt;
    }
    std::vector<PolicyRule> rules;
    if (const auto* r = policy_()->RoleRules(binding.role_ref, ns)) rules = *r;
    if (auto msg = ConfirmNoEscalation(*authorizer_, user, ns, rules)) {
      return Forbidden(gr, name, *msg);
    }
  }
  return std::nullopt;
}

}  // namespace converge::apiserver
