#include "client/index_funcs.h"

namespace converge::client {
namespace json = boost::json;

std::vector<std::string> NamespaceIndexFunc(const api::Object& obj) {
  return {std::string(obj.namespace_())};
}

namespace {

std::vector<std::string> OwnerUids(const api::Object& obj, bool controller_only) {
  std::vector<std::string> out;
  const json::array* refs = obj.owner_references();
  if (refs == nullptr) return out;
  for (const json::value& ref : *refs) {
    if (!ref.is_object()) continue;
    const json::object& r = ref.as_object();
    if (controller_only && !api::FindBool(r, {"controller"})) continue;
    std::string_view uid = api::Object::GetString(r, "uid");
    if (!uid.empty()) out.emplace_back(uid);
  }
  return out;
}

}  // namespace

std::vector<std::string> OwnerUidIndexFunc(const api::Object& obj) {
  return OwnerUids(obj, /*controller_only=*/false);
}

std::vector<std::string> ControllerUidIndexFunc(const api::Object& obj) {
  return OwnerUids(obj, /*controller_only=*/true);
}

std::vector<std::string> LabelsIndexFunc(const api::Object& obj) {
  std::vector<std::string> out;
  const json::object* labels = obj.labels();
  if (labels == nullptr) return out;
  for (const auto& [k, v] : *labels) {
    if (v.is_string()) out.push_back(std::string(k) + "=" + std::string(v.get_string()));
  }
  return out;
}

IndexFunc LabelIndexFunc(std::string label_key) {
  return [key = std::move(label_key)](const api::Object& obj) -> std::vector<std::string> {
    std::optional<std::string_view> v = obj.label(key);
    if (!v) return {};
    return {std::string(*v)};
  };
}

IndexFunc FieldIndexFunc(std::string dotted_path) {
  return [path = std::move(dotted_path)](const api::Object& obj) -> std::vector<std::string> {
    std::string v = api::FieldValue(obj.doc(), path);
    if (v.empty()) return {};
    return {std::move(v)};
  };
}

Indexers DefaultIndexers() {
  return {{std::string(kNamespaceIndex), NamespaceIndexFunc}};
}

}  // namespace converge::client
