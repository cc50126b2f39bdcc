// core/v1 strategies (pods, namespaces, nodes, services, configmaps, secrets, serviceaccounts,
// events, endpoints, persistentvolumeclaims) and the pure helpers the storage layer needs for
// what a strategy cannot do alone (namespace /finalize, service cluster IP allocation).
//
// Upstream: pkg/registry/core/*/strategy.go, pkg/apis/core/v1/defaults.go,
// pkg/apis/core/validation/{validation.go,events.go}.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/object.h"
#include "apiserver/errors.h"

namespace converge::apiserver {

// PUT /api/v1/namespaces/{name}/finalize: only spec.finalizers (and metadata) move; status is
// kept from `old` (namespaceFinalizeStrategy.PrepareForUpdate).
void PrepareNamespaceFinalize(api::Object& obj, const api::Object& old);
// ValidateNamespaceFinalizeUpdate: each spec.finalizers[i] must be a qualified name, and a name
// without '/' must be a standard one ("kubernetes").
std::vector<StatusCause> ValidateNamespaceFinalize(const api::Object& obj, const api::Object& old);

// POST pods/{name}/binding (BindingREST.Create): validates the Binding (422 Invalid, kind
// Binding) and assigns the pod: spec.nodeName set, the binding's annotations copied, condition
// PodScheduled=True (lastTransitionTime `now` when it changes). A pod that is being deleted,
// already assigned, still gated, or whose uid/resourceVersion differ from the binding's
// preconditions gets 409 Conflict on "pods/binding", as upstream. On error `pod` is unchanged.
std::optional<ApiError> BindPod(api::Object& pod, const api::Object& binding, std::string_view now);

// The service cluster IP range (upstream's default --service-cluster-ip-range).
inline constexpr std::string_view kServiceClusterIpRange = "10.96.0.0/12";

// Picks the lowest free address of `cidr` (IPv4 "a.b.c.d/n") for a new service, skipping the
// network and broadcast addresses; the first one handed out (10.96.0.1) is what upstream gives
// the `kubernetes` service. `used` holds addresses as dotted strings. nullopt when the range is
// full or `cidr` is malformed. (Upstream picks at random; lowest-free is deterministic.)
std::optional<std::string> AllocateClusterIp(const std::set<std::string>& used,
                                             std::string_view cidr = kServiceClusterIpRange);
// Whether a service needs a cluster IP allocated: not ExternalName, not headless ("None"), and
// spec.clusterIP empty.
bool ServiceNeedsClusterIp(const api::Object& svc);
// Sets spec.clusterIP and spec.clusterIPs to `ip` (what the allocator does before validation).
void AssignClusterIp(api::Object& svc, std::string_view ip);

}  // namespace converge::apiserver
