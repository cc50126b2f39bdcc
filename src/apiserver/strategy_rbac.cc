// rbac.authorization.k8s.io/v1 strategies: Role, ClusterRole, RoleBinding, ClusterRoleBinding.
//
// Upstream: pkg/apis/rbac/v1/defaults.go, pkg/apis/rbac/validation/validation.go and
// pkg/registry/rbac/*/strategy.go. Names are path segments; roleRef is immutable.
#include "api/labels.h"
#include "apiserver/strategy.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsArray;
using sv::AsObject;
using sv::AsString;
using sv::Causes;
using sv::Child;
using sv::Index;

namespace {

constexpr std::string_view kRbacApiGroup = "rbac.authorization.k8s.io";

size_t Len(const json::object& o, std::string_view key) {
  const json::array* a = AsArray(o.if_contains(key));
  return a ? a->size() : 0;
}

// ValidatePolicyRule.
Causes ValidatePolicyRule(const json::object& rule, bool namespaced, const std::string& path) {
  Causes out;
  if (Len(rule, "verbs") == 0) {
    out.push_back(FieldRequired(Child(path, "verbs"), "verbs must contain at least one value"));
  }
  if (Len(rule, "nonResourceURLs") > 0) {
    const json::value& urls = *rule.if_contains("nonResourceURLs");
    std::string rendered = sv::GoStringSlice(&urls);
    if (namespaced) {
      out.push_back(sv::InvalidRendered(Child(path, "nonResourceURLs"), rendered,
                                        "namespaced rules cannot apply to non-resource URLs"));
    }
    if (Len(rule, "apiGroups") > 0 || Len(rule, "resources") > 0 ||
        Len(rule, "resourceNames") > 0) {
      out.push_back(sv::InvalidRendered(Child(path, "nonResourceURLs"), rendered,
                                        "rules cannot apply to both regular resources and "
                                        "non-resource URLs"));
    }
    return out;
  }
  if (Len(rule, "apiGroups") == 0) {
    out.push_back(FieldRequired(Child(path, "apiGroups"),
                                "resource rules must supply at least one api group"));
  }
  if (Len(rule, "resources") == 0) {
    out.push_back(FieldRequired(Child(path, "resources"),
                                "resource rules must supply at least one resource"));
  }
  return out;
}

Causes ValidateRules(const api::Object& obj, bool namespaced) {
  Causes out;
  const json::array* rules = AsArray(obj.doc().if_contains("rules"));
  for (size_t i = 0; rules && i < rules->size(); ++i) {
    if (const json::object* r = AsObject(&(*rules)[i])) {
      sv::Append(out, ValidatePolicyRule(*r, namespaced, Index("rules", i)));
    }
  }
  return out;
}

class RoleStrategy : public Strategy {
 public:
  using Strategy::Strategy;
  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateRules(obj, /*namespaced=*/true);
  }
  NameRule name_rule() const override { return NameRule::kPathSegment; }
};

class ClusterRoleStrategy : public Strategy {
 public:
  using Strategy::Strategy;
  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out = ValidateRules(obj, /*namespaced=*/false);
    const json::object* agg = AsObject(obj.doc().if_contains("aggregationRule"));
    if (agg) {
      const json::array* sels = AsArray(agg->if_contains("clusterRoleSelectors"));
      if (!sels || sels->empty()) {
        out.push_back(FieldRequired("aggregationRule.clusterRoleSelectors",
                                    "at least one clusterRoleSelector required if aggregationRule "
                                    "is non-nil"));
      }
      for (size_t i = 0; sels && i < sels->size(); ++i) {
        std::string p = Index("aggregationRule.clusterRoleSelectors", i);
        sv::Append(out, sv::ValidateLabelSelectorField(p, &(*sels)[i]));
        if (!api::LabelSelector::FromLabelSelector(&(*sels)[i]).ok()) {
          out.push_back(
              sv::InvalidRendered(p, sv::GoLabelSelector(&(*sels)[i]), "invalid label selector."));
        }
      }
    }
    return out;
  }
  NameRule name_rule() const override { return NameRule::kPathSegment; }
};

// SetDefaults_RoleBinding / SetDefaults_Subject.
void DefaultBinding(api::Object& obj) {
  json::object& doc = obj.mutable_doc();
  json::object& ref = api::EnsureObject(doc, "roleRef");
  if (api::Object::GetString(ref, "apiGroup").empty()) ref["apiGroup"] = kRbacApiGroup;
  json::value* subjects = doc.if_contains("subjects");
  if (!subjects || !subjects->is_array()) return;
  for (json::value& sv : subjects->get_array()) {
    if (!sv.is_object()) continue;
    json::object& s = sv.get_object();
    if (s.contains("apiGroup")) continue;
    std::string_view kind = api::Object::GetString(s, "kind");
    if (kind == "ServiceAccount") {
      s["apiGroup"] = "";
    } else if (kind == "User" || kind == "Group") {
      s["apiGroup"] = kRbacApiGroup;
    }
  }
}

