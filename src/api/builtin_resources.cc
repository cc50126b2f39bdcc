#include "api/builtin_resources.h"

#include <boost/json.hpp>
#include <map>

#include "api/embedded_data.h"
#include "api/schema_registry.h"

namespace converge::api {
namespace {

namespace json = boost::json;
using util::InvalidArgument;
using util::StatusOr;

std::string StrOr(const json::object& o, std::string_view key, std::string_view fallback = {}) {
  const json::value* v = o.if_contains(key);
  return std::string(v && v->is_string() ? std::string_view(v->get_string()) : fallback);
}

std::vector<std::string> Strings(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const json::value* v = o.if_contains(key); v && v->is_array()) {
    for (const json::value& s : v->get_array()) {
      if (s.is_string()) out.emplace_back(s.get_string());
    }
  }
  return out;
}

// "io.k8s.api.apps.v1.Deployment" + "DeploymentList" -> "io.k8s.api.apps.v1.DeploymentList".
std::string SiblingType(std::string_view type, std::string_view name) {
  size_t dot = type.rfind('.');
  return std::string(type.substr(0, dot + 1)) + std::string(name);
}

}  // namespace

StatusOr<std::vector<ResourceInfo>> ParseResources(std::string_view doc,
                                                   const TypeResolver& types) {
  boost::system::error_code ec;
  json::value root = json::parse(doc, ec);
  if (ec) return InvalidArgument("resources document: " + ec.message());
  const json::value* list = root.is_object() ? root.get_object().if_contains("resources") : nullptr;
  if (!list || !list->is_array()) return InvalidArgument("resources document lacks \"resources\"");
  std::vector<ResourceInfo> out;
  for (const json::value& rv : list->get_array()) {
    const json::object* r = rv.if_object();
    if (!r) return InvalidArgument("resources: an entry is not an object");
    ResourceInfo info;
    info.gvr = {StrOr(*r, "group"), StrOr(*r, "version"), StrOr(*r, "resource")};
    info.kind = StrOr(*r, "kind");
    if (info.gvr.version.empty() || info.gvr.resource.empty() || info.kind.empty()) {
      return InvalidArgument("resources: an entry lacks version, resource or kind");
    }
    std::string what = "resource " + info.gvr.Gr().ToString();
    info.list_kind = StrOr(*r, "listKind", info.kind + "List");
    info.singular = StrOr(*r, "singular");
    const json::value* ns = r->if_contains("namespaced");
    if (!ns || !ns->is_bool()) return InvalidArgument(what + " lacks \"namespaced\"");
    info.namespaced = ns->get_bool();
    info.short_names = Strings(*r, "shortNames");
    info.categories = Strings(*r, "categories");
    info.verbs = Strings(*r, "verbs");
    info.selectable_fields = Strings(*r, "selectableFields");
    info.storage_prefix = StrOr(*r, "storagePrefix");
    if (const json::value* v = r->if_contains("returnDeletedObject"); v && v->is_bool()) {
      info.return_deleted_object = v->get_bool();
    }
    info.storage_version = StrOr(*r, "storageVersion", info.gvr.version);
    std::string type = StrOr(*r, "type");
    info.schema = types.FindType(type);
    if (!info.schema) return InvalidArgument(what + " refers to unknown type " + type);
    info.list_schema = types.FindType(SiblingType(type, info.list_kind));
    if (!info.list_schema && info.HasVerb("list")) {
      return InvalidArgument(what + " has no list type " + info.list_kind);
    }
    if (const json::value* subs = r->if_contains("subresources"); subs && subs->is_array()) {
      for (const json::value& sv : subs->get_array()) {
        const json::object* s = sv.if_object();
        if (!s) return InvalidArgument(what + ": a subresource is not an object");
        SubresourceInfo sub;
        sub.name = StrOr(*s, "name");
        sub.response_kind = {StrOr(*s, "group", info.gvr.group),
                             StrOr(*s, "version", info.gvr.version), StrOr(*s, "kind")};
        sub.verbs = Strings(*s, "verbs");
        std::string sub_type = StrOr(*s, "type");
        sub.schema = types.FindType(sub_type);
        if (sub.name.empty() || !sub.schema) {
          return InvalidArgument(what + ": subresource " + sub.name + " has unknown type " +
                                 sub_type);
        }
        info.subresources.push_back(std::move(sub));
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

const std::vector<ResourceInfo>& BuiltinResources() {
  static const std::vector<ResourceInfo>* resources = [] {
    auto parsed =
        ParseResources(FindEmbeddedApiFile("resources.json").value_or(""), BuiltinSchemas());
    if (!parsed.ok()) util::AbortWithStatus("embedded resources.json is broken", parsed.status());
    return new std::vector<ResourceInfo>(std::move(parsed).value());
  }();
  return *resources;
}

void LoadBuiltins(ResourceRegistry* registry) {
  registry->Upsert(BuiltinResources());
}

const TypeSchema* BuiltinTypeForKind(const GroupVersionKind& gvk) {
  static const auto* index = [] {
    auto* m = new std::map<GroupVersionKind, const TypeSchema*>();
    for (const ResourceInfo& r : BuiltinResources()) {
      m->emplace(r.Gvk(), r.schema);
      if (r.list_schema) {
        m->emplace(GroupVersionKind{r.gvr.group, r.gvr.version, r.list_kind}, r.list_schema);
      }
      for (const SubresourceInfo& s : r.subresources) m->emplace(s.response_kind, s.schema);
    }
    return m;
  }();
  if (auto it = index->find(gvk); it != index->end()) return it->second;
  static constexpr std::string_view kOptionKinds[] = {"DeleteOptions", "CreateOptions",
                                                      "UpdateOptions", "PatchOptions"};
  for (std::string_view k : kOptionKinds) {
    if (gvk.kind == k) {
      return BuiltinSchemas().FindType("io.k8s.apimachinery.pkg.apis.meta.v1." + gvk.kind);
    }
  }
  return nullptr;
}

}  // namespace converge::api
