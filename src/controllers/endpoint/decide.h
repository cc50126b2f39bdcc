// The Endpoints controller's decision (upstream's pkg/controller/endpoint): a Service with a
// selector has an Endpoints object of its name listing, per port, the addresses of the pods it
// selects — ready pods under `addresses`, the others under `notReadyAddresses` (all under
// `addresses` with spec.publishNotReadyAddresses). Pods without an IP, terminal pods and pods
// being deleted are left out. A targetPort given by name is looked up in each pod's container
// ports (a pod without it is left out of that port). Subsets are packed as upstream's
// RepackSubsets packs them: one subset per distinct set of ports, addresses sorted by IP.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <vector>

#include <boost/json.hpp>

#include "api/object.h"

namespace converge::controllers::endpoint {

// Whether `svc` selects pods at all (a Service without a selector has Endpoints its users
// write, which the controller leaves alone).
bool HasSelector(const api::Object& svc);
// Whether `pod` carries every label of the Service's selector.
bool Selects(const api::Object& svc, const api::Object& pod);

// The `subsets` of the Service's Endpoints given the pods of its namespace.
boost::json::array Subsets(const api::Object& svc, const std::vector<api::ObjectPtr>& pods);

// What to write: the Endpoints to create (current null) or update (`current` with its subsets
// and labels replaced), or nothing when `current` is right already.
std::optional<api::Object> DesiredEndpoints(const api::Object& svc, const api::Object* current,
                                            const std::vector<api::ObjectPtr>& pods);

}  // namespace converge::controllers::endpoint
