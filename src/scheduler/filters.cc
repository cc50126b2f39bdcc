#include "scheduler/filters.h"

namespace converge::scheduler {

namespace {

FilterStatus Reject(Code code, std::string_view plugin, std::string reason) {
  FilterStatus s;
  s.code = code;
  s.plugin = plugin;
  s.reasons.push_back(std::move(reason));
  return s;
}

}  // namespace

FilterStatus FilterNodeUnschedulable(const PodInfo& pod, const NodeInfo& node) {
  if (!node.node->unschedulable) return {};
  static const Taint kUnschedulableTaint{std::string(kTaintNodeUnschedulable), "",
                                         std::string(kEffectNoSchedule)};
  if (TolerationsTolerateTaint(*pod.tolerations, kUnschedulableTaint)) return {};
  return Reject(Code::kUnschedulableAndUnresolvable, kNodeUnschedulable,
                std::string(kErrReasonUnschedulable));
}

FilterStatus FilterNodeName(const PodInfo& pod, const NodeInfo& node) {
  if (pod.node_name.empty() || pod.node_name == node.name()) return {};
  return Reject(Code::kUnschedulableAndUnresolvable, kNodeName, std::string(kErrReasonNodeName));
}

FilterStatus FilterTaintToleration(const PodInfo& pod, const NodeInfo& node) {
  const Taint* taint = FindUntoleratedScheduleTaint(node.node->taints, *pod.tolerations);
  if (!taint) return {};
  return Reject(Code::kUnschedulableAndUnresolvable, kTaintToleration,
                "node(s) had untolerated taint {" + taint->key + ": " + taint->value + "}");
}

FilterStatus FilterNodeAffinity(const PodInfo& pod, const NodeInfo& node) {
  if (pod.required_affinity.empty() ||
      pod.required_affinity.Matches(node.name(), node.node->labels)) {
    return {};
  }
  return Reject(Code::kUnschedulableAndUnresolvable, kNodeAffinity,
                std::string(kErrReasonNodeAffinity));
}

std::vector<InsufficientResource> FitsRequest(const Resource& req, const NodeInfo& node) {
  std::vector<InsufficientResource> out;
  const Resource& alloc = node.node->allocatable;
  const Resource& used = node.requested;
  int64_t pods = static_cast<int64_t>(node.pods.size());
  if (pods + 1 > alloc.allowed_pod_number) {
    out.push_back({"pods", "Too many pods", 1, pods, alloc.allowed_pod_number});
  }
  if (req.milli_cpu == 0 && req.memory == 0 && req.ephemeral_storage == 0 && req.scalar.empty()) {
    return out;
  }
  if (req.milli_cpu > 0 && req.milli_cpu > alloc.milli_cpu - used.milli_cpu) {
    out.push_back({"cpu", "Insufficient cpu", req.milli_cpu, used.milli_cpu, alloc.milli_cpu});
  }
  if (req.memory > 0 && req.memory > alloc.memory - used.memory) {
    out.push_back({"memory", "Insufficient memory", req.memory, used.memory, alloc.memory});
  }
  if (req.ephemeral_storage > 0 &&
      req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage) {
    out.push_back({"ephemeral-storage", "Insufficient ephemeral-storage", req.ephemeral_storage,
                   used.ephemeral_storage, alloc.ephemeral_storage});
  }
  for (const auto& [name, quantity] : req.scalar) {
    if (quantity > 0 && quantity > alloc.Scalar(name) - used.Scalar(name)) {
      out.push_back(
          {name, "Insufficient " + name, quantity, used.Scalar(name), alloc.Scalar(name)});
    }
  }
  return out;
}

FilterStatus FilterNodeResourcesFit(const PodInfo& pod, const NodeInfo& node) {
  // The common case without allocation: everything fits.
  const Resource& alloc = node.node->allocatable;
  const Resource& used = node.requested;
  const Resource& req = pod.requests;
  if (static_cast<int64_t>(node.pods.size()) + 1 <= alloc.allowed_pod_number &&
      req.milli_cpu <= alloc.milli_cpu - used.milli_cpu &&
      req.memory <= alloc.memory - used.memory &&
      req.ephemeral_storage <= alloc.ephemeral_storage - used.ephemeral_storage &&
      req.scalar.empty()) {
    return {};
  }
  std::vector<InsufficientResource> insufficient = FitsRequest(req, node);
  if (insufficient.empty()) return {};
  FilterStatus s;
  s.code = Code::kUnschedulable;
  s.plugin = kNodeResourcesFit;
  s.reasons.reserve(insufficient.size());
  for (InsufficientResource& r : insufficient) s.reasons.push_back(std::move(r.reason));
  return s;
}

std::span<const FilterPlugin> DefaultFilters() {
  static const FilterPlugin kFilters[] = {
      {kNodeUnschedulable, &FilterNodeUnschedulable}, {kNodeName, &FilterNodeName},
      {kTaintToleration, &FilterTaintToleration},     {kNodeAffinity, &FilterNodeAffinity},
      {kNodeResourcesFit, &FilterNodeResourcesFit},
  };
  return kFilters;
}

FilterStatus RunFilters(std::span<const FilterPlugin> filters, const PodInfo& pod,
                        const NodeInfo& node) {
  for (const FilterPlugin& f : filters) {
    FilterStatus s = f.filter(pod, node);
    if (!s.ok()) return s;
  }
  return {};
}

}  // namespace converge::scheduler
