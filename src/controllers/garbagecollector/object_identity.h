// What the garbage collector knows of an object: its coordinates as an owner reference names them
// (apiVersion, kind, name, uid) plus its namespace, and the owner references it carries.
//
// Thread-safety: plain values.
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"

namespace converge::controllers::garbagecollector {

// One metadata.ownerReferences entry.
struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  bool operator==(const OwnerReference&) const = default;
};

// An object (or an owner an object points at) as the graph names it: upstream's objectReference.
// The namespace of a virtual owner is a guess (the dependent's) until the owner is observed.
struct ObjectIdentity {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  std::string ns;  // empty: cluster-scoped (or unknown)

  // "[apps/v1/ReplicaSet, namespace: ns, name: rs, uid: 1234]", upstream's rendering.
  std::string ToString() const;
  bool operator==(const ObjectIdentity&) const = default;
};

// upstream's referenceLessThan: kind, apiVersion, namespace, name, uid.
bool ReferenceLessThan(const ObjectIdentity& a, const ObjectIdentity& b);

// The identity an owner reference names, with `ns` as its (assumed) namespace.
ObjectIdentity IdentityOfReference(const OwnerReference& ref, std::string_view ns);

// Whether `ref` names `identity`: uid, name, kind and apiVersion all equal (namespaces aside).
bool ReferenceMatchesCoordinates(const OwnerReference& ref, const ObjectIdentity& identity);

// metadata.ownerReferences of `obj`, entries without a uid skipped.
std::vector<OwnerReference> OwnerReferencesOf(const api::Object& obj);

inline constexpr std::string_view kOrphanFinalizer = "orphan";
inline constexpr std::string_view kForegroundFinalizer = "foregroundDeletion";

}  // namespace converge::controllers::garbagecollector
