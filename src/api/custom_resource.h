// Custom resources as data: what a CustomResourceDefinition (apiextensions.k8s.io/v1) turns into
// in the resource registry. One ResourceInfo per served version, all sharing one storage prefix
// (/registry/<group>/<plural>) and the storage version (conversion strategy None: the versions
// differ only in apiVersion), named by the CRD's status.acceptedNames, with a CustomResourceInfo
// carrying what is particular to custom resources (schema, printer columns, scale paths).
//
// Thread-safety: pure functions; CustomResourceInfo is immutable once built and shared.
#pragma once

#include <boost/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/resource.h"
#include "api/structural_schema.h"
#include "util/status.h"

namespace converge::api {

// additionalPrinterColumns[] (or the default Age column).
struct CustomResourceColumn {
  std::string name;
  std::string type;  // integer, number, string, boolean, date
  std::string format;
  std::string description;
  int priority = 0;
  std::string json_path;  // ".spec.replicas", ".status.conditions[?(@.type==\"Ready\")].status"
};

// subresources.scale.
struct CustomResourceScale {
  std::string spec_replicas_path;    // ".spec.replicas"
  std::string status_replicas_path;  // ".status.replicas"
  std::string label_selector_path;   // ".status.selector", or empty
};

struct CustomResourceInfo {
  std::string crd_name;  // "loadbalancers.lb.converge.io"
  std::string crd_uid;
  // The version's structural schema; null when the CRD gives none.
  std::shared_ptr<const JsonSchema> schema;
  // The version's openAPIV3Schema as written (for /openapi/v3 and kubectl explain).
  boost::json::object openapi_schema;
  std::vector<CustomResourceColumn> columns;
  std::optional<CustomResourceScale> scale;
  // Every version's specReplicasPath by group/version ("lb.converge.io/v1" -> ".spec.replicas"),
  // "" for versions without the scale subresource: writes through /scale map the managedFields of
  // any version onto the Scale (upstream's ResourcePathMappings for custom resources).
  std::map<std::string, std::string> spec_replicas_paths;
  // The CRD is being deleted: new objects are refused (405), existing ones are being removed.
  bool terminating = false;
  // Owns the TypeSchemas that ResourceInfo::schema and list_schema point to.
  std::shared_ptr<const CustomResourceTypes> types;
};

// The storage prefix of a custom resource: "/registry/lb.converge.io/loadbalancers".
std::string CustomResourceStoragePrefix(std::string_view group, std::string_view plural);

// The OpenAPI name of a custom kind, upstream's reversed-group convention:
// ("lb.converge.io", "v1", "LoadBalancer") -> "io.converge.lb.v1.LoadBalancer".
std::string CustomResourceTypeName(std::string_view group, std::string_view version,
                                   std::string_view kind);

// The ResourceInfos of every served version of `crd` (a whole CustomResourceDefinition object),
// most preferred version first, named by `names` (the CRD's accepted names: an object with
// plural, singular, kind, listKind, shortNames, categories). InvalidArgument when a served
// version's schema cannot be parsed or the CRD lacks its group or storage version.
util::StatusOr<std::vector<ResourceInfo>> CustomResourceInfos(const boost::json::object& crd,
                                                              const boost::json::object& names,
                                                              bool terminating);

// Whether version `a` comes before `b` in Kubernetes version priority (v2, v1, v1beta2,
// v1beta1, v1alpha1, then other names lexically): a strict weak order for std::sort.
bool KubeVersionPrecedes(std::string_view a, std::string_view b);

}  // namespace converge::api
