#include "kubelet/node_object.h"

#include "kubelet/image_registry.h"
#include "util/time_format.h"

namespace converge::kubelet {

namespace {

namespace json = boost::json;

std::string Uuid(std::string_view seed) {
  std::string h = HexId(seed, 32);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

json::object ConditionJson(std::string_view type, std::string_view status, std::string_view reason,
                           std::string_view message, WallTime heartbeat, WallTime transition) {
  json::object c;
  c["type"] = type;
  c["status"] = status;
  c["lastHeartbeatTime"] = util::FormatRfc3339(heartbeat);
  c["lastTransitionTime"] = util::FormatRfc3339(transition);
  c["reason"] = reason;
  c["message"] = message;
  return c;
}

json::object Resources(const NodeCapacity& c) {
  json::object r;
  r["cpu"] = CpuQuantity(c.cpu_milli);
  r["ephemeral-storage"] = BytesQuantity(c.ephemeral_storage_bytes);
  r["hugepages-1Gi"] = "0";
  r["hugepages-2Mi"] = "0";
  r["memory"] = BytesQuantity(c.memory_bytes);
  r["pods"] = std::to_string(c.pods);
  return r;
}

}  // namespace

std::string CpuQuantity(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string BytesQuantity(int64_t bytes) {
  if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + "Ki";
  return std::to_string(bytes);
}

NodeCapacity Allocatable(const NodeCapacity& capacity) {
  NodeCapacity a = capacity;
  a.memory_bytes = std::max<int64_t>(0, capacity.memory_bytes - (100ll << 20));
  a.ephemeral_storage_bytes = capacity.ephemeral_storage_bytes / 10 * 9;
  return a;
}

json::array HealthyNodeConditions(WallTime heartbeat, WallTime transition) {
  json::array a;
  a.push_back(ConditionJson("NetworkUnavailable", "False", "RouteCreated",
                            "RouteController created a route", heartbeat, transition));
  a.push_back(ConditionJson("MemoryPressure", "False", "KubeletHasSufficientMemory",
                            "kubelet has sufficient memory available", heartbeat, transition));
  a.push_back(ConditionJson("DiskPressure", "False", "KubeletHasNoDiskPressure",
                            "kubelet has no disk pressure", heartbeat, transition));
  a.push_back(ConditionJson("PIDPressure", "False", "KubeletHasSufficientPID",
                            "kubelet has sufficient PID available", heartbeat, transition));
  a.push_back(ConditionJson("Ready", "True", "KubeletReady", "kubelet is posting ready status",
                            heartbeat, transition));
  return a;
}

api::Object BuildNode(const NodeConfig& config, WallTime now) {
  json::object labels;
  labels["beta.kubernetes.io/arch"] = config.architecture;
  labels["beta.kubernetes.io/os"] = config.operating_system;
  labels["kubernetes.io/arch"] = config.architecture;
  labels["kubernetes.io/hostname"] = config.name;
  labels["kubernetes.io/os"] = config.operating_system;
  if (!config.instance_type.empty()) {
    labels["node.kubernetes.io/instance-type"] = config.instance_type;
  }
  for (const auto& [k, v] : config.extra_labels) labels[k] = v;

  json::object metadata;
  metadata["name"] = config.name;
  metadata["labels"] = std::move(labels);
  metadata["annotations"] =
      json::object{{"node.alpha.kubernetes.io/ttl", "0"},
                   {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}};

  json::object spec;
  if (!config.pod_cidr.empty()) {
    spec["podCIDR"] = config.pod_cidr;
    spec["podCIDRs"] = json::array{json::value(config.pod_cidr)};
  }

  json::object status;
  status["addresses"] =
      json::array{json::object{{"type", "InternalIP"}, {"address", config.internal_ip}},
                  json::object{{"type", "Hostname"}, {"address", config.name}}};
  status["allocatable"] = Resources(Allocatable(config.capacity));
  status["capacity"] = Resources(config.capacity);
  status["conditions"] = HealthyNodeConditions(now, now);
  status["daemonEndpoints"] =
      json::object{{"kubeletEndpoint", json::object{{"Port", config.kubelet_port}}}};
  const std::string seed = "node:" + config.name + ":" + std::to_string(config.index);
  json::object info;
  info["architecture"] = config.architecture;
  info["bootID"] = Uuid(seed + ":boot");
  info["containerRuntimeVersion"] = "converge-sim://1.0";
  info["kernelVersion"] = "6.1.0-converge-sim";
  info["kubeProxyVersion"] = "";
  info["kubeletVersion"] = config.kubelet_version;
  info["machineID"] = HexId(seed + ":machine", 32);
  info["operatingSystem"] = config.operating_system;
  info["osImage"] = "Converge Simulated Node 1.0";
  info["systemUUID"] = Uuid(seed + ":system");
  status["nodeInfo"] = std::move(info);

  json::object doc;
  doc["apiVersion"] = "v1";
  doc["kind"] = "Node";
  doc["metadata"] = std::move(metadata);
  doc["spec"] = std::move(spec);
  doc["status"] = std::move(status);
  return api::Object(std::move(doc));
}

std::string NodeStatusPatch(WallTime heartbeat, WallTime transition) {
  json::object status;
  status["conditions"] = HealthyNodeConditions(heartbeat, transition);
  return json::serialize(json::object{{"status", std::move(status)}});
}

api::Object BuildLease(std::string_view node_name, std::string_view node_uid,
                       std::string_view resource_version, int lease_duration_seconds,
                       WallTime renew_time) {
  json::object metadata;
  metadata["name"] = node_name;
  metadata["namespace"] = "kube-node-lease";
  if (!resource_version.empty()) metadata["resourceVersion"] = resource_version;
  if (!node_uid.empty()) {
    metadata["ownerReferences"] = json::array{json::object{
        {"apiVersion", "v1"}, {"kind", "Node"}, {"name", node_name}, {"uid", node_uid}}};
  }
  json::object spec;
  spec["holderIdentity"] = node_name;
  spec["leaseDurationSeconds"] = lease_duration_seconds;
  spec["renewTime"] = util::FormatRfc3339Micro(renew_time);
  json::object doc;
  doc["apiVersion"] = "coordination.k8s.io/v1";
  doc["kind"] = "Lease";
  doc["metadata"] = std::move(metadata);
  doc["spec"] = std::move(spec);
  return api::Object(std::move(doc));
}

}  // namespace converge::kubelet
