#include "scheduler/node_info.h"

#include <gtest/gtest.h>

#include <memory>

#include "api/json_view.h"
#include "api/object.h"

namespace converge::scheduler {
namespace {

TEST(NodeFacts, ReadsACompactNodeWithoutBuildingItsTree) {
  // Informers hold nodes compact (api/json_view.h); the scheduler builds facts for every version
  // of every node, and a tree built for one would live as long as that version.
  auto parsed = api::Object::Parse(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "node-7", "labels": {"zone": "a"}},
    "spec": {"unschedulable": true,
             "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
               "conditions": [{"type": "Ready", "status": "True"},
                              {"type": "MemoryPressure", "status": "False"}]}})");
  ASSERT_TRUE(parsed.ok());
  auto node = std::make_shared<const api::Object>(api::Object::Compact(parsed->doc()));
  ASSERT_TRUE(node->is_compact());
  const uint64_t before = api::CompactMaterializations();
  NodeFactsPtr facts = NewNodeFacts(node);
  EXPECT_EQ(api::CompactMaterializations(), before);
  EXPECT_EQ(facts->name, "node-7");
  EXPECT_TRUE(facts->unschedulable);
  ASSERT_EQ(facts->taints.size(), 1u);
  EXPECT_EQ(facts->taints[0].effect, "NoSchedule");
  // No allocatable: capacity stands for it.
  EXPECT_EQ(facts->allocatable.milli_cpu, 4000);
  EXPECT_EQ(facts->allocatable.allowed_pod_number, 110);
  ASSERT_EQ(facts->conditions.size(), 2u);
  EXPECT_EQ(facts->conditions[1],
            std::make_pair(std::string("MemoryPressure"), std::string("False")));
}

}  // namespace
}  // namespace converge::scheduler
