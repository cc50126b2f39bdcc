#include "controllers/garbagecollector/object_identity.h"

#include <tuple>

namespace converge::controllers::garbagecollector {

namespace json = boost::json;

std::string ObjectIdentity::ToString() const {
  return "[" + api_version + "/" + kind + ", namespace: " + ns + ", name: " + name +
         ", uid: " + uid + "]";
}

bool ReferenceLessThan(const ObjectIdentity& a, const ObjectIdentity& b) {
  // Kind and apiVersion weigh more than the namespace, so kinds order the same whether they are
  // cluster-scoped or namespaced.
  return std::tie(a.kind, a.api_version, a.ns, a.name, a.uid) <
         std::tie(b.kind, b.api_version, b.ns, b.name, b.uid);
}

ObjectIdentity IdentityOfReference(const OwnerReference& ref, std::string_view ns) {
  return {ref.api_version, ref.kind, ref.name, ref.uid, std::string(ns)};
}

bool ReferenceMatchesCoordinates(const OwnerReference& ref, const ObjectIdentity& identity) {
  return ref.uid == identity.uid && ref.name == identity.name && ref.kind == identity.kind &&
         ref.api_version == identity.api_version;
}

std::vector<OwnerReference> OwnerReferencesOf(const api::Object& obj) {
  std::vector<OwnerReference> out;
  for (api::View v : obj.owner_references()) {
    const api::ObjectView o = v.if_object();
    if (!o) continue;
    OwnerReference r;
    r.api_version = std::string(api::Object::GetString(o, "apiVersion"));
    r.kind = std::string(api::Object::GetString(o, "kind"));
    r.name = std::string(api::Object::GetString(o, "name"));
    r.uid = std::string(api::Object::GetString(o, "uid"));
    r.controller = api::FindBool(o, {"controller"});
    r.block_owner_deletion = api::FindBool(o, {"blockOwnerDeletion"});
    if (r.uid.empty()) continue;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace converge::controllers::garbagecollector
