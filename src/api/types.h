// Names of things in the API: group/version/kind, group/version/resource and object keys.
//
// Keys are types, not strings that every caller parses (STYLE.md). All are plain values.
#pragma once

#include <compare>
#include <functional>
#include <string>
#include <string_view>

namespace converge::api {

struct GroupVersion {
  std::string group;  // "" for the core group
  std::string version;

  // "v1" for core, "apps/v1" otherwise.
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // Parses an apiVersion string ("v1", "apps/v1").
  static GroupVersion Parse(std::string_view api_version);
  auto operator<=>(const GroupVersion&) const = default;
};

struct GroupVersionKind {
  std::string group;
  std::string version;
  std::string kind;

  GroupVersion Gv() const { return {group, version}; }
  std::string ApiVersion() const { return Gv().ApiVersion(); }
  auto operator<=>(const GroupVersionKind&) const = default;
};

struct GroupResource {
  std::string group;
  std::string resource;

  // "deployments.apps", or "pods" for the core group: the form Status messages use.
  std::string ToString() const { return group.empty() ? resource : resource + "." + group; }
  auto operator<=>(const GroupResource&) const = default;
};

struct GroupVersionResource {
  std::string group;
  std::string version;
  std::string resource;

  GroupVersion Gv() const { return {group, version}; }
  GroupResource Gr() const { return {group, resource}; }
  auto operator<=>(const GroupVersionResource&) const = default;
};

// namespace/name of an object; namespace is empty for cluster-scoped objects.
struct ObjectKey {
  std::string ns;
  std::string name;

  // "ns/name", or "name" when cluster-scoped (client-go's MetaNamespaceKeyFunc format).
  std::string ToString() const { return ns.empty() ? name : ns + "/" + name; }
  static ObjectKey Parse(std::string_view key);
  auto operator<=>(const ObjectKey&) const = default;
};

}  // namespace converge::api

namespace converge::api {
// The hash of the key (ns, name); std::hash<ObjectKey> and lookups by views of a key agree on it.
inline size_t HashObjectKey(std::string_view ns, std::string_view name) noexcept {
  size_t h = std::hash<std::string_view>{}(ns);
  return h ^ (std::hash<std::string_view>{}(name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}
}  // namespace converge::api

template <>
struct std::hash<converge::api::ObjectKey> {
  size_t operator()(const converge::api::ObjectKey& k) const noexcept {
    return converge::api::HashObjectKey(k.ns, k.name);
  }
};
