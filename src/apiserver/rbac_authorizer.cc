#include "apiserver/rbac_authorizer.h"

#include <algorithm>
#include <set>

#include "api/labels.h"
#include "api/object.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

std::vector<std::string> RuleStrings(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const auto* a = o.if_contains(key); a && a->is_array()) {
    for (const auto& v : a->get_array()) {
      if (v.is_string()) out.emplace_back(v.get_string());
    }
  }
  return out;
}

json::array JsonStrings(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

std::string PathString(const json::object& o, std::initializer_list<std::string_view> path) {
  return std::string(api::FindString(o, path));
}

}  // namespace

bool SubjectMatches(const RbacSubject& subject, std::string_view binding_ns, const UserInfo& user) {
  if (subject.kind == "User") return subject.name == user.name;
  if (subject.kind == "Group") {
    return std::find(user.groups.begin(), user.groups.end(), subject.name) != user.groups.end();
  }
  if (subject.kind == "ServiceAccount") {
    std::string_view ns = subject.ns.empty() ? binding_ns : std::string_view(subject.ns);
    if (ns.empty()) return false;
    return user.name == "system:serviceaccount:" + std::string(ns) + ":" + subject.name;
  }
  return false;
}

std::vector<PolicyRule> RulesFromJson(const json::array* rules) {
  std::vector<PolicyRule> out;
  if (!rules) return out;
  for (const auto& v : *rules) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    out.push_back(PolicyRule{.verbs = RuleStrings(r, "verbs"),
                             .api_groups = RuleStrings(r, "apiGroups"),
                             .resources = RuleStrings(r, "resources"),
                             .resource_names = RuleStrings(r, "resourceNames"),
                             .non_resource_urls = RuleStrings(r, "nonResourceURLs")});
  }
  return out;
}

json::array RulesToJson(const std::vector<PolicyRule>& rules) {
  json::array out;
  for (const PolicyRule& r : rules) {
    json::object o;
    o["verbs"] = JsonStrings(r.verbs);
    if (!r.api_groups.empty()) o["apiGroups"] = JsonStrings(r.api_groups);
    if (!r.resources.empty()) o["resources"] = JsonStrings(r.resources);
    if (!r.resource_names.empty()) o["resourceNames"] = JsonStrings(r.resource_names);
    if (!r.non_resource_urls.empty()) o["nonResourceURLs"] = JsonStrings(r.non_resource_urls);
    out.push_back(std::move(o));
  }
  return out;
}

RbacBinding BindingFromJson(const json::object& doc) {
  RbacBinding b;
  b.ns = PathString(doc, {"metadata", "namespace"});
  b.name = PathString(doc, {"metadata", "name"});
  b.role_ref.kind = PathString(doc, {"roleRef", "kind"});
  b.role_ref.name = PathString(doc, {"roleRef", "name"});
  if (const auto* subjects = api::FindArray(doc, {"subjects"})) {
    for (const auto& s : *subjects) {
      if (!s.is_object()) continue;
      const json::object& so = s.get_object();
      b.subjects.push_back(
          {PathString(so, {"kind"}), PathString(so, {"name"}), PathString(so, {"namespace"})});
    }
  }
  return b;
}

// ---------------------------------------------------------------------------------------------
// RbacPolicy

std::shared_ptr<const RbacPolicy> RbacPolicy::Build(
    const std::vector<json::object>& cluster_roles, const std::vector<json::object>& roles,
    const std::vector<json::object>& cluster_role_bindings,
    const std::vector<json::object>& role_bindings) {
  auto p = std::make_shared<RbacPolicy>();
  // Aggregated roles may aggregate aggregated roles (admin ← edit ← view): iterate to a fixed
  // point.
  std::map<std::string, const json::object*> by_name;  // name order: deterministic unions
  for (const auto& cr : cluster_roles) {
    std::string name = PathString(cr, {"metadata", "name"});
    p->cluster_roles_[name] = RulesFromJson(api::FindArray(cr, {"rules"}));
    by_name[name] = &cr;
  }
  struct Aggregated {
    std::string name;
    std::vector<api::LabelSelector> selectors;
  };
  std::vector<Aggregated> aggregated;
  for (const auto& [name, cr] : by_name) {
    const auto* sel = api::FindArray(*cr, {"aggregationRule", "clusterRoleSelectors"});
    if (!sel) continue;
    Aggregated a{name, {}};
    for (const auto& s : *sel) {
      auto parsed = api::LabelSelector::FromLabelSelector(&s);
      if (parsed.ok() && !parsed->Empty()) a.selectors.push_back(std::move(*parsed));
    }
    aggregated.push_back(std::move(a));
  }
  // An aggregated role's stored rules are the controller's output: evaluate from the sources.
  for (const Aggregated& a : aggregated) p->cluster_roles_[a.name].clear();
  for (size_t round = 0; round < aggregated.size() + 1; ++round) {
    bool changed = false;
    for (const Aggregated& a : aggregated) {
      std::vector<PolicyRule>& into = p->cluster_roles_[a.name];
      for (const auto& [name, cr] : by_name) {
        if (name == a.name) continue;
        const json::object* labels = api::FindObject(*cr, {"metadata", "labels"});
        bool match = false;
        for (const auto& s : a.selectors) match |= s.Matches(labels);
        if (!match) continue;
        for (const PolicyRule& r : p->cluster_roles_[name]) {
          if (std::find(into.begin(), into.end(), r) == into.end()) {
            into.push_back(r);
            changed = true;
          }
        }
      }
    }
    if (!changed) break;
  }
  for (const auto& r : roles) {
    p->roles_[PathString(r, {"metadata", "namespace"}) + "/" +
              PathString(r, {"metadata", "name"})] = RulesFromJson(api::FindArray(r, {"rules"}));
  }
  for (const auto& b : cluster_role_bindings) {
    RbacBinding binding = BindingFromJson(b);
    binding.ns.clear();
    p->cluster_role_bindings_.push_back(std::move(binding));
  }
  for (const auto& b : role_bindings) {
    RbacBinding binding = BindingFromJson(b);
    std::string ns = binding.ns;
    p->role_bindings_[ns].push_back(std::move(binding));
  }
  return p;
}

