#include "apiserver/openapi.h"

#include <openssl/evp.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <deque>
#include <map>
#include <set>

#include "api/custom_resource.h"
#include "api/object.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using api::FieldSchema;
using api::ResourceInfo;
using api::SpecialType;
using api::TypeSchema;
using api::ValueKind;
using Table = api::ResourceRegistry::Table;

constexpr std::string_view kMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.";
constexpr std::string_view kRefPrefix = "#/components/schemas/";

json::object Ref(std::string_view type_name) {
  return {{"$ref", std::string(kRefPrefix) + std::string(type_name)}};
}
// A reference with room for sibling keywords (OpenAPI 3.0 ignores siblings of a bare $ref).
json::object AllOfRef(std::string_view type_name) {
  return {{"allOf", json::array{Ref(type_name)}}};
}

json::object GvkJson(const api::GroupVersionKind& gvk) {
  return {{"group", gvk.group}, {"kind", gvk.kind}, {"version", gvk.version}};
}

std::string_view ListTypeName(api::ListType t) {
  switch (t) {
    case api::ListType::kAtomic: return "atomic";
    case api::ListType::kSet: return "set";
    case api::ListType::kMap: return "map";
    default: return "";
  }
}

// ---- Component schemas ------------------------------------------------------------------------

json::object ValueSchema(const api::ValueType& vt) {
  switch (vt.kind) {
    case ValueKind::kString: return {{"type", "string"}};
    case ValueKind::kBool: return {{"type", "boolean"}};
    case ValueKind::kInt32: return {{"type", "integer"}, {"format", "int32"}};
    case ValueKind::kInt64: return {{"type", "integer"}, {"format", "int64"}};
    case ValueKind::kFloat: return {{"type", "number"}, {"format", "float"}};
    case ValueKind::kDouble: return {{"type", "number"}, {"format", "double"}};
    case ValueKind::kBytes: return {{"type", "string"}, {"format", "byte"}};
    case ValueKind::kAny:
      return {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
    case ValueKind::kMessage: break;
  }
  if (vt.message->special == SpecialType::kStringList) {
    return {{"type", "array"}, {"items", json::object{{"type", "string"}}}};
  }
  return AllOfRef(vt.message->name);
}

json::object FieldJson(const FieldSchema& f) {
  json::object o;
  if (f.repeated) {
    o["type"] = "array";
    o["items"] = ValueSchema(f.value);
    if (std::string_view lt = ListTypeName(f.list_type); !lt.empty()) {
      o["x-kubernetes-list-type"] = lt;
    }
    if (!f.list_map_keys.empty()) {
      json::array keys;
      for (const std::string& k : f.list_map_keys) keys.emplace_back(k);
      o["x-kubernetes-list-map-keys"] = std::move(keys);
    }
  } else if (f.is_map) {
    o["type"] = "object";
    o["additionalProperties"] = ValueSchema(f.value);
    if (f.map_type == api::MapType::kAtomic) o["x-kubernetes-map-type"] = "atomic";
    if (f.map_type == api::MapType::kGranular) o["x-kubernetes-map-type"] = "granular";
  } else {
    o = ValueSchema(f.value);
  }
  if (!f.patch_strategy.empty()) o["x-kubernetes-patch-strategy"] = f.patch_strategy;
  if (!f.patch_merge_key.empty()) o["x-kubernetes-patch-merge-key"] = f.patch_merge_key;
  if (!f.default_json.empty()) {
    boost::system::error_code ec;
    json::value d = json::parse(f.default_json, ec);
    if (!ec) o["default"] = std::move(d);
  }
  return o;
}

json::object TypeJson(const TypeSchema& t, const std::vector<api::GroupVersionKind>* gvks) {
  json::object o;
  switch (t.special) {
    case SpecialType::kTime:
    case SpecialType::kMicroTime: o = {{"type", "string"}, {"format", "date-time"}}; break;
    case SpecialType::kDuration: o = {{"type", "string"}}; break;
    case SpecialType::kQuantity:
      o = {{"oneOf",
            json::array{json::object{{"type", "string"}}, json::object{{"type", "number"}}}}};
      break;
    case SpecialType::kIntOrString:
      o = {{"oneOf",
            json::array{json::object{{"type", "integer"}}, json::object{{"type", "string"}}}},
           {"format", "int-or-string"},
           {"x-kubernetes-int-or-string", true}};
      break;
    case SpecialType::kRawExtension:
    case SpecialType::kFieldsV1: o = {{"type", "object"}}; break;
    case SpecialType::kStringList:
      o = {{"type", "array"}, {"items", json::object{{"type", "string"}}}};
      break;
    case SpecialType::kNone: {
      o["type"] = "object";
      json::object props;
      json::array required;
      for (const FieldSchema& f : t.fields) {
        props[f.name] = FieldJson(f);
        if (f.required) required.emplace_back(f.name);
      }
      if (!props.empty()) o["properties"] = std::move(props);
      if (!required.empty()) o["required"] = std::move(required);
      if (t.atomic_struct) o["x-kubernetes-map-type"] = "atomic";
      if (t.preserve_unknown_fields) o["x-kubernetes-preserve-unknown-fields"] = true;
      break;
    }
  }
  if (gvks != nullptr && !gvks->empty()) {
    const api::GroupVersionKind& first = gvks->front();
    o["description"] = "A " + first.kind + " in API version " + first.ApiVersion() + ".";
    json::array arr;
    for (const auto& gvk : *gvks) arr.push_back(GvkJson(gvk));
    o["x-kubernetes-group-version-kind"] = std::move(arr);
  }
  return o;
}

// ---- Custom resources -------------------------------------------------------------------------

constexpr std::string_view kApiVersionDescription =
    "APIVersion defines the versioned schema of this representation of an object. Servers should "
    "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
    "More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
constexpr std::string_view kKindDescription =
    "Kind is a string value representing the REST resource this object represents. Servers may "
    "infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#types-kinds";
constexpr std::string_view kMetadataDescription =
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
constexpr std::string_view kListMetadataDescription =
    "Standard list metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#types-kinds";

void TypeMetaProperties(json::object& props) {
  auto fill = [&](const char* name, std::string_view description) {
    json::object& p = api::EnsureObject(props, name);
    if (!p.contains("type")) p["type"] = "string";
    if (!p.contains("description")) p["description"] = description;
  };
  fill("apiVersion", kApiVersionDescription);
  fill("kind", kKindDescription);
}

// The kind's schema as its CRD wrote it, with apiVersion, kind and metadata filled in as
// upstream's CRD OpenAPI builder does.
json::object CustomKindJson(const ResourceInfo& r) {
  json::object o = r.crd->openapi_schema;
  if (o.empty()) o = {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  if (!o.contains("type")) o["type"] = "object";
  json::object& props = api::EnsureObject(o, "properties");
  TypeMetaProperties(props);
  props["metadata"] = json::object{{"allOf", json::array{Ref(std::string(kMeta) + "ObjectMeta")}},
                                   {"description", kMetadataDescription}};
  o["x-kubernetes-group-version-kind"] = json::array{GvkJson(r.Gvk())};
  return o;
}

json::object CustomListJson(const ResourceInfo& r) {
  json::object props;
  TypeMetaProperties(props);
  props["items"] = json::object{
      {"description", "List of " + r.gvr.resource +
                          ". More info: "
                          "https://git.k8s.io/community/contributors/devel/sig-architecture/"
                          "api-conventions.md"},
      {"type", "array"},
      {"items", Ref(r.schema->name)}};
  props["metadata"] = json::object{{"allOf", json::array{Ref(std::string(kMeta) + "ListMeta")}},
                                   {"description", kListMetadataDescription}};
  return {{"description", r.list_kind + " is a list of " + r.kind},
          {"type", "object"},
          {"required", json::array{"items"}},
          {"properties", std::move(props)},
          {"x-kubernetes-group-version-kind",
           json::array{GvkJson({r.gvr.group, r.gvr.version, r.list_kind})}}};
}

// ---- Paths ------------------------------------------------------------------------------------

json::object QueryParam(std::string_view name, std::string_view type,
                        std::string_view description) {
  return {{"name", name},
          {"in", "query"},
          {"description", description},
          {"schema", json::object{{"type", type}, {"uniqueItems", true}}}};
}

json::object PathParam(std::string_view name, std::string_view description) {
  return {{"name", name},
          {"in", "path"},
          {"description", description},
          {"required", true},
          {"schema", json::object{{"type", "string"}, {"uniqueItems", true}}}};
}

json::array WriteParams(bool with_force) {
  json::array p{
      QueryParam("dryRun", "string", "When All, the request is validated but not persisted."),
      QueryParam("fieldManager", "string", "Names the actor making the change."),
      QueryParam("fieldValidation", "string",
                 "How to treat unknown or duplicate fields: Ignore, Warn or Strict."),
  };
  if (with_force) {
    p.push_back(QueryParam("force", "boolean", "Apply only: take over conflicting fields."));
  }
  return p;
}

json::array ListParams() {
  return {
      QueryParam("allowWatchBookmarks", "boolean", "Ask for BOOKMARK watch events."),
      QueryParam("continue", "string", "The continue token of the previous page."),
      QueryParam("fieldSelector", "string", "Select objects by fields."),
      QueryParam("labelSelector", "string", "Select objects by labels."),
      QueryParam("limit", "integer", "Maximum number of items to return."),
      QueryParam("resourceVersion", "string", "The resourceVersion to read or watch from."),
      QueryParam("resourceVersionMatch", "string", "How resourceVersion applies to a list."),
      QueryParam("sendInitialEvents", "boolean", "Start a watch with the current state."),
      QueryParam("timeoutSeconds", "integer", "Time limit of a list or watch call."),
      QueryParam("watch", "boolean", "Stream changes instead of listing."),
  };
}

json::array DeleteParams() {
  return {
      QueryParam("dryRun", "string", "When All, the request is validated but not persisted."),
      QueryParam("gracePeriodSeconds", "integer", "Seconds before the object is deleted."),
      QueryParam("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean",
                 "Delete objects that cannot be read from storage."),
      QueryParam("orphanDependents", "boolean", "Deprecated: use propagationPolicy."),
      QueryParam("propagationPolicy", "string",
                 "Garbage collection of dependents: Orphan, Background or Foreground."),
  };
}

json::object JsonContent(const json::object& schema) {
  return {{"application/json", json::object{{"schema", schema}}},
          {"application/yaml", json::object{{"schema", schema}}}};
}

json::object Response(std::string_view description, const json::object& schema) {
  return {{"description", description}, {"content", JsonContent(schema)}};
}

std::string GroupForId(std::string_view group) {
  if (group.empty()) return "Core";
  std::string g(group);
  if (g.ends_with(".k8s.io")) g.resize(g.size() - 7);
  std::string out;
  bool upper = true;
  for (char c : g) {
    if (c == '.' || c == '-') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

std::string Capitalize(std::string_view s) {
  std::string out(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

struct OperationContext {
  const ResourceInfo* resource;
  api::GroupVersionKind gvk;  // the kind the operation reads or writes
  std::string id_stem;        // e.g. "AppsV1NamespacedDeployment"
  std::string tag;            // e.g. "apps_v1"
};

json::object Operation(const OperationContext& c, std::string_view action, std::string_view id_verb,
                       std::string_view description) {
  json::object op;
  op["tags"] = json::array{json::string(c.tag)};
  op["description"] = description;
  op["operationId"] = std::string(id_verb) + c.id_stem;
  op["x-kubernetes-action"] = action;
  op["x-kubernetes-group-version-kind"] = GvkJson(c.gvk);
  return op;
}

class PathBuilder {
 public:
  PathBuilder(const Table& table, const api::GroupVersion& gv) : gv_(gv) {
    (void)table;
    prefix_ = gv.group.empty() ? "/api/" + gv.version : "/apis/" + gv.group + "/" + gv.version;
    tag_ = (gv.group.empty() ? std::string("core") : GroupForId(gv.group)) + "_" + gv.version;
    std::transform(tag_.begin(), tag_.end(), tag_.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  }

  void Add(const ResourceInfo& r) {
    const std::string kind_type = r.schema ? r.schema->name : std::string();
    const std::string list_type = r.list_schema ? r.list_schema->name : std::string();
    const std::string ns_part = r.namespaced ? "/namespaces/{namespace}" : "";
    const std::string base = prefix_ + ns_part + "/" + r.gvr.resource;
    const std::string stem = GroupForId(gv_.group) + Capitalize(gv_.version) +
                             (r.namespaced ? "Namespaced" : "") + r.kind;
    OperationContext c{&r, r.Gvk(), stem, tag_};
    const std::string a = r.kind;  // for descriptions

    // Collection: list, create, deletecollection.
    json::object collection;
    if (r.HasVerb("list")) {
      json::object op = Operation(c, "list", "list", "Lists or watches " + a + " objects.");
      op["parameters"] = ListParams();
      op["responses"] = json::object{{"200", Response("OK", Ref(list_type))}};
      collection["get"] = std::move(op);
    }
    if (r.HasVerb("create")) {
      json::object op = Operation(c, "post", "create", "Creates a " + a + ".");
      op["parameters"] = WriteParams(false);
      op["requestBody"] =
          json::object{{"content", JsonContent(Ref(kind_type))}, {"required", true}};
      op["responses"] = json::object{{"200", Response("OK", Ref(kind_type))},
                                     {"201", Response("Created", Ref(kind_type))},
                                     {"202", Response("Accepted", Ref(kind_type))}};
      collection["post"] = std::move(op);
    }
    if (r.HasVerb("deletecollection")) {
      json::object op = Operation(c, "deletecollection", "deleteCollection",
                                  "Deletes a set of " + a + " objects.");
      json::array params = DeleteParams();
      for (auto& p : ListParams()) params.push_back(p);
      op["parameters"] = std::move(params);
      op["requestBody"] =
          json::object{{"content", JsonContent(Ref(std::string(kMeta) + "DeleteOptions"))}};
      op["responses"] = json::object{{"200", Response("OK", Ref(std::string(kMeta) + "Status"))}};
      collection["delete"] = std::move(op);
    }
    if (!collection.empty()) {
      json::array params;
      if (r.namespaced) params.push_back(PathParam("namespace", "The object's namespace."));
      params.push_back(QueryParam("pretty", "string", "Indent the output when true."));
      collection["parameters"] = std::move(params);
      paths_[base] = std::move(collection);
    }
    if (r.namespaced && r.HasVerb("list")) {
      OperationContext all = c;
      all.id_stem = GroupForId(gv_.group) + Capitalize(gv_.version) + r.kind + "ForAllNamespaces";
      json::object op =
          Operation(all, "list", "list", "Lists or watches " + a + " objects of all namespaces.");
      op["parameters"] = ListParams();
      op["responses"] = json::object{{"200", Response("OK", Ref(list_type))}};
      paths_[prefix_ + "/" + r.gvr.resource] = json::object{{"get", std::move(op)}};
    }

    // Item: read, replace, patch, delete.
    json::object item;
    if (r.HasVerb("get")) {
      json::object op = Operation(c, "get", "read", "Reads a " + a + ".");
      op["responses"] = json::object{{"200", Response("OK", Ref(kind_type))}};
      item["get"] = std::move(op);
    }
    if (r.HasVerb("update"))
      item["put"] = Replace(c, kind_type, "replace", "Replaces a " + a + ".");
    if (r.HasVerb("patch"))
      item["patch"] = Patch(c, kind_type, "patch", "Partially updates a " + a + ".");
    if (r.HasVerb("delete")) {
      json::object op = Operation(c, "delete", "delete", "Deletes a " + a + ".");
      op["parameters"] = DeleteParams();
      op["requestBody"] =
          json::object{{"content", JsonContent(Ref(std::string(kMeta) + "DeleteOptions"))}};
      op["responses"] = json::object{{"200", Response("OK", Ref(kind_type))},
                                     {"202", Response("Accepted", Ref(kind_type))}};
      item["delete"] = std::move(op);
    }
    if (!item.empty()) {
      item["parameters"] = ItemParams(r);
      paths_[base + "/{name}"] = std::move(item);
    }

    // Subresources.
    for (const api::SubresourceInfo& s : r.subresources) {
      OperationContext sc{&r, s.response_kind, stem + Capitalize(s.name), tag_};
      const std::string type = s.schema ? s.schema->name : kind_type;
      const std::string what = a + " " + s.name;
      json::object sub;
      for (const std::string& verb : s.verbs) {
        if (verb == "get") {
          json::object op = Operation(sc, "get", "read", "Reads the " + what + ".");
          if (s.name == "log") {
            op["responses"] = json::object{
                {"200", json::object{
                            {"description", "OK"},
                            {"content",
                             json::object{
                                 {"text/plain",
                                  json::object{{"schema", json::object{{"type", "string"}}}}}}}}}};
          } else {
            op["responses"] = json::object{{"200", Response("OK", Ref(type))}};
          }
          sub["get"] = std::move(op);
        } else if (verb == "update") {
          sub["put"] = Replace(sc, type, "replace", "Replaces the " + what + ".");
        } else if (verb == "patch") {
          sub["patch"] = Patch(sc, type, "patch", "Partially updates the " + what + ".");
        } else if (verb == "create") {
          json::object op = Operation(sc, "post", "create", "Creates the " + what + ".");
          op["parameters"] = WriteParams(false);
          op["requestBody"] = json::object{{"content", JsonContent(Ref(type))}, {"required", true}};
          op["responses"] = json::object{{"200", Response("OK", Ref(type))},
                                         {"201", Response("Created", Ref(type))}};
          sub["post"] = std::move(op);
        }
      }
      if (!sub.empty()) {
        sub["parameters"] = ItemParams(r);
        paths_[base + "/{name}/" + s.name] = std::move(sub);
      }
    }
  }

  json::object Take() {
    json::object out;
    for (auto& [k, v] : paths_) out[k] = std::move(v);
    return out;
  }

 private:
  static json::array ItemParams(const ResourceInfo& r) {
    json::array params{PathParam("name", "The object's name.")};
    if (r.namespaced) params.push_back(PathParam("namespace", "The object's namespace."));
    params.push_back(QueryParam("pretty", "string", "Indent the output when true."));
    return params;
  }

  static json::object Replace(const OperationContext& c, const std::string& type,
                              std::string_view id_verb, const std::string& description) {
    json::object op = Operation(c, "put", id_verb, description);
    op["parameters"] = WriteParams(false);
    op["requestBody"] = json::object{{"content", JsonContent(Ref(type))}, {"required", true}};
    op["responses"] =
        json::object{{"200", Response("OK", Ref(type))}, {"201", Response("Created", Ref(type))}};
    return op;
  }

  // Custom resources take no strategic merge patch; kubectl reads that from here and sends
  // them JSON merge patches instead.
  static json::object Patch(const OperationContext& c, const std::string& type,
                            std::string_view id_verb, const std::string& description) {
    json::object op = Operation(c, "patch", id_verb, description);
    op["parameters"] = WriteParams(true);
    json::object patch_schema = Ref(std::string(kMeta) + "Patch");
    json::object content;
    for (std::string_view ct :
         {"application/apply-patch+yaml", "application/json-patch+json",
          "application/merge-patch+json", "application/strategic-merge-patch+json"}) {
      if (c.resource->custom && ct == "application/strategic-merge-patch+json") continue;
      content[ct] = json::object{{"schema", patch_schema}};
    }
    op["requestBody"] = json::object{{"content", std::move(content)}, {"required", true}};
    op["responses"] =
        json::object{{"200", Response("OK", Ref(type))}, {"201", Response("Created", Ref(type))}};
    return op;
  }

  api::GroupVersion gv_;
  std::string prefix_;
  std::string tag_;
  std::map<std::string, json::object> paths_;  // sorted, as upstream lists them
};

std::string Sha512Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha512(), nullptr);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

}  // namespace

std::string OpenApiGroupVersionPath(const api::GroupVersion& gv) {
  return gv.group.empty() ? "api/" + gv.version : "apis/" + gv.group + "/" + gv.version;
}

std::optional<std::string> RenderOpenApiGroupVersion(const Table& table,
                                                     const api::TypeResolver& types,
                                                     const api::GroupVersion& gv) {
  std::vector<const ResourceInfo*> resources;
  for (const auto& r : table.resources) {
    if (r->gvr.group == gv.group && r->gvr.version == gv.version) resources.push_back(r.get());
  }
  if (resources.empty()) return std::nullopt;
  std::sort(resources.begin(), resources.end(), [](const ResourceInfo* a, const ResourceInfo* b) {
    return a->gvr.resource < b->gvr.resource;
  });

  // Which kinds each type is the root of, across the whole API (a Scale schema in apps/v1's
  // document still says autoscaling/v1 Scale). meta/v1 option and status kinds belong to every
  // group-version, as upstream registers them.
  std::map<std::string, std::vector<api::GroupVersionKind>, std::less<>> gvks;
  auto note = [&](const TypeSchema* t, api::GroupVersionKind gvk) {
    if (t == nullptr) return;
    auto& v = gvks[t->name];
    if (std::find(v.begin(), v.end(), gvk) == v.end()) v.push_back(std::move(gvk));
  };
  std::set<api::GroupVersion> all_gvs;
  for (const auto& r : table.resources) {
    note(r->schema, r->Gvk());
    note(r->list_schema, {r->gvr.group, r->gvr.version, r->list_kind});
    for (const auto& s : r->subresources) note(s.schema, s.response_kind);
    all_gvs.insert(r->gvr.Gv());
  }
  const TypeSchema* delete_options = types.FindType(std::string(kMeta) + "DeleteOptions");
  const TypeSchema* status = types.FindType(std::string(kMeta) + "Status");
  const TypeSchema* patch = types.FindType(std::string(kMeta) + "Patch");
  for (const api::GroupVersion& g : all_gvs)
    note(delete_options, {g.group, g.version, "DeleteOptions"});
  note(status, {"", "v1", "Status"});

  // Every type the paths reference, and everything they reference in turn. A custom kind's
  // schema is rendered from its CRD (below); it references ObjectMeta and ListMeta.
  std::vector<const TypeSchema*> roots = {delete_options, status, patch};
  for (const ResourceInfo* r : resources) {
    if (r->crd) {
      roots.push_back(types.FindType(std::string(kMeta) + "ObjectMeta"));
      roots.push_back(types.FindType(std::string(kMeta) + "ListMeta"));
      for (const auto& s : r->subresources) {
        if (s.schema != r->schema) roots.push_back(s.schema);
      }
      continue;
    }
    roots.push_back(r->schema);
    roots.push_back(r->list_schema);
    for (const auto& s : r->subresources) roots.push_back(s.schema);
  }
  std::map<std::string_view, const TypeSchema*> reachable;
  std::deque<const TypeSchema*> queue;
  for (const TypeSchema* t : roots) {
    if (t != nullptr && reachable.emplace(t->name, t).second) queue.push_back(t);
  }
  while (!queue.empty()) {
    const TypeSchema* t = queue.front();
    queue.pop_front();
    for (const FieldSchema& f : t->fields) {
      const TypeSchema* m = f.value.kind == ValueKind::kMessage ? f.value.message : nullptr;
      if (m != nullptr && m->special != SpecialType::kStringList &&
          reachable.emplace(m->name, m).second) {
        queue.push_back(m);
      }
    }
  }

  json::object schemas;
  for (const auto& [name, t] : reachable) {
    auto it = gvks.find(name);
    schemas[name] = TypeJson(*t, it == gvks.end() ? nullptr : &it->second);
  }
  for (const ResourceInfo* r : resources) {
    if (!r->crd || !r->schema || !r->list_schema) continue;
    schemas[r->schema->name] = CustomKindJson(*r);
    schemas[r->list_schema->name] = CustomListJson(*r);
  }

  PathBuilder paths(table, gv);
  for (const ResourceInfo* r : resources) paths.Add(*r);

  json::object doc;
  doc["openapi"] = "3.0.0";
  doc["info"] = json::object{{"title", "Kubernetes"}, {"version", "v1.32.0"}};
  doc["paths"] = paths.Take();
  doc["components"] = json::object{
      {"schemas", std::move(schemas)},
      {"securitySchemes",
       json::object{{"BearerToken", json::object{{"type", "apiKey"},
                                                 {"description", "Bearer token authentication"},
                                                 {"name", "authorization"},
                                                 {"in", "header"}}}}}};
  doc["security"] = json::array{json::object{{"BearerToken", json::array()}}};
  return json::serialize(doc);
}

// ---- OpenApiService ---------------------------------------------------------------------------

struct OpenApiService::Rendered {
  std::shared_ptr<const Table> table;
  OpenApiDocument index;
  std::map<std::string, OpenApiDocument, std::less<>> documents;  // by "apis/apps/v1"
};

OpenApiService::OpenApiService(const api::ResourceRegistry* registry,
                               const api::TypeResolver* types)
    : registry_(registry), types_(types) {}

std::shared_ptr<const OpenApiService::Rendered> OpenApiService::CurrentLocked() const {
  auto table = registry_->Snapshot();
  if (rendered_ && rendered_->table == table) return rendered_;
  auto r = std::make_shared<Rendered>();
  r->table = table;
  std::set<api::GroupVersion> gvs;
  for (const auto& res : table->resources) gvs.insert(res->gvr.Gv());
  json::object paths;
  for (const api::GroupVersion& gv : gvs) {
    auto body = RenderOpenApiGroupVersion(*table, *types_, gv);
    if (!body) continue;
    std::string hash = Sha512Hex(*body);
    std::string path = OpenApiGroupVersionPath(gv);
    paths[path] = json::object{{"serverRelativeURL", "/openapi/v3/" + path + "?hash=" + hash}};
    r->documents[path] =
        OpenApiDocument{std::make_shared<const std::string>(std::move(*body)), "\"" + hash + "\""};
  }
  std::string index = json::serialize(json::object{{"paths", std::move(paths)}});
  std::string index_etag = "\"" + Sha512Hex(index).substr(0, 32) + "\"";
  r->index = {std::make_shared<const std::string>(std::move(index)), std::move(index_etag)};
  rendered_ = std::move(r);
  return rendered_;
}

OpenApiDocument OpenApiService::Index() const {
  std::lock_guard<std::mutex> lock(mu_);
  return CurrentLocked()->index;
}

std::optional<OpenApiDocument> OpenApiService::GroupVersion(std::string_view path) const {
  if (size_t q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
  while (path.starts_with('/')) path.remove_prefix(1);
  std::shared_ptr<const Rendered> r;
  {
    std::lock_guard<std::mutex> lock(mu_);
    r = CurrentLocked();
  }
  auto it = r->documents.find(path);
  if (it == r->documents.end()) return std::nullopt;
  return it->second;
}

}  // namespace converge::apiserver
