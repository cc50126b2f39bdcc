#include "scheduler/node_info.h"

#include <algorithm>

namespace converge::scheduler {

namespace json = boost::json;

NodeFactsPtr NewNodeFacts(api::ObjectPtr node) {
  auto facts = std::make_shared<NodeFacts>();
  const json::object& doc = node->doc();
  facts->name = std::string(node->name());
  facts->labels = ParseLabels(node->labels());
  facts->taints = ParseTaints(api::FindArray(doc, {"spec", "taints"}));
  facts->unschedulable = api::FindBool(doc, {"spec", "unschedulable"});
  const json::object* alloc = api::FindObject(doc, {"status", "allocatable"});
  if (!alloc || alloc->empty()) alloc = api::FindObject(doc, {"status", "capacity"});
  facts->allocatable = ResourceListToResource(alloc);
  if (const json::array* conds = api::FindArray(doc, {"status", "conditions"})) {
    for (const json::value& c : *conds) {
      if (!c.is_object()) continue;
      facts->conditions.emplace_back(std::string(api::FindString(c.get_object(), {"type"})),
                                     std::string(api::FindString(c.get_object(), {"status"})));
    }
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
