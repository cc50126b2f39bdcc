// Resource vectors and the requests of a pod (upstream framework.Resource and
// k8s.io/component-helpers/resource.PodRequests).
//
// Everything here is a plain value or a pure function; safe to use from any thread.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json_view.h"

namespace converge::scheduler {

// CPU in millicores, memory and ephemeral storage in bytes, a pod count (allocatable only) and
// the scalar resources: extended ("example.com/gpu"), hugepages ("hugepages-2Mi") and attachable
// volumes, each as upstream's Quantity.Value().
struct Resource {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t allowed_pod_number = 0;
  // Sorted by name, names unique, no zero entries are required to be absent.
  std::vector<std::pair<std::string, int64_t>> scalar;

  // The scalar resource `name`, 0 when absent.
  int64_t Scalar(std::string_view name) const;
  void AddScalar(std::string_view name, int64_t v);
  void SetMaxScalar(std::string_view name, int64_t v);

  void Add(const Resource& o);
  void Sub(const Resource& o);
  // Per dimension max (the init container rule).
  void SetMax(const Resource& o);
  // No cpu, memory, ephemeral storage or scalar request (the pod count is not a request).
  bool IsZeroRequest() const;

  bool operator==(const Resource&) const = default;
};

// Whether a resource name is counted among the scalar resources (upstream IsScalarResourceName:
// extended, hugepages, prefixed native and attachable-volumes resources).
bool IsScalarResourceName(std::string_view name);

// A ResourceList ({"cpu":"500m","memory":"1Gi","pods":"110"}); values that are not quantities are
// ignored (the API server has validated them).
Resource ResourceListToResource(api::ObjectView list);

// The requests that a container without an explicit request is counted with when spreading
// (upstream schedutil.DefaultMilliCPURequest / DefaultMemoryRequest): 0.1 core and 200 MB.
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

// The effective requests of a pod spec (upstream resourcehelper.PodRequests):
//   - regular containers and restartable init containers ("sidecars", restartPolicy Always)
//     run together, so their requests add up;
//   - each ordinary init container runs alone, next to the sidecars started before it, so the
//     pod needs at least max over init containers of (its request + the sidecars before it);
//   - the result is the per-dimension max of the two, plus spec.overhead.
// With `non_missing_defaults`, a container that sets no cpu (memory) request counts as
// kDefaultMilliCpuRequest (kDefaultMemoryRequest): upstream's non-zero requests used for
// scoring. An explicit zero stays zero.
//
// Worked example (no sidecars): init containers {cpu 2, mem 1G} and {cpu 2, mem 3G}, containers
// {cpu 2, mem 1G} and {cpu 1, mem 1G}: containers sum to {3, 2G}, init max is {2, 3G}, the pod
// requests {3, 3G}.
Resource PodRequests(api::ObjectView pod_spec, bool non_missing_defaults = false);

}  // namespace converge::scheduler
