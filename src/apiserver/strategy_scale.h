// The /scale subresource of Deployments, ReplicaSets and StatefulSets as pure functions: the
// autoscaling/v1 Scale view of a workload, and applying an updated Scale back to it.
//
// Upstream: pkg/registry/apps/{deployment,replicaset,statefulset}/storage (scaleFrom*,
// scaleUpdatedObjectInfo) and pkg/apis/autoscaling/validation (ValidateScale).
//
// The storage layer reads the workload, serves ScaleOf(workload) for GET, applies a PATCH or PUT
// body to that Scale, calls ApplyScale, and then updates the workload through its strategy as a
// normal main-resource update (so the generation moves with spec.replicas).
#pragma once

#include <optional>

#include "api/custom_resource.h"
#include "api/object.h"
#include "apiserver/errors.h"

namespace converge::apiserver {

// {"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{name, namespace, uid,
// resourceVersion, creationTimestamp},"spec":{"replicas":N},"status":{"replicas":M,
// "selector":"app=web"}}. spec.replicas is omitted when 0 (omitempty), as upstream encodes it.
api::Object ScaleOf(const api::Object& workload);

// Validates `scale` (metadata, spec.replicas >= 0; 422 `Scale.autoscaling "web" is invalid`),
// then sets the workload's spec.replicas and, when the Scale carries one, its resourceVersion
// (the precondition the storage checks). On error `workload` is unchanged.
std::optional<ApiError> ApplyScale(api::Object& workload, const api::Object& scale);

// The same for a custom resource whose CRD declares the scale subresource (upstream's
// scaleFromCustomResource): spec.replicas and status.replicas read from the CRD's paths (absent
// reads as 0), status.selector from labelSelectorPath (a string). Applying writes spec.replicas
// back at specReplicasPath, creating the objects on the way.
api::Object CustomResourceScaleOf(const api::Object& cr, const api::CustomResourceScale& paths);
std::optional<ApiError> ApplyCustomResourceScale(api::Object& cr, const api::Object& scale,
                                                 const api::CustomResourceScale& paths);

}  // namespace converge::apiserver
