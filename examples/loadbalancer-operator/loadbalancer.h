// The LoadBalancer custom resource (lb.converge.io/v1, namespaced; crd.yaml) and the external
// load balancer the cloud reports, as plain structs.
//
//   apiVersion: lb.converge.io/v1
//   kind: LoadBalancer
//   metadata: {name: web, namespace: default}
//   spec:
//     ports: [{port: 80, protocol: TCP}]   # required, at least one; reconciled continuously
//     tags: {team: storefront}             # copied to the cloud load balancer at creation
//   status:
//     externalID: lb-0123456789abcdef      # the cloud's id
//     address: 100.64.0.7
//     observedGeneration: 3
//     conditions: [{type: Ready, status: "True", reason: Available, ...}]
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "api/types.h"
#include "util/status.h"

namespace lboperator {

namespace api = converge::api;
namespace util = converge::util;

inline const api::GroupVersionResource kLoadBalancers{"lb.converge.io", "v1", "loadbalancers"};
inline const api::GroupVersionKind kLoadBalancerKind{"lb.converge.io", "v1", "LoadBalancer"};

// Held on every LoadBalancer until its cloud load balancer is gone.
inline constexpr const char* kFinalizer = "lb.converge.io/cloud-load-balancer";

// Tags the operator puts on every cloud load balancer it creates. The UID tag is how the
// operator finds "its" load balancer again, whatever happened to the create call's answer.
inline constexpr const char* kTagUid = "lb.converge.io/uid";
inline constexpr const char* kTagObject = "lb.converge.io/object";  // namespace/name
inline constexpr const char* kTagManagedBy = "lb.converge.io/managed-by";
inline constexpr const char* kManagedByValue = "loadbalancer-operator";
inline constexpr const char* kReservedTagPrefix = "lb.converge.io/";

// Ready condition reasons.
inline constexpr const char* kReasonAvailable = "Available";
inline constexpr const char* kReasonProvisioning = "Provisioning";
inline constexpr const char* kReasonCloudUnavailable = "CloudUnavailable";
inline constexpr const char* kReasonInvalidSpec = "InvalidSpec";

struct Port {
  int32_t port = 0;
  std::string protocol = "TCP";
  friend bool operator==(const Port&, const Port&) = default;
};

using Tags = std::map<std::string, std::string>;

struct LoadBalancerSpec {
  std::vector<Port> ports;
  Tags tags;
};

// The spec of a LoadBalancer object. InvalidArgument (with the field) when it cannot be served:
// no ports, a port outside 1..65535, a protocol other than TCP/UDP, a duplicate port, or a tag
// under the operator's reserved prefix.
util::StatusOr<LoadBalancerSpec> ParseSpec(const api::Object& obj);

// A load balancer as the cloud reports it.
struct ExternalLoadBalancer {
  std::string id;
  std::string name;
  Tags tags;
  std::vector<Port> ports;
  std::string address;
  std::string state;  // "provisioning" or "active"
  friend bool operator==(const ExternalLoadBalancer&, const ExternalLoadBalancer&) = default;
};

struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::string last_transition_time;  // RFC 3339
  int64_t observed_generation = 0;
  friend bool operator==(const Condition&, const Condition&) = default;
};

struct LoadBalancerStatus {
  std::string external_id;
  std::string address;
  int64_t observed_generation = 0;
  std::vector<Condition> conditions;
  friend bool operator==(const LoadBalancerStatus&, const LoadBalancerStatus&) = default;
};

LoadBalancerStatus ParseStatus(const api::Object& obj);
boost::json::object StatusToJson(const LoadBalancerStatus& status);
// The condition of `type`, or null.
const Condition* FindCondition(const LoadBalancerStatus& status, std::string_view type);

}  // namespace lboperator
