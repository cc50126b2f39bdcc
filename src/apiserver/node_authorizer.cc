#include "apiserver/node_authorizer.h"

#include <algorithm>

namespace converge::apiserver {

namespace {

constexpr std::string_view kNodeUserPrefix = "system:node:";

AuthzResult Allow() {
  return {AuthzDecision::kAllow, ""};
}

AuthzResult NoRelationship(std::string_view node) {
  return {AuthzDecision::kNoOpinion,
          "no relationship found between node '" + std::string(node) + "' and this object"};
}

}  // namespace

std::optional<std::string> NodeNameOf(const UserInfo& user) {
  if (!user.name.starts_with(kNodeUserPrefix)) return std::nullopt;
  if (std::find(user.groups.begin(), user.groups.end(), "system:nodes") == user.groups.end()) {
    return std::nullopt;
  }
  return user.name.substr(kNodeUserPrefix.size());
}

bool FieldSelectorRequires(std::string_view selector, std::string_view field,
                           std::string_view value) {
  while (!selector.empty()) {
    size_t comma = selector.find(',');
    std::string_view term = selector.substr(0, comma);
    selector = comma == std::string_view::npos ? std::string_view() : selector.substr(comma + 1);
    while (!term.empty() && term.front() == ' ') term.remove_prefix(1);
    while (!term.empty() && term.back() == ' ') term.remove_suffix(1);
    if (!term.starts_with(field)) continue;
    std::string_view rest = term.substr(field.size());
    if (rest.starts_with("==")) {
      rest.remove_prefix(2);
    } else if (rest.starts_with("=")) {
      rest.remove_prefix(1);
    } else {
      continue;
    }
    if (rest == value) return true;
  }
  return false;
}

AuthzResult NodeAuthorizer::Authorize(const AuthzAttributes& a) const {
  std::optional<std::string> node = NodeNameOf(a.user);
  if (!node) return {};
  if (node->empty()) return {AuthzDecision::kNoOpinion, "unknown node for user " + a.user.name};
  if (!a.resource_request) return {};
  const bool list = a.verb == "list" || a.verb == "watch";

  if (a.group.empty() && a.resource == "nodes") {
    if (a.verb == "create" && a.subresource.empty()) return Allow();
    if (list) {
      return FieldSelectorRequires(a.field_selector, "metadata.name", *node)
                 ? Allow()
                 : NoRelationship(*node);
    }
    if (a.name == *node && (a.subresource.empty() || a.subresource == "status")) return Allow();
    return NoRelationship(*node);
  }
  if (a.group.empty() && a.resource == "pods") {
    if (a.verb == "create" && a.subresource.empty()) return Allow();
    if (list) {
      return FieldSelectorRequires(a.field_selector, "spec.nodeName", *node)
                 ? Allow()
                 : NoRelationship(*node);
    }
    if (!a.subresource.empty() && a.subresource != "status" && a.subresource != "eviction" &&
        a.subresource != "log") {
      return NoRelationship(*node);
    }
    std::optional<std::string> bound =
        options_.pod_node ? options_.pod_node(a.ns, a.name) : std::nullopt;
    if (bound && *bound == *node) return Allow();
    return NoRelationship(*node);
  }
  if (a.group == "coordination.k8s.io" && a.resource == "leases") {
    if (a.ns != "kube-node-lease") return NoRelationship(*node);
    if (a.verb == "create" || a.name == *node) return Allow();
    return NoRelationship(*node);
  }
  if ((a.group.empty() || a.group == "events.k8s.io") && a.resource == "events") {
    if (a.verb == "create" || a.verb == "update" || a.verb == "patch") return Allow();
    return {};
  }
  for (const PolicyRule& r : options_.node_rules) {
    if (RuleAllows(a, r)) return Allow();
  }
  return {};
}

void NodeAuthorizer::RulesFor(const UserInfo& user, std::string_view ns,
                              std::vector<PolicyRule>* out, bool* incomplete) const {
  (void)ns;
  std::optional<std::string> node = NodeNameOf(user);
  if (!node) return;
  // Object-scoped grants (its pods, its lease) cannot be listed as rules.
  *incomplete = true;
  out->push_back(PolicyRule{.verbs = {"get", "update", "patch", "delete"},
                            .api_groups = {""},
                            .resources = {"nodes", "nodes/status"},
                            .resource_names = {*node}});
  out->push_back(PolicyRule{.verbs = {"create", "update", "patch"},
                            .api_groups = {"", "events.k8s.io"},
                            .resources = {"events"}});
  out->insert(out->end(), options_.node_rules.begin(), options_.node_rules.end());
}

}  // namespace converge::apiserver
