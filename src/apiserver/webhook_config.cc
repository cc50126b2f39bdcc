#include "apiserver/webhook_config.h"

#include <algorithm>

#include "api/object.h"
#include "util/base64.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

std::vector<std::string> StringMembers(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  const json::value* v = o.if_contains(key);
  if (!v || !v->is_array()) return out;
  for (const json::value& s : v->get_array()) {
    if (s.is_string()) out.emplace_back(s.get_string());
  }
  return out;
}

bool MatchesAny(const std::vector<std::string>& patterns, std::string_view value) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return p == "*" || p == value; });
}

bool ResourceMatches(const std::vector<std::string>& patterns, std::string_view resource,
                     std::string_view subresource) {
  for (const std::string& p : patterns) {
    std::string_view res = p;
    std::string_view sub;
    if (size_t slash = res.find('/'); slash != std::string_view::npos) {
      sub = res.substr(slash + 1);
      res = res.substr(0, slash);
    }
    if ((res == "*" || res == resource) && (sub == "*" || sub == subresource)) return true;
  }
  return false;
}

bool IsNamespaceResource(const AdmissionAttributes& attrs) {
  return attrs.resource->gvr.group.empty() && attrs.resource->gvr.resource == "namespaces";
}

bool ScopeMatches(std::string_view scope, const AdmissionAttributes& attrs) {
  if (scope.empty() || scope == "*") return true;
  const bool is_namespace = IsNamespaceResource(attrs);
  if (scope == "Namespaced") return !is_namespace && !attrs.ns.empty();
  if (scope == "Cluster") return is_namespace || attrs.ns.empty();
  return false;
}

const json::object* LabelsOf(const api::Object* obj) {
  return obj ? api::FindObject(obj->doc(), {"metadata", "labels"}) : nullptr;
}

}  // namespace

std::vector<Webhook> WebhooksFromConfiguration(const json::object& doc, bool mutating) {
  std::vector<Webhook> out;
  const json::array* hooks = api::FindArray(doc, {"webhooks"});
  if (!hooks) return out;
  std::string configuration(api::FindString(doc, {"metadata", "name"}));
  for (const json::value& hv : *hooks) {
    if (!hv.is_object()) continue;
    const json::object& h = hv.get_object();
    Webhook w;
    w.configuration = configuration;
    w.mutating = mutating;
    w.name = api::Object::GetString(h, "name");
    if (const json::array* rules = api::FindArray(h, {"rules"})) {
      for (const json::value& rv : *rules) {
        if (!rv.is_object()) continue;
        const json::object& r = rv.get_object();
        WebhookRule rule;
        rule.operations = StringMembers(r, "operations");
        rule.api_groups = StringMembers(r, "apiGroups");
        rule.api_versions = StringMembers(r, "apiVersions");
        rule.resources = StringMembers(r, "resources");
        if (std::string_view scope = api::Object::GetString(r, "scope"); !scope.empty()) {
          rule.scope = scope;
        }
        w.rules.push_back(std::move(rule));
      }
    }
    w.fail_open = api::Object::GetString(h, "failurePolicy") == "Ignore";
    auto ns_selector = api::LabelSelector::FromLabelSelector(h.if_contains("namespaceSelector"));
    auto obj_selector = api::LabelSelector::FromLabelSelector(h.if_contains("objectSelector"));
    // Defaulting stores {} (match everything); an unparsable selector matches nothing, which is
    // what upstream's dispatcher does when it cannot parse one (it fails the request).
    w.namespace_selector = ns_selector.ok() ? *ns_selector : api::LabelSelector::Nothing();
    w.object_selector = obj_selector.ok() ? *obj_selector : api::LabelSelector::Nothing();
    if (!h.contains("namespaceSelector")) w.namespace_selector = api::LabelSelector();
    if (!h.contains("objectSelector")) w.object_selector = api::LabelSelector();
    int64_t timeout = api::FindInt(h, {"timeoutSeconds"}, 10);
    w.timeout = std::chrono::seconds(std::clamp<int64_t>(timeout, 1, 30));
    w.side_effects = api::Object::GetString(h, "sideEffects");
    w.reinvoke_if_needed = api::Object::GetString(h, "reinvocationPolicy") == "IfNeeded";
    if (const json::object* cc = api::FindObject(h, {"clientConfig"})) {
      w.url = api::Object::GetString(*cc, "url");
      if (const json::object* svc = api::FindObject(*cc, {"service"})) {
        w.url = "https://" + std::string(api::Object::GetString(*svc, "name")) + "." +
                std::string(api::Object::GetString(*svc, "namespace")) +
                ".svc:" + std::to_string(api::FindInt(*svc, {"port"}, 443)) +
                std::string(api::Object::GetString(*svc, "path"));
      }
      if (auto ca = util::Base64Decode(api::Object::GetString(*cc, "caBundle"))) {
        w.ca_bundle_pem = std::move(*ca);
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

bool RulesMatch(const Webhook& hook, const AdmissionAttributes& attrs) {
  const api::GroupVersionResource& gvr = attrs.resource->gvr;
  for (const WebhookRule& r : hook.rules) {
    if (MatchesAny(r.operations, attrs.operation) && MatchesAny(r.api_groups, gvr.group) &&
        MatchesAny(r.api_versions, gvr.version) &&
        ResourceMatches(r.resources, gvr.resource, attrs.subresource) &&
        ScopeMatches(r.scope, attrs)) {
      return true;
    }
  }
  return false;
}

bool IsExemptFromWebhooks(const AdmissionAttributes& attrs) {
  const api::GroupVersionResource& gvr = attrs.resource->gvr;
  if (gvr.group != "admissionregistration.k8s.io") return false;
  return gvr.resource == "mutatingwebhookconfigurations" ||
         gvr.resource == "validatingwebhookconfigurations" ||
         gvr.resource == "validatingadmissionpolicies" ||
         gvr.resource == "validatingadmissionpolicybindings";
}

bool ObjectSelectorMatches(const Webhook& hook, const AdmissionAttributes& attrs) {
  if (hook.object_selector.Empty()) return true;
  auto matches = [&](const api::Object* obj) {
    return obj != nullptr && hook.object_selector.Matches(LabelsOf(obj));
  };
  return matches(attrs.object) || matches(attrs.old_object);
}

bool NamespaceSelectorMatches(const Webhook& hook, const json::object* namespace_labels) {
  if (hook.namespace_selector.Empty()) return true;
  return hook.namespace_selector.Matches(namespace_labels);
}

std::string NamespaceForSelector(const AdmissionAttributes& attrs,
                                 const json::object** own_labels) {
  *own_labels = nullptr;
  if (IsNamespaceResource(attrs)) {
    const api::Object* obj = attrs.operation == "DELETE" ? attrs.old_object : attrs.object;
    if (!obj) obj = attrs.old_object;
    *own_labels = LabelsOf(obj);
    return attrs.name;
  }
  return attrs.ns;
}

}  // namespace converge::apiserver
