// Owner references: the metadata.ownerReferences entries that tie a dependent (a Pod, a
// ReplicaSet) to the object that manages it (metav1.OwnerReference and its helpers).
//
// At most one owner reference of an object has `controller: true`: that owner is the object's
// controller, the one allowed to act on it (create, adopt, scale down, release).
//
// Thread-safety: free functions and values.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "api/object.h"
#include "api/types.h"

namespace converge::controllers {

struct OwnerRef {
  std::string api_version;  // "apps/v1"
  std::string kind;         // "ReplicaSet"
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  boost::json::object ToJson() const;
  // Nullopt when `ref` lacks a uid, kind or name.
  static std::optional<OwnerRef> FromJson(api::ObjectView ref);
  friend bool operator==(const OwnerRef&, const OwnerRef&) = default;
};

// The reference a controller puts on what it creates or adopts (metav1.NewControllerRef):
// controller and blockOwnerDeletion both true.
OwnerRef NewControllerRef(const api::Object& owner, const api::GroupVersionKind& owner_gvk);

// The owner reference with controller: true, if any (metav1.GetControllerOf).
std::optional<OwnerRef> GetControllerOf(const api::Object& obj);

// GetControllerOf(obj)->uid without copying the reference: a view into `obj`, valid while it
// lives; nullopt exactly when GetControllerOf returns nullopt.
std::optional<std::string_view> ControllerUidOf(const api::Object& obj);

// Whether `owner` (matched by uid) is the controller of `obj` (metav1.IsControlledBy).
bool IsControlledBy(const api::Object& obj, const api::Object& owner);

// Strategic-merge patches that adopt `obj` for `ref` (adds the reference, keyed by uid) and
// release it from the owner with `owner_uid` (deletes the reference). Both carry `obj`'s uid, so
// that they fail instead of touching a different object that reuses the name.
std::string AdoptPatch(const api::Object& obj, const OwnerRef& ref);
std::string ReleasePatch(const api::Object& obj, std::string_view owner_uid);

}  // namespace converge::controllers
