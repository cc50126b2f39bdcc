#include "client/index_funcs.h"

namespace converge::client {
namespace json = boost::json;

std::vector<std::string> NamespaceIndexFunc(const api::Object& obj) {
  return {std::string(obj.namespace_())};
}

namespace {

std::vector<std::string> OwnerUids(const api::Object& obj, bool controller_only) {
  std::vector<std::string> out;
  for (api::View ref : obj.owner_references()) {
    const api::ObjectView r = ref.if_object();
    if (!r) continue;
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
  for (api::Member m : obj.labels()) {
    if (std::optional<std::string_view> v = m.value().if_string()) {
      out.push_back(std::string(m.key()) + "=" + std::string(*v));
    }
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
    std::string v = api::FieldValue(obj.view(), path);
    if (v.empty()) return {};
    return {std::move(v)};
  };
}

Indexers DefaultIndexers() {
  return {{std::string(kNamespaceIndex), NamespaceIndexFunc}};
}

}  // namespace converge::client
