// admissionregistration.k8s.io/v1 strategies: MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration.
//
// Upstream: pkg/apis/admissionregistration/v1/defaults.go and
// pkg/apis/admissionregistration/validation/validation.go (ValidateValidatingWebhookConfiguration,
// ValidateMutatingWebhookConfiguration, validateWebhook, validateRule).
#include <algorithm>
#include <set>

#include "apiserver/strategy.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsArray;
using sv::AsInt;
using sv::AsObject;
using sv::AsString;
using sv::Causes;
using sv::Child;
using sv::Index;

namespace {

void DefaultField(json::object& o, std::string_view key, json::value v) {
  if (!sv::IsSet(o.if_contains(key))) o[key] = std::move(v);
}

void DefaultWebhook(json::object& hook, bool mutating) {
  DefaultField(hook, "failurePolicy", "Fail");
  DefaultField(hook, "matchPolicy", "Equivalent");
  DefaultField(hook, "namespaceSelector", json::object());
  DefaultField(hook, "objectSelector", json::object());
  DefaultField(hook, "timeoutSeconds", 10);
  if (mutating) DefaultField(hook, "reinvocationPolicy", "Never");
  if (json::value* rules = hook.if_contains("rules"); rules && rules->is_array()) {
    for (json::value& r : rules->get_array()) {
      if (r.is_object()) DefaultField(r.get_object(), "scope", "*");
    }
  }
  if (json::value* cc = hook.if_contains("clientConfig"); cc && cc->is_object()) {
    if (json::value* svc = cc->get_object().if_contains("service"); svc && svc->is_object()) {
      DefaultField(svc->get_object(), "port", 443);
    }
  }
}

void RequireNonEmptyList(Causes& out, const json::object& o, std::string_view key,
                         const std::string& path) {
  const json::array* a = AsArray(o.if_contains(key));
  if (!a || a->empty()) out.push_back(FieldRequired(Child(path, key)));
}

Causes ValidateRule(const json::object& rule, const std::string& path) {
  Causes out;
  RequireNonEmptyList(out, rule, "operations", path);
  RequireNonEmptyList(out, rule, "apiGroups", path);
  RequireNonEmptyList(out, rule, "apiVersions", path);
  RequireNonEmptyList(out, rule, "resources", path);
  if (const json::array* ops = AsArray(rule.if_contains("operations"))) {
    static const std::set<std::string_view> kOps = {"*", "CREATE", "UPDATE", "DELETE", "CONNECT"};
    for (size_t i = 0; i < ops->size(); ++i) {
      if (!kOps.count(AsString(&(*ops)[i]))) {
        out.push_back(FieldNotSupported(Index(Child(path, "operations"), i), (*ops)[i],
                                        {"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}));
      }
    }
  }
  if (const json::value* scope = rule.if_contains("scope"); sv::IsSet(scope)) {
    std::string_view s = AsString(scope);
    if (s != "*" && s != "Cluster" && s != "Namespaced") {
      out.push_back(
          FieldNotSupported(Child(path, "scope"), *scope, {"*", "Cluster", "Namespaced"}));
    }
  }
  return out;
}

Causes ValidateWebhook(const json::object& hook, const std::string& path, bool mutating) {
  Causes out;
  std::string_view name = api::Object::GetString(hook, "name");
  sv::Append(out, sv::ValidateDns1123Subdomain(Child(path, "name"), name));
  if (std::count(name.begin(), name.end(), '.') < 2) {
    out.push_back(FieldInvalidString(Child(path, "name"), name,
                                     "should be a domain with at least three segments separated by "
                                     "dots"));
  }
  if (const json::array* rules = AsArray(hook.if_contains("rules"))) {
    for (size_t i = 0; i < rules->size(); ++i) {
      if (const json::object* r = AsObject(&(*rules)[i])) {
        sv::Append(out, ValidateRule(*r, Index(Child(path, "rules"), i)));
      }
    }
  }
  auto enum_field = [&](std::string_view key, std::vector<std::string> allowed) {
    const json::value* v = hook.if_contains(key);
    if (!sv::IsSet(v)) return;
    std::string_view s = AsString(v);
    if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
      out.push_back(FieldNotSupported(Child(path, key), *v, allowed));
    }
  };
  enum_field("failurePolicy", {"Fail", "Ignore"});
  enum_field("matchPolicy", {"Equivalent", "Exact"});
  if (mutating) enum_field("reinvocationPolicy", {"IfNeeded", "Never"});
  const json::value* side = hook.if_contains("sideEffects");
  if (!sv::IsSet(side)) {
    out.push_back(
        FieldRequired(Child(path, "sideEffects"), "must specify one of None, NoneOnDryRun"));
  } else if (AsString(side) != "None" && AsString(side) != "NoneOnDryRun") {
    out.push_back(FieldNotSupported(Child(path, "sideEffects"), *side, {"None", "NoneOnDryRun"}));
  }
  const json::array* versions = AsArray(hook.if_contains("admissionReviewVersions"));
  if (!versions || versions->empty()) {
    out.push_back(
        FieldRequired(Child(path, "admissionReviewVersions"), "must specify one of v1, v1beta1"));
  } else {
    bool known = false;
    for (const json::value& v : *versions) {
      if (AsString(&v) == "v1" || AsString(&v) == "v1beta1") known = true;
    }
    if (!known) {
      out.push_back(
          sv::InvalidRendered(Child(path, "admissionReviewVersions"),
                              sv::GoStringSlice(hook.if_contains("admissionReviewVersions")),
                              "must include at least one of v1, v1beta1"));
    }
  }
  if (std::optional<int64_t> t = AsInt(hook.if_contains("timeoutSeconds"));
      t && (*t < 1 || *t > 30)) {
    out.push_back(sv::InvalidInt(Child(path, "timeoutSeconds"), *t,
                                 "the timeout value must be between 1 and 30 seconds"));
  }
  sv::Append(out, sv::ValidateLabelSelectorField(Child(path, "namespaceSelector"),
                                                 hook.if_contains("namespaceSelector")));
  sv::Append(out, sv::ValidateLabelSelectorField(Child(path, "objectSelector"),
                                                 hook.if_contains("objectSelector")));
  std::string cp = Child(path, "clientConfig");
  const json::object* cc = AsObject(hook.if_contains("clientConfig"));
  const json::value* url = cc ? cc->if_contains("url") : nullptr;
  const json::object* svc = cc ? AsObject(cc->if_contains("service")) : nullptr;
  if (sv::IsSet(url) == (svc != nullptr)) {
    out.push_back(FieldRequired(cp, "exactly one of url or service is required"));
  } else if (sv::IsSet(url)) {
    std::string_view u = AsString(url);
    if (u.substr(0, 8) != "https://") {
      out.push_back(
          FieldInvalidString(Child(cp, "url"), u, "'https' is the only allowed URL scheme"));
    }
  } else {
    std::string sp = Child(cp, "service");
    if (api::Object::GetString(*svc, "name").empty())
      out.push_back(FieldRequired(Child(sp, "name")));
    if (api::Object::GetString(*svc, "namespace").empty()) {
      out.push_back(FieldRequired(Child(sp, "namespace")));
    }
    if (std::optional<int64_t> port = AsInt(svc->if_contains("port"))) {
      for (auto& m : sv::IsValidPortNum(*port))
        out.push_back(sv::InvalidInt(Child(sp, "port"), *port, m));
    }
  }
  return out;
}

class WebhookConfigurationStrategy : public Strategy {
 public:
  WebhookConfigurationStrategy(ResourceInfoPtr info, bool mutating)
      : Strategy(std::move(info)), mutating_(mutating) {}

  void Default(api::Object& obj) const override {
    json::value* hooks = obj.mutable_doc().if_contains("webhooks");
    if (!hooks || !hooks->is_array()) return;
    for (json::value& h : hooks->get_array()) {
      if (h.is_object()) DefaultWebhook(h.get_object(), mutating_);
    }
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    const json::array* hooks = AsArray(obj.doc().if_contains("webhooks"));
    std::set<std::string> names;
    for (size_t i = 0; hooks && i < hooks->size(); ++i) {
      const json::object* h = AsObject(&(*hooks)[i]);
      if (!h) continue;
      std::string p = Index("webhooks", i);
      std::string name(api::Object::GetString(*h, "name"));
      if (!names.insert(name).second)
        out.push_back(FieldDuplicate(Child(p, "name"), json::value(name)));
      sv::Append(out, ValidateWebhook(*h, p, mutating_));
    }
    return out;
  }

 private:
  const bool mutating_;
};

}  // namespace

std::shared_ptr<const Strategy> MakeAdmissionregistrationStrategy(ResourceInfoPtr info) {
  if (info->gvr.group != "admissionregistration.k8s.io") return nullptr;
  const std::string& r = info->gvr.resource;
  if (r == "mutatingwebhookconfigurations") {
    return std::make_shared<WebhookConfigurationStrategy>(std::move(info), true);
  }
  if (r == "validatingwebhookconfigurations") {
    return std::make_shared<WebhookConfigurationStrategy>(std::move(info), false);
  }
  return nullptr;
}

}  // namespace converge::apiserver
