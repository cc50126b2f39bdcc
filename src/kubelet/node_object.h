// The API objects a simulated node owns, built as upstream's kubelet builds them: the Node it
// registers (labels, addresses, capacity and allocatable, conditions, nodeInfo, daemonEndpoints),
// the status patch it posts afterwards, and its Lease in kube-node-lease.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "api/object.h"

namespace converge::kubelet {

using WallTime = std::chrono::system_clock::time_point;

struct NodeCapacity {
  int64_t cpu_milli = 16'000;
  int64_t memory_bytes = 64ll << 30;
  int64_t pods = 110;
  int64_t ephemeral_storage_bytes = 100ll << 30;
};

struct NodeConfig {
  std::string name;
  int index = 0;             // the node's number: pod CIDR, machine IDs
  std::string internal_ip;   // status.addresses InternalIP
  int kubelet_port = 10250;  // status.daemonEndpoints.kubeletEndpoint.Port (where logs are served)
  NodeCapacity capacity;
  std::string kubelet_version = "v1.32.0";
  std::string architecture = "amd64";
  std::string operating_system = "linux";
  std::string instance_type = "converge-sim";  // node.kubernetes.io/instance-type; "" for none
  std::map<std::string, std::string> extra_labels;
  std::string pod_cidr;  // "10.244.3.0/24"
};

// What upstream's kubelet keeps back from capacity for allocatable: the default hard eviction
// thresholds (memory.available<100Mi, nodefs.available<10%); no kube/system reservations.
NodeCapacity Allocatable(const NodeCapacity& capacity);

// The Node object to create at registration (status included: node registration writes it).
api::Object BuildNode(const NodeConfig& config, WallTime now);

// The node conditions a healthy kubelet reports: NetworkUnavailable (False, RouteCreated),
// MemoryPressure, DiskPressure, PIDPressure (False) and Ready (True, KubeletReady), with
// lastHeartbeatTime `heartbeat` and lastTransitionTime `transition`.
boost::json::array HealthyNodeConditions(WallTime heartbeat, WallTime transition);

// The strategic-merge patch of nodes/status a heartbeat posts (the conditions, by type).
std::string NodeStatusPatch(WallTime heartbeat, WallTime transition);

// The node's Lease: holderIdentity = node, leaseDurationSeconds, renewTime (MicroTime), owned by
// the Node (so deleting the node garbage-collects it). `resource_version` empty for a create.
api::Object BuildLease(std::string_view node_name, std::string_view node_uid,
                       std::string_view resource_version, int lease_duration_seconds,
                       WallTime renew_time);

// "16", "67108864Ki", ... as the kubelet prints quantities.
std::string CpuQuantity(int64_t milli);
std::string BytesQuantity(int64_t bytes);

}  // namespace converge::kubelet
