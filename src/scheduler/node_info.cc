#include "scheduler/node_info.h"

#include <algorithm>

namespace converge::scheduler {

namespace json = boost::json;

NodeFactsPtr NewNodeFacts(api::ObjectPtr node) {
  auto facts = std::make_shared<NodeFacts>();
  // Read through views: the node is shared and held compact; asking it for its Boost.JSON tree
  // would build one per node version that lives as long as the node (~7 KB a node).
  const api::ObjectView doc = node->view();
  facts->name = std::string(node->name());
  facts->labels = ParseLabels(node->labels());
  facts->taints = ParseTaints(api::FindArray(doc, {"spec", "taints"}));
  facts->unschedulable = api::FindBool(doc, {"spec", "unschedulable"});
  api::ObjectView alloc = api::FindObject(doc, {"status", "allocatable"});
  if (!alloc || alloc.empty()) alloc = api::FindObject(doc, {"status", "capacity"});
  facts->allocatable = ResourceListToResource(alloc);
  for (api::View c : api::FindArray(doc, {"status", "conditions"})) {
    const api::ObjectView o = c.if_object();
    if (!o) continue;
    facts->conditions.emplace_back(std::string(api::GetString(o, "type")),
                                   std::string(api::GetString(o, "status")));
  }
  facts->node = std::move(node);
  return facts;
}

void NodeInfo::AddPod(PodInfoPtr pod) {
  requested.Add(pod->requests);
  non_zero_cpu += pod->non_zero_requests.milli_cpu;
  non_zero_memory += pod->non_zero_requests.memory;
  pods.push_back(std::move(pod));
}

bool NodeInfo::RemovePod(const api::ObjectKey& key) {
  auto it =
      std::find_if(pods.begin(), pods.end(), [&](const PodInfoPtr& p) { return p->key == key; });
  if (it == pods.end()) return false;
  requested.Sub((*it)->requests);
  non_zero_cpu -= (*it)->non_zero_requests.milli_cpu;
  non_zero_memory -= (*it)->non_zero_requests.memory;
  // Order does not matter (upstream swaps with the last too).
  std::iter_swap(it, pods.end() - 1);
  pods.pop_back();
  return true;
}

}  // namespace converge::scheduler
