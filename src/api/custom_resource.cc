#include "api/custom_resource.h"

#include <algorithm>
#include <cctype>

#include "api/object.h"
#include "api/schema_registry.h"

namespace converge::api {

namespace json = boost::json;
using util::InvalidArgument;
using util::StatusOr;

namespace {

struct KubeVersion {
  bool kube_like = false;
  int major = 0;
  int stability = 0;  // 2 GA, 1 beta, 0 alpha
  int minor = 0;
};

KubeVersion ParseKubeVersion(std::string_view v) {
  KubeVersion k;
  if (v.size() < 2 || v[0] != 'v' || !std::isdigit(static_cast<unsigned char>(v[1]))) return k;
  size_t i = 1;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    k.major = k.major * 10 + (v[i++] - '0');
    if (k.major > 100000) return {};
  }
  if (i == v.size()) {
    k.kube_like = true;
    k.stability = 2;
    return k;
  }
  std::string_view rest = v.substr(i);
  if (rest.starts_with("alpha")) {
    rest.remove_prefix(5);
  } else if (rest.starts_with("beta")) {
    k.stability = 1;
    rest.remove_prefix(4);
  } else {
    return {};
  }
  if (rest.empty()) return {};
  for (char c : rest) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return {};
    k.minor = k.minor * 10 + (c - '0');
    if (k.minor > 100000) return {};
  }
  k.kube_like = true;
  return k;
}

std::vector<std::string> StringList(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const json::value* v = o.if_contains(key); v && v->is_array()) {
    for (const json::value& s : v->get_array()) {
      if (s.is_string()) out.emplace_back(s.get_string());
    }
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<CustomResourceColumn> Columns(const json::object& version) {
  std::vector<CustomResourceColumn> out;
  if (const json::array* cols = FindArray(version, {"additionalPrinterColumns"})) {
    for (const json::value& c : *cols) {
      const json::object* o = c.if_object();
      if (o == nullptr) continue;
      CustomResourceColumn col;
      col.name = Object::GetString(*o, "name");
      col.type = Object::GetString(*o, "type");
      col.format = Object::GetString(*o, "format");
      col.description = Object::GetString(*o, "description");
      col.priority = static_cast<int>(FindInt(*o, {"priority"}));
      col.json_path = Object::GetString(*o, "jsonPath");
      out.push_back(std::move(col));
    }
  }
  // Upstream's crdHandler: no columns at all means an Age column.
  if (out.empty()) {
    out.push_back({"Age", "date", "", "", 0, ".metadata.creationTimestamp"});
  }
  return out;
}

}  // namespace

bool KubeVersionPrecedes(std::string_view a, std::string_view b) {
  KubeVersion ka = ParseKubeVersion(a), kb = ParseKubeVersion(b);
  if (ka.kube_like != kb.kube_like) return ka.kube_like;
  if (!ka.kube_like) return a < b;
  if (ka.stability != kb.stability) return ka.stability > kb.stability;
  if (ka.major != kb.major) return ka.major > kb.major;
  return ka.minor > kb.minor;
}

std::string CustomResourceStoragePrefix(std::string_view group, std::string_view plural) {
  return "/registry/" + std::string(group) + "/" + std::string(plural);
}

std::string CustomResourceTypeName(std::string_view group, std::string_view version,
                                   std::string_view kind) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= group.size()) {
    size_t dot = group.find('.', start);
    if (dot == std::string_view::npos) dot = group.size();
    parts.push_back(group.substr(start, dot - start));
    start = dot + 1;
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!out.empty()) out += '.';
    out += *it;
  }
  return out + "." + std::string(version) + "." + std::string(kind);
}

