// Index functions for the Indexer: each maps an object to the values it is found under.
//
// Built-in indexes a controller usually wants:
//   kNamespaceIndex  "namespace"      metadata.namespace ("" for cluster-scoped objects)
//   kOwnerUidIndex   "owner-uid"      the uid of every ownerReference
//   kControllerUidIndex "controller-uid" the uid of the ownerReference with controller: true
//   kLabelsIndex     "labels"         "key=value" for every label
//   kNodeNameIndex   "spec.nodeName"  a pod's node (FieldIndexFunc("spec.nodeName"))
// and two factories for more: LabelIndexFunc (one label's value) and FieldIndexFunc (any scalar
// field by dotted path).
//
// Thread-safety: index functions are pure and are called concurrently.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"

namespace converge::client {

using IndexFunc = std::function<std::vector<std::string>(const api::Object&)>;
using Indexers = std::map<std::string, IndexFunc>;

inline constexpr std::string_view kNamespaceIndex = "namespace";
inline constexpr std::string_view kOwnerUidIndex = "owner-uid";
inline constexpr std::string_view kControllerUidIndex = "controller-uid";
inline constexpr std::string_view kLabelsIndex = "labels";
inline constexpr std::string_view kNodeNameIndex = "spec.nodeName";

std::vector<std::string> NamespaceIndexFunc(const api::Object& obj);
std::vector<std::string> OwnerUidIndexFunc(const api::Object& obj);
std::vector<std::string> ControllerUidIndexFunc(const api::Object& obj);
std::vector<std::string> LabelsIndexFunc(const api::Object& obj);
// Indexes by the value of one label; objects without it are not indexed.
IndexFunc LabelIndexFunc(std::string label_key);
// Indexes by a scalar field ("spec.nodeName", "status.phase"); objects where it is empty or
// absent are not indexed.
IndexFunc FieldIndexFunc(std::string dotted_path);

// The namespace index alone (what every informer gets by default).
Indexers DefaultIndexers();

}  // namespace converge::client
