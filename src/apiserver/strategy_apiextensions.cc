// apiextensions.k8s.io/v1 CustomResourceDefinition strategy: the structural checks that decide
// whether the CRD can be served (names, group, scope, versions, storage version, schemas);
// OpenAPI schema structure itself is not validated here.
//
// Upstream: k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1/defaults.go,
// pkg/apis/apiextensions/validation/validation.go, pkg/registry/customresourcedefinition.
#include <algorithm>
#include <cctype>
#include <set>

#include "apiserver/crd_status.h"
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

const json::object& Spec(const api::Object& o) {
  static const json::object kEmpty;
  const json::object* s = AsObject(o.doc().if_contains("spec"));
  return s ? *s : kEmpty;
}

std::string LowerCase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
  return out;
}

// The storage version's name, or "" when there is not exactly one.
std::string StorageVersion(const json::object& spec) {
  std::string found;
  int n = 0;
  if (const json::array* versions = AsArray(spec.if_contains("versions"))) {
    for (const json::value& v : *versions) {
      const json::object* o = AsObject(&v);
      if (o && api::FindBool(*o, {"storage"})) {
        ++n;
        found = api::Object::GetString(*o, "name");
      }
    }
  }
  return n == 1 ? found : "";
}

Causes ValidateNames(const json::object* names, const std::string& path) {
  Causes out;
  static const json::object kEmpty;
  if (!names) names = &kEmpty;
  auto dns1035 = [&](std::string_view field, std::string_view v, std::string_view prefix) {
    auto errs =
        sv::IsDns1035Label(field == "kind" || field == "listKind" ? LowerCase(v) : std::string(v));
    if (!v.empty() && !errs.empty()) {
      out.push_back(FieldInvalidString(Child(path, field), v, std::string(prefix) + Join(errs)));
    }
  };
  std::string_view plural = api::Object::GetString(*names, "plural");
  dns1035("plural", plural, "");
  if (plural.empty()) out.push_back(FieldRequired(Child(path, "plural")));
  dns1035("singular", api::Object::GetString(*names, "singular"), "");
  std::string_view kind = api::Object::GetString(*names, "kind");
  std::string_view list_kind = api::Object::GetString(*names, "listKind");
  dns1035("kind", kind, "may have mixed case, but should otherwise match: ");
  if (kind.empty()) out.push_back(FieldRequired(Child(path, "kind")));
  dns1035("listKind", list_kind, "may have mixed case, but should otherwise match: ");
  if (list_kind.empty()) out.push_back(FieldRequired(Child(path, "listKind")));
  if (!kind.empty() && kind == list_kind) {
    out.push_back(FieldInvalidString(Child(path, "listKind"), list_kind,
                                     "kind and listKind may not be the same"));
  }
  if (const json::array* shorts = AsArray(names->if_contains("shortNames"))) {
    for (size_t i = 0; i < shorts->size(); ++i) {
      std::string_view s = AsString(&(*shorts)[i]);
      auto errs = sv::IsDns1035Label(s);
      if (!errs.empty()) {
        out.push_back(FieldInvalidString(Index(Child(path, "shortNames"), i), s, Join(errs)));
      }
    }
  }
  return out;
}

Causes ValidateCrd(const api::Object& crd) {
  Causes out;
  const json::object& spec = Spec(crd);
  std::string_view group = api::Object::GetString(spec, "group");
  std::string_view plural = api::FindString(spec, {"names", "plural"});
  if (crd.name() != std::string(plural) + "." + std::string(group)) {
    out.push_back(FieldInvalidString("metadata.name", crd.name(),
                                     "must be spec.names.plural+\".\"+spec.group"));
  }
  if (group.empty()) {
    out.push_back(FieldRequired("spec.group"));
  } else {
    sv::Append(out, sv::ValidateDns1123Subdomain("spec.group", group));
    if (group.find('.') == std::string_view::npos) {
      out.push_back(
          FieldInvalidString("spec.group", group, "should be a domain with at least one dot"));
    }
  }
  std::string_view scope = api::Object::GetString(spec, "scope");
  if (scope.empty()) {
    out.push_back(FieldRequired("spec.scope"));
  } else if (scope != "Cluster" && scope != "Namespaced") {
    out.push_back(FieldNotSupported("spec.scope", json::value(scope), {"Cluster", "Namespaced"}));
  }
  const json::array* versions = AsArray(spec.if_contains("versions"));
  std::string rendered = versions ? json::serialize(*versions) : std::string("null");
  if (!versions || versions->empty()) {
    out.push_back(
        FieldRequired("spec.versions", "must have exactly one version marked as storage version"));
  }
  int storage = 0;
  bool unique = true;
  std::set<std::string> seen;
  for (size_t i = 0; versions && i < versions->size(); ++i) {
    const json::object* v = AsObject(&(*versions)[i]);
    if (!v) continue;
    std::string p = Index("spec.versions", i);
    std::string name(api::Object::GetString(*v, "name"));
    if (api::FindBool(*v, {"storage"})) ++storage;
    if (!seen.insert(name).second) unique = false;
    auto errs = sv::IsDns1035Label(name);
    if (!errs.empty()) out.push_back(FieldInvalidString(Child(p, "name"), name, Join(errs)));
    if (!api::FindObject(*v, {"schema", "openAPIV3Schema"})) {
      out.push_back(FieldRequired(Child(p, "schema.openAPIV3Schema"), "schemas are required"));
    }
  }
  if (!unique) {
    out.push_back(
        sv::InvalidRendered("spec.versions", rendered, "must contain unique version names"));
  }
  if (versions && !versions->empty() && storage != 1) {
    out.push_back(sv::InvalidRendered("spec.versions", rendered,
                                      "must have exactly one version marked as storage version"));
  }
  sv::Append(out, ValidateNames(AsObject(spec.if_contains("names")), "spec.names"));
  return out;
}

class CrdStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // SetDefaults_CustomResourceDefinitionSpec.
  void Default(api::Object& obj) const override {
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    json::object& names = api::EnsureObject(spec, "names");
    std::string kind(api::Object::GetString(names, "kind"));
    if (api::Object::GetString(names, "singular").empty()) names["singular"] = LowerCase(kind);
    if (api::Object::GetString(names, "listKind").empty() && !kind.empty()) {
      names["listKind"] = kind + "List";
    }
    json::object& conversion = api::EnsureObject(spec, "conversion");
    if (api::Object::GetString(conversion, "strategy").empty()) conversion["strategy"] = "None";
  }

  // Status starts with no accepted names and the storage version recorded as stored.
  void PrepareForCreate(api::Object& obj) const override {
    Strategy::PrepareForCreate(obj);
    json::object status;
    status["acceptedNames"] = json::object{{"plural", ""}, {"kind", ""}};
    std::string storage = StorageVersion(Spec(obj));
    status["storedVersions"] = storage.empty() ? json::array() : json::array{json::string(storage)};
    obj.mutable_doc()["status"] = std::move(status);
  }

  // A new storage version is added to status.storedVersions.
  void PrepareForUpdate(api::Object& obj, const api::Object& old) const override {
    Strategy::PrepareForUpdate(obj, old);
    std::string storage = StorageVersion(Spec(obj));
    if (storage.empty()) return;
    json::object& status = api::EnsureObject(obj.mutable_doc(), "status");
    json::value& stored = status["storedVersions"];
    if (!stored.is_array()) stored = json::array();
    json::array& list = stored.get_array();
    if (std::none_of(list.begin(), list.end(),
                     [&](const json::value& v) { return AsString(&v) == storage; })) {
      list.emplace_back(storage);
    }
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateCrd(obj);
  }
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = ValidateCrd(obj);
    const json::object& ns = Spec(obj);
    const json::object& os = Spec(old);
    for (auto [value, before, path] :
         {std::tuple{ns.if_contains("group"), os.if_contains("group"), "spec.group"},
          std::tuple{api::Find(ns, {"names", "plural"}), api::Find(os, {"names", "plural"}),
                     "spec.names.plural"},
          std::tuple{ns.if_contains("scope"), os.if_contains("scope"), "spec.scope"}}) {
      sv::Immutable(out, path, value, before, value ? json::serialize(*value) : "null");
    }
    return out;
  }
  // Deleting a CRD first only marks it (upstream's CRD REST Delete): the cleanup finalizer and
  // the Terminating condition are added, the CRD controller deletes every object of the kind and
  // then drops the finalizer, which removes the CRD.
  bool ReadyToDelete(const api::Object& obj) const override {
    return obj.being_deleted() && Strategy::ReadyToDelete(obj);
  }
  void PrepareForDelete(api::Object& obj) const override {
    const std::string now(obj.deletion_timestamp());
    obj.AddFinalizer(kCrdCleanupFinalizer);
    SetCrdCondition(obj.mutable_doc(),
                    {"Terminating", "True", "InstanceDeletionPending",
                     "CustomResourceDefinition marked for deletion; CustomResource deletion will "
                     "begin soon"},
                    now);
  }

  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object&) const override {
    Causes out;
    const json::value* stored = api::Find(obj.doc(), {"status", "storedVersions"});
    const json::array* list = AsArray(stored);
    std::string storage = StorageVersion(Spec(obj));
    if (!list || list->empty()) {
      out.push_back(sv::InvalidRendered("status.storedVersions", sv::GoStringSlice(stored),
                                        "must have at least one stored version"));
    } else if (!storage.empty() &&
               std::none_of(list->begin(), list->end(),
                            [&](const json::value& v) { return AsString(&v) == storage; })) {
      out.push_back(sv::InvalidRendered("status.storedVersions", sv::GoStringSlice(stored),
                                        "must have the storage version " + storage));
    }
    return out;
  }
};

}  // namespace

std::shared_ptr<const Strategy> MakeApiextensionsStrategy(ResourceInfoPtr info) {
  if (info->gvr.group != "apiextensions.k8s.io" ||
      info->gvr.resource != "customresourcedefinitions") {
    return nullptr;
  }
  return std::make_shared<CrdStrategy>(std::move(info));
}

}  // namespace converge::apiserver
