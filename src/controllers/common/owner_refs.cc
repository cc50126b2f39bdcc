#include "controllers/common/owner_refs.h"

namespace converge::controllers {

namespace json = boost::json;

json::object OwnerRef::ToJson() const {
  json::object o;
  o["apiVersion"] = api_version;
  o["kind"] = kind;
  o["name"] = name;
  o["uid"] = uid;
  if (controller) o["controller"] = true;
  if (block_owner_deletion) o["blockOwnerDeletion"] = true;
  return o;
}

std::optional<OwnerRef> OwnerRef::FromJson(api::ObjectView ref) {
  OwnerRef r;
  r.api_version = api::Object::GetString(ref, "apiVersion");
  r.kind = api::Object::GetString(ref, "kind");
  r.name = api::Object::GetString(ref, "name");
  r.uid = api::Object::GetString(ref, "uid");
  r.controller = api::FindBool(ref, {"controller"});
  r.block_owner_deletion = api::FindBool(ref, {"blockOwnerDeletion"});
  if (r.uid.empty() || r.kind.empty() || r.name.empty()) return std::nullopt;
  return r;
}

OwnerRef NewControllerRef(const api::Object& owner, const api::GroupVersionKind& owner_gvk) {
  OwnerRef r;
  r.api_version = owner_gvk.ApiVersion();
  r.kind = owner_gvk.kind;
  r.name = owner.name();
  r.uid = owner.uid();
  r.controller = true;
  r.block_owner_deletion = true;
  return r;
}

std::optional<OwnerRef> GetControllerOf(const api::Object& obj) {
  for (api::View v : obj.owner_references()) {
    if (!v.is_object() || !api::FindBool(v.as_object(), {"controller"})) continue;
    return OwnerRef::FromJson(v.as_object());
  }
  return std::nullopt;
}

std::optional<std::string_view> ControllerUidOf(const api::Object& obj) {
  for (api::View v : obj.owner_references()) {
    if (!v.is_object() || !api::FindBool(v.as_object(), {"controller"})) continue;
    const api::ObjectView ref = v.as_object();
    std::string_view uid = api::Object::GetString(ref, "uid");
    // OwnerRef::FromJson's rule: a reference without uid, kind or name is no reference.
    if (uid.empty() || api::Object::GetString(ref, "kind").empty() ||
        api::Object::GetString(ref, "name").empty()) {
      return std::nullopt;
    }
    return uid;
  }
  return std::nullopt;
}

bool IsControlledBy(const api::Object& obj, const api::Object& owner) {
  std::optional<OwnerRef> ref = GetControllerOf(obj);
  return ref.has_value() && !owner.uid().empty() && ref->uid == owner.uid();
}

std::string AdoptPatch(const api::Object& obj, const OwnerRef& ref) {
  json::object meta;
  meta["ownerReferences"] = json::array{ref.ToJson()};
  meta["uid"] = obj.uid();
  return json::serialize(json::object{{"metadata", std::move(meta)}});
}

std::string ReleasePatch(const api::Object& obj, std::string_view owner_uid) {
  json::object del;
  del["$patch"] = "delete";
  del["uid"] = owner_uid;
  json::object meta;
  meta["ownerReferences"] = json::array{std::move(del)};
  meta["uid"] = obj.uid();
  return json::serialize(json::object{{"metadata", std::move(meta)}});
}

}  // namespace converge::controllers