const std::vector<PolicyRule>* RbacPolicy::RoleRules(const RbacRoleRef& ref,
                                                     std::string_view ns) const {
  if (ref.kind == "ClusterRole") {
    auto it = cluster_roles_.find(ref.name);
    return it == cluster_roles_.end() ? nullptr : &it->second;
  }
  if (ref.kind == "Role" && !ns.empty()) {
    auto it = roles_.find(std::string(ns) + "/" + ref.name);
    return it == roles_.end() ? nullptr : &it->second;
  }
  return nullptr;
}

bool RbacPolicy::VisitRules(const UserInfo& user, std::string_view ns,
                            const std::function<bool(const PolicyRule&)>& visit) const {
  auto visit_binding = [&](const RbacBinding& b) {
    bool applies = false;
    for (const RbacSubject& s : b.subjects) {
      if (SubjectMatches(s, b.ns, user)) {
        applies = true;
        break;
      }
    }
    if (!applies) return false;
    const std::vector<PolicyRule>* rules = RoleRules(b.role_ref, b.ns);
    if (!rules) return false;
    for (const PolicyRule& r : *rules) {
      if (visit(r)) return true;
    }
    return false;
  };
  for (const RbacBinding& b : cluster_role_bindings_) {
    if (visit_binding(b)) return true;
  }
  if (ns.empty()) return false;
  auto it = role_bindings_.find(std::string(ns));
  if (it == role_bindings_.end()) return false;
  for (const RbacBinding& b : it->second) {
    if (visit_binding(b)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// RbacPolicySource

bool RbacPolicySource::ChangedLocked() const {
  bool changed = false;
  for (CacheChangeDetector& c : changes_) changed = c.Changed() || changed;
  return changed;
}

std::shared_ptr<const RbacPolicy> RbacPolicySource::Current() const {
  std::lock_guard lock(mu_);
  if (!ChangedLocked() && policy_) return policy_;
  auto docs = [](WatchCache* cache) {
    std::vector<json::object> out;
    if (!cache) return out;
    for (const CachedObjectPtr& o : cache->List(WatchFilter{}).items) {
      boost::system::error_code ec;
      json::value v = json::parse(*o->json(), ec);
      if (!ec && v.is_object()) out.push_back(std::move(v.get_object()));
    }
    return out;
  };
  policy_ = RbacPolicy::Build(docs(caches_.cluster_roles), docs(caches_.roles),
                              docs(caches_.cluster_role_bindings), docs(caches_.role_bindings));
  return policy_;
}

// ---------------------------------------------------------------------------------------------
// RbacAuthorizer

AuthzResult RbacAuthorizer::Authorize(const AuthzAttributes& attrs) const {
  auto allows = [&](const RbacPolicy& p) {
    return p.VisitRules(attrs.user, attrs.ns,
                        [&](const PolicyRule& r) { return RuleAllows(attrs, r); });
  };
  if (allows(*policy_())) return {AuthzDecision::kAllow, ""};
  if (refresh_) {
    refresh_();
    if (allows(*policy_())) return {AuthzDecision::kAllow, ""};
  }
  return {};
}

void RbacAuthorizer::RulesFor(const UserInfo& user, std::string_view ns,
                              std::vector<PolicyRule>* out, bool* incomplete) const {
  (void)incomplete;
  policy_()->VisitRules(user, ns, [&](const PolicyRule& r) {
    out->push_back(r);
    return false;
  });
}

}  // namespace converge::apiserver