StatusOr<std::vector<ResourceInfo>> CustomResourceInfos(const json::object& crd,
                                                        const json::object& names,
                                                        bool terminating) {
  const json::object* spec = FindObject(crd, {"spec"});
  if (spec == nullptr) return InvalidArgument("the CustomResourceDefinition has no spec");
  const std::string group(Object::GetString(*spec, "group"));
  const std::string plural(Object::GetString(names, "plural"));
  const std::string kind(Object::GetString(names, "kind"));
  if (group.empty() || plural.empty() || kind.empty()) {
    return InvalidArgument("the CustomResourceDefinition lacks its group, plural or kind");
  }
  std::string list_kind(Object::GetString(names, "listKind"));
  if (list_kind.empty()) list_kind = kind + "List";
  std::string singular(Object::GetString(names, "singular"));
  if (singular.empty()) singular = Lower(kind);
  const json::array* versions = FindArray(*spec, {"versions"});
  std::string storage_version;
  if (versions != nullptr) {
    for (const json::value& v : *versions) {
      if (const json::object* o = v.if_object(); o && FindBool(*o, {"storage"})) {
        storage_version = Object::GetString(*o, "name");
      }
    }
  }
  if (storage_version.empty()) {
    return InvalidArgument("the CustomResourceDefinition has no storage version");
  }
  const bool namespaced = Object::GetString(*spec, "scope") != "Cluster";
  const std::string crd_name(FindString(crd, {"metadata", "name"}));
  const std::string crd_uid(FindString(crd, {"metadata", "uid"}));

  std::map<std::string, std::string> spec_replicas_paths;
  for (const json::value& v : *versions) {
    const json::object* version = v.if_object();
    if (version == nullptr) continue;
    const json::object* scale = FindObject(*version, {"subresources", "scale"});
    spec_replicas_paths[group + "/" + std::string(Object::GetString(*version, "name"))] =
        scale ? std::string(Object::GetString(*scale, "specReplicasPath")) : "";
  }

  std::vector<ResourceInfo> out;
  for (const json::value& v : *versions) {
    const json::object* version = v.if_object();
    if (version == nullptr || !FindBool(*version, {"served"})) continue;
    const std::string name(Object::GetString(*version, "name"));
    auto cr = std::make_shared<CustomResourceInfo>();
    cr->crd_name = crd_name;
    cr->crd_uid = crd_uid;
    cr->terminating = terminating;
    cr->spec_replicas_paths = spec_replicas_paths;
    if (const json::object* schema = FindObject(*version, {"schema", "openAPIV3Schema"})) {
      auto parsed = ParseJsonSchema(json::value(*schema));
      if (!parsed.ok()) {
        return InvalidArgument("version " + name + ": " + parsed.status().message());
      }
      cr->schema = std::move(*parsed);
      cr->openapi_schema = *schema;
    }
    cr->columns = Columns(*version);
    const json::object* subresources = FindObject(*version, {"subresources"});
    const bool status = subresources && subresources->contains("status");
    if (const json::object* scale = subresources ? FindObject(*subresources, {"scale"}) : nullptr) {
      cr->scale = CustomResourceScale{
          std::string(Object::GetString(*scale, "specReplicasPath")),
          std::string(Object::GetString(*scale, "statusReplicasPath")),
          std::string(Object::GetString(*scale, "labelSelectorPath")),
      };
    }
    std::shared_ptr<CustomResourceTypes> types =
        BuildTypeSchemas(cr->schema.get(), CustomResourceTypeName(group, name, kind),
                         CustomResourceTypeName(group, name, list_kind));
    cr->types = types;

    ResourceInfo info;
    info.gvr = {group, name, plural};
    info.kind = kind;
    info.list_kind = list_kind;
    info.singular = singular;
    info.namespaced = namespaced;
    info.short_names = StringList(names, "shortNames");
    info.categories = StringList(names, "categories");
    // Upstream's order in discovery.
    info.verbs = {"delete", "deletecollection", "get",    "list",
                  "patch",  "create",           "update", "watch"};
    if (status) {
      info.subresources.push_back(
          {"status", {group, name, kind}, {"get", "patch", "update"}, types->root});
    }
    if (cr->scale) {
      info.subresources.push_back({"scale",
                                   {"autoscaling", "v1", "Scale"},
                                   {"get", "patch", "update"},
                                   BuiltinSchemas().FindType("io.k8s.api.autoscaling.v1.Scale")});
    }
    if (const json::array* fields = FindArray(*version, {"selectableFields"})) {
      for (const json::value& f : *fields) {
        if (!f.is_object()) continue;
        std::string_view path = Object::GetString(f.get_object(), "jsonPath");
        if (path.starts_with('.')) path.remove_prefix(1);
        if (!path.empty()) info.selectable_fields.emplace_back(path);
      }
    }
    info.schema = types->root;
    info.list_schema = types->list;
    info.storage_prefix = CustomResourceStoragePrefix(group, plural);
    info.storage_version = storage_version;
    info.custom = true;
    info.crd = std::move(cr);
    out.push_back(std::move(info));
  }
  std::stable_sort(out.begin(), out.end(), [](const ResourceInfo& a, const ResourceInfo& b) {
    return KubeVersionPrecedes(a.gvr.version, b.gvr.version);
  });
  return out;
}

}  // namespace converge::api
