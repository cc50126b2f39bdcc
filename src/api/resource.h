// The resource registry: every REST resource the API serves, described as data.
//
// Discovery, OpenAPI, routing, storage keys, field selectors and kubectl's short names all read
// this one table. Built-in resources come from api/resources.json (embedded in the binary);
// CustomResourceDefinitions add and remove entries at run time.
//
// Thread-safety: ResourceRegistry is safe for concurrent use. Readers take a Snapshot (an
// immutable shared table) and may keep it as long as they like; writers publish a new snapshot.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/schema.h"
#include "api/types.h"

namespace converge::api {

struct CustomResourceInfo;  // api/custom_resource.h

struct SubresourceInfo {
  std::string name;                // "status", "scale", "binding", "log", "token", ...
  GroupVersionKind response_kind;  // e.g. autoscaling/v1 Scale for "scale"
  std::vector<std::string> verbs;  // "get", "update", "patch", "create"
  // The response kind's root type (autoscaling/v1 Scale for "scale"); null when unknown.
  const TypeSchema* schema = nullptr;
};

struct ResourceInfo {
  GroupVersionResource gvr;
  std::string kind;       // "Deployment"
  std::string list_kind;  // "DeploymentList"
  std::string singular;   // "deployment"
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;  // "all"
  std::vector<std::string> verbs;  // get list watch create update patch delete deletecollection
  std::vector<SubresourceInfo> subresources;
  // Field paths usable in fieldSelector besides metadata.name and metadata.namespace
  // (e.g. "spec.nodeName", "status.phase", "involvedObject.uid").
  std::vector<std::string> selectable_fields;
  // The kind's root type; null when unknown.
  const TypeSchema* schema = nullptr;
  // The list kind's type (e.g. io.k8s.api.apps.v1.DeploymentList); null when unknown or when the
  // resource cannot be listed (reviews).
  const TypeSchema* list_schema = nullptr;
  // Storage key prefix without a trailing slash, e.g. "/registry/deployments". Objects live at
  // prefix + "/" + namespace + "/" + name (namespaced) or prefix + "/" + name (cluster-scoped).
  // Several resources may share a prefix when they are views of one store (core/v1 events and
  // events.k8s.io/v1 events).
  std::string storage_prefix;
  // The version objects of this group-resource are stored in.
  std::string storage_version;
  // A delete that removes the object answers with the object (upstream's ReturnDeletedObject:
  // pods, services, nodes, ...); otherwise with a Success Status naming it.
  bool return_deleted_object = false;
  bool custom = false;  // defined by a CustomResourceDefinition
  // For custom resources: the version's schema, printer columns, scale paths and the types
  // `schema` and `list_schema` point into (api/custom_resource.h). Null for built-in kinds.
  std::shared_ptr<const CustomResourceInfo> crd;

  GroupVersionKind Gvk() const { return {gvr.group, gvr.version, kind}; }
  const SubresourceInfo* Subresource(std::string_view name) const;
  bool HasVerb(std::string_view verb) const;
};

class ResourceRegistry {
 public:
  // An immutable view of every registered resource, in registration order.
  struct Table {
    std::vector<std::shared_ptr<const ResourceInfo>> resources;
    // Group names in the order discovery lists them (core "" first).
    std::vector<std::string> groups;
  };

  std::shared_ptr<const Table> Snapshot() const;

  // Lookups on the current snapshot. Return null when absent.
  std::shared_ptr<const ResourceInfo> Find(const GroupVersionResource& gvr) const;
  std::shared_ptr<const ResourceInfo> FindByKind(const GroupVersionKind& gvk) const;
  // Resolves what a user typed (plural, singular, short name or kind, case-insensitive), with an
  // optional group; picks the preferred version. The core group wins on ties (as kubectl does).
  std::shared_ptr<const ResourceInfo> Resolve(std::string_view name_or_short,
                                              std::optional<std::string_view> group = {}) const;

  // Adds or replaces (by GVR) entries, then publishes a new snapshot.
  void Upsert(std::vector<ResourceInfo> infos);
  // Removes every version of a group-resource.
  void Remove(const GroupResource& gr);
  // Replaces every version of a group-resource with `infos` in one snapshot (CRD updates:
  // readers never see the resource missing in between). `infos` may be empty (= Remove).
  void Replace(const GroupResource& gr, std::vector<std::shared_ptr<const ResourceInfo>> infos);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Table> table_ = std::make_shared<Table>();  // guarded by mu_
};

}  // namespace converge::api