std::string RenderRoleRef(const json::object* ref) {
  auto get = [&](std::string_view k) {
    return std::string(ref ? api::Object::GetString(*ref, k) : "");
  };
  return "rbac.RoleRef{APIGroup:\"" + get("apiGroup") + "\", Kind:\"" + get("kind") +
         "\", Name:\"" + get("name") + "\"}";
}

Causes ValidateBinding(const api::Object& obj, bool namespaced) {
  Causes out;
  static const json::object kEmpty;
  const json::object* ref = AsObject(obj.doc().if_contains("roleRef"));
  if (!ref) ref = &kEmpty;
  std::string_view group = api::Object::GetString(*ref, "apiGroup");
  if (group != kRbacApiGroup) {
    out.push_back(
        FieldNotSupported("roleRef.apiGroup", json::value(group), {std::string(kRbacApiGroup)}));
  }
  std::string_view kind = api::Object::GetString(*ref, "kind");
  if (namespaced) {
    if (kind != "Role" && kind != "ClusterRole") {
      out.push_back(FieldNotSupported("roleRef.kind", json::value(kind), {"Role", "ClusterRole"}));
    }
  } else if (kind != "ClusterRole") {
    out.push_back(FieldNotSupported("roleRef.kind", json::value(kind), {"ClusterRole"}));
  }
  std::string_view name = api::Object::GetString(*ref, "name");
  if (name.empty()) {
    out.push_back(FieldRequired("roleRef.name"));
  } else {
    for (auto& m : sv::IsValidPathSegmentName(name)) {
      out.push_back(FieldInvalidString("roleRef.name", name, m));
    }
  }
  const json::array* subjects = AsArray(obj.doc().if_contains("subjects"));
  for (size_t i = 0; subjects && i < subjects->size(); ++i) {
    const json::object* s = AsObject(&(*subjects)[i]);
    if (!s) continue;
    std::string p = Index("subjects", i);
    std::string_view sname = api::Object::GetString(*s, "name");
    std::string_view sgroup = api::Object::GetString(*s, "apiGroup");
    if (sname.empty()) out.push_back(FieldRequired(Child(p, "name")));
    std::string_view skind = api::Object::GetString(*s, "kind");
    if (skind == "ServiceAccount") {
      if (!sname.empty()) {
        for (auto& m : IsDnsSubdomain(sname)) {
          out.push_back(FieldInvalidString(Child(p, "name"), sname, m));
        }
      }
      if (!sgroup.empty()) {
        out.push_back(FieldNotSupported(Child(p, "apiGroup"), json::value(sgroup), {""}));
      }
      if (!namespaced && api::Object::GetString(*s, "namespace").empty()) {
        out.push_back(FieldRequired(Child(p, "namespace")));
      }
    } else if (skind == "User" || skind == "Group") {
      if (sgroup != kRbacApiGroup) {
        out.push_back(FieldNotSupported(Child(p, "apiGroup"), json::value(sgroup),
                                        {std::string(kRbacApiGroup)}));
      }
    } else {
      out.push_back(FieldNotSupported(Child(p, "kind"), json::value(skind),
                                      {"ServiceAccount", "User", "Group"}));
    }
  }
  return out;
}

class BindingStrategy : public Strategy {
 public:
  BindingStrategy(ResourceInfoPtr info, bool namespaced)
      : Strategy(std::move(info)), namespaced_(namespaced) {}

  void Default(api::Object& obj) const override { DefaultBinding(obj); }
  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateBinding(obj, namespaced_);
  }
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = ValidateBinding(obj, namespaced_);
    const json::object* now = AsObject(obj.doc().if_contains("roleRef"));
    const json::object* before = AsObject(old.doc().if_contains("roleRef"));
    if ((now ? *now : json::object()) != (before ? *before : json::object())) {
      out.push_back(sv::InvalidRendered("roleRef", RenderRoleRef(now), "cannot change roleRef"));
    }
    return out;
  }
  NameRule name_rule() const override { return NameRule::kPathSegment; }

 private:
  const bool namespaced_;  // RoleBinding (true) or ClusterRoleBinding (false)
};

}  // namespace

std::shared_ptr<const Strategy> MakeRbacStrategy(ResourceInfoPtr info) {
  if (info->gvr.group != kRbacApiGroup) return nullptr;
  const std::string& r = info->gvr.resource;
  if (r == "roles") return std::make_shared<RoleStrategy>(std::move(info));
  if (r == "clusterroles") return std::make_shared<ClusterRoleStrategy>(std::move(info));
  if (r == "rolebindings") return std::make_shared<BindingStrategy>(std::move(info), true);
  if (r == "clusterrolebindings") return std::make_shared<BindingStrategy>(std::move(info), false);
  return nullptr;
}

}  // namespace converge::apiserver
