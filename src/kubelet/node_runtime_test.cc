#include "kubelet/node_runtime.h"

#include <gtest/gtest.h>

#include "kubelet/node_object.h"

namespace converge::kubelet {
namespace {

using namespace std::chrono_literals;

TEST(NodeRuntimeTest, PodCidrsAndAddresses) {
  struct Case {
    int index;
    std::string cidr;
  };
  for (const Case& c :
       std::vector<Case>{{0, "10.244.0.0/24"}, {3, "10.244.3.0/24"}, {256, "10.245.0.0/24"}}) {
    NodeRuntime n({.node_name = "n", .node_index = c.index});
    EXPECT_EQ(n.PodCidr(), c.cidr);
  }
  NodeRuntime wrapped({.node_name = "n", .node_index = 4999});
  EXPECT_EQ(wrapped.PodCidr(), "10.7.135.0/24") << "244·256 + 4999 = 67463 ≡ 1927 = 7·256 + 135";

  NodeRuntime n({.node_name = "n", .node_index = 1});
  EXPECT_EQ(n.AllocateIp("a"), "10.244.1.2");
  EXPECT_EQ(n.AllocateIp("b"), "10.244.1.3");
  EXPECT_EQ(n.AllocateIp("a"), "10.244.1.2") << "same pod, same address";
  n.ReleaseIp("a");
  EXPECT_EQ(n.AllocateIp("c"), "10.244.1.4") << "round-robin: no immediate reuse";
  EXPECT_FALSE(n.ReserveIp("d", "10.244.1.3")) << "taken";
  EXPECT_TRUE(n.ReserveIp("d", "10.244.1.9"));
  for (int i = 0; i < 250; ++i) ASSERT_TRUE(n.AllocateIp("x" + std::to_string(i))) << i;
  EXPECT_FALSE(n.AllocateIp("full").has_value()) << "253 addresses per node";
}

TEST(NodeRuntimeTest, AdmissionCountsPodsCpuAndMemory) {
  NodeRuntime n(
      {.node_name = "n", .allocatable = {.cpu_milli = 1000, .memory_bytes = 1000, .pods = 2}});
  EXPECT_FALSE(n.Admit("a", {600, 100}));
  auto cpu = n.Admit("b", {600, 100});
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->reason, "OutOfcpu");
  EXPECT_EQ(cpu->message,
            "Node didn't have enough resource: cpu, requested: 600, used: 600, capacity: 1000");
  EXPECT_FALSE(n.Admit("c", {0, 900}));
  auto pods = n.Admit("d", {0, 0});
  ASSERT_TRUE(pods);
  EXPECT_EQ(pods->reason, "OutOfpods");
  n.Release("a");
  EXPECT_FALSE(n.Admit("d", {0, 0}));
}

// A pod's address and its admission are held and released independently (one entry per pod
// holds both): releasing one keeps the other, and a pod that holds neither holds nothing.
TEST(NodeRuntimeTest, AddressAndAdmissionAreReleasedIndependently) {
  NodeRuntime n({.node_name = "n",
                 .node_index = 1,
                 .allocatable = {.cpu_milli = 1000, .memory_bytes = 1000, .pods = 2}});
  EXPECT_FALSE(n.Admit("a", {400, 0}));
  EXPECT_EQ(n.AllocateIp("a"), "10.244.1.2");
  EXPECT_FALSE(n.Admit("a", {400, 0})) << "admitted once";
  EXPECT_EQ(n.admitted_pods(), 1u);
  n.Release("a");
  EXPECT_EQ(n.admitted_pods(), 0u);
  EXPECT_EQ(n.AllocateIp("a"), "10.244.1.2") << "the address outlives the admission";
  EXPECT_FALSE(n.ReserveIp("b", "10.244.1.2")) << "still taken";
  auto cpu = n.Admit("b", {1000, 0});
  EXPECT_FALSE(cpu) << "a's cpu was given back";
  n.ReleaseIp("a");
  EXPECT_TRUE(n.ReserveIp("b", "10.244.1.2")) << "free once a let it go";
  EXPECT_FALSE(n.Admit("a", {0, 0})) << "a starts over";
  EXPECT_EQ(n.admitted_pods(), 2u);
  auto full = n.Admit("c", {0, 0});
  ASSERT_TRUE(full);
  EXPECT_EQ(full->reason, "OutOfpods");
  n.Release("b");
  n.ReleaseIp("b");
  n.Release("b");  // twice: nothing more is given back
  EXPECT_EQ(n.admitted_pods(), 1u);
  EXPECT_FALSE(n.Admit("c", {1000, 0}));
}

TEST(NodeRuntimeTest, PullsAreSerializedAndShared) {
  NodeRuntime n({.node_name = "n"});
  WallTime t0{};
  auto a = n.SchedulePull("img-a", 2s, true, t0);
  EXPECT_EQ(a.start, t0);
  EXPECT_EQ(a.done, t0 + 2s);
  auto b = n.SchedulePull("img-b", 1s, true, t0 + 1s);
  EXPECT_EQ(b.start, t0 + 2s) << "queued behind img-a";
  EXPECT_EQ(b.done, t0 + 3s);
  auto a2 = n.SchedulePull("img-a", 2s, true, t0 + 1s);
  EXPECT_EQ(a2.done, t0 + 2s) << "joins the pull in flight";
  EXPECT_FALSE(n.ImagePresent("img-b", t0 + 2s));
  EXPECT_TRUE(n.ImagePresent("img-b", t0 + 3s));
  auto missing = n.SchedulePull("img-missing", 1s, false, t0 + 3s);
  EXPECT_EQ(missing.done, t0 + 4s);
  EXPECT_FALSE(n.ImagePresent("img-missing", t0 + 10s));
}

TEST(NodeObjectTest, NodeLooksLikeAKubeletRegistration) {
  NodeConfig c;
  c.name = "converge-node-0";
  c.internal_ip = "127.0.0.1";
  c.kubelet_port = 12345;
  c.pod_cidr = "10.244.0.0/24";
  api::Object node = BuildNode(c, WallTime{});
  const auto& doc = node.doc();
  EXPECT_EQ(api::FindString(doc, {"metadata", "labels", "kubernetes.io/hostname"}),
            "converge-node-0");
  EXPECT_EQ(api::FindString(doc, {"status", "capacity", "pods"}), "110");
  EXPECT_EQ(api::FindString(doc, {"status", "capacity", "memory"}), "67108864Ki");
  EXPECT_EQ(api::FindString(doc, {"status", "allocatable", "memory"}), "67006464Ki");
  EXPECT_EQ(api::FindString(doc, {"status", "nodeInfo", "kubeletVersion"}), "v1.32.0");
  EXPECT_EQ(api::FindString(doc, {"status", "nodeInfo", "containerRuntimeVersion"}),
            "converge-sim://1.0");
  EXPECT_EQ(api::FindInt(doc, {"status", "daemonEndpoints", "kubeletEndpoint", "Port"}), 12345);
  const auto* conds = api::FindArray(doc, {"status", "conditions"});
  ASSERT_TRUE(conds);
  std::vector<std::string> types;
  for (const auto& v : *conds) types.emplace_back(api::Object::GetString(v.as_object(), "type"));
  EXPECT_EQ(types, (std::vector<std::string>{"NetworkUnavailable", "MemoryPressure", "DiskPressure",
                                             "PIDPressure", "Ready"}));
  EXPECT_EQ(api::Object::GetString(conds->back().as_object(), "reason"), "KubeletReady");

  api::Object lease = BuildLease("converge-node-0", "uid-9", "42", 40, WallTime{});
  EXPECT_EQ(api::FindString(lease.doc(), {"spec", "holderIdentity"}), "converge-node-0");
  EXPECT_EQ(api::FindInt(lease.doc(), {"spec", "leaseDurationSeconds"}), 40);
  EXPECT_EQ(lease.resource_version(), "42");
  EXPECT_EQ(api::FindString(lease.doc(), {"spec", "renewTime"}), "1970-01-01T00:00:00.000000Z");
}

}  // namespace
}  // namespace converge::kubelet
