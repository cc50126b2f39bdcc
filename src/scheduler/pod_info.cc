#include "scheduler/pod_info.h"

namespace converge::scheduler {

namespace json = boost::json;

PodInfoPtr NewPodInfo(api::ObjectPtr pod) {
  auto info = std::make_shared<PodInfo>();
  const api::ObjectView doc = pod->view();
  const api::ObjectView spec = api::FindObject(doc, {"spec"});
  info->key = pod->key();
  info->uid = pod->uid();
  info->node_name = api::FindString(spec, {"nodeName"});
  info->scheduler_name = api::FindString(spec, {"schedulerName"}, "default-scheduler");
  info->nominated_node_name = api::FindString(doc, {"status", "nominatedNodeName"});
  info->priority = static_cast<int32_t>(api::FindInt(spec, {"priority"}));
  info->preempt_never = api::FindString(spec, {"preemptionPolicy"}) == "Never";
  api::ArrayView gates = api::FindArray(spec, {"schedulingGates"});
  info->gated = !gates.empty();
  std::string_view phase = api::FindString(doc, {"status", "phase"});
  info->terminal = phase == "Succeeded" || phase == "Failed";
  info->requests = PodRequests(spec);
  info->non_zero_requests = PodRequests(spec, /*non_missing_defaults=*/true);
  info->required_affinity = ParseRequiredNodeAffinity(spec);
  info->preferred_affinity = ParsePreferredSchedulingTerms(api::FindArray(
      spec, {"affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution"}));
  info->tolerations = SharedTolerations(api::FindArray(spec, {"tolerations"}));
  info->pod = std::move(pod);
  return info;
}

}  // namespace converge::scheduler
