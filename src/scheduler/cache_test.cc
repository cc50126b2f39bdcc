#include "scheduler/cache.h"

#include <gtest/gtest.h>

#include "scheduler/scheduler_test_util.h"

namespace converge::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

TEST(CacheTest, AssumeCountsAtOnceAndForgetUndoes) {
  Cache cache;
  cache.AddOrUpdateNode(NodeBuilder("n1", "4", "8Gi").Facts());
  PodInfoPtr p = PodBuilder("p").Req("1", "1Gi").Info();
  ASSERT_TRUE(cache.AssumePod(p, "n1").ok());
  EXPECT_TRUE(cache.IsAssumed(p->key));
  EXPECT_EQ(cache.GetNodeInfo("n1")->requested.milli_cpu, 1000);
  EXPECT_EQ(cache.GetNodeInfo("n1")->pods.size(), 1u);
  EXPECT_FALSE(cache.AssumePod(p, "n1").ok()) << "assuming twice";
  cache.ForgetPod(p->key);
  EXPECT_FALSE(cache.IsAssumed(p->key));
  EXPECT_EQ(cache.GetNodeInfo("n1")->requested.milli_cpu, 0);
  EXPECT_EQ(cache.NumPods(), 0u);
}

TEST(CacheTest, TheInformerConfirmsAnAssumedPodWhereverTheApiPutIt) {
  Cache cache;
  cache.AddOrUpdateNode(NodeBuilder("n1", "4", "8Gi").Facts());
  cache.AddOrUpdateNode(NodeBuilder("n2", "4", "8Gi").Facts());
  PodInfoPtr p = PodBuilder("p").Req("1").Info();
  ASSERT_TRUE(cache.AssumePod(p, "n1").ok());
  cache.AddPod(PodBuilder("p").Req("1").Node("n1").Info());
  EXPECT_FALSE(cache.IsAssumed(p->key));
  EXPECT_EQ(cache.GetNodeInfo("n1")->requested.milli_cpu, 1000);
  cache.ForgetPod(p->key);  // no-op once confirmed
  EXPECT_EQ(cache.GetNodeInfo("n1")->requested.milli_cpu, 1000);

  PodInfoPtr q = PodBuilder("q").Req("2").Info();
  ASSERT_TRUE(cache.AssumePod(q, "n1").ok());
  cache.AddPod(PodBuilder("q").Req("2").Node("n2").Info());  // someone else bound it to n2
  EXPECT_EQ(cache.GetNodeInfo("n1")->requested.milli_cpu, 1000);
  EXPECT_EQ(cache.GetNodeInfo("n2")->requested.milli_cpu, 2000);
}

TEST(CacheTest, RemovingAnAssumedPodFreesItsResources) {
  Cache cache;
  cache.AddOrUpdateNode(NodeBuilder("n1", "4", "8Gi").Facts());
  PodInfoPtr p = PodBuilder("p").Req("1").Info();
  ASSERT_TRUE(cache.AssumePod(p, "n1").ok());
  EXPECT_TRUE(cache.RemovePod(p->key));
  EXPECT_FALSE(cache.RemovePod(p->key));
  EXPECT_EQ(cache.GetNodeInfo("n1")->requested.milli_cpu, 0);
}

TEST(CacheTest, PodsOnAnUnknownNodeCountOnceItArrives) {
  Cache cache;
  cache.AddPod(PodBuilder("early").Node("n1").Req("3").Info());
  Snapshot s;
  cache.UpdateSnapshot(&s);
  EXPECT_EQ(s.NumNodes(), 0u) << "a placeholder is not a schedulable node";
  cache.AddOrUpdateNode(NodeBuilder("n1", "4", "8Gi").Facts());
  cache.UpdateSnapshot(&s);
  ASSERT_EQ(s.NumNodes(), 1u);
  EXPECT_EQ(s.nodes()[0]->requested.milli_cpu, 3000);
  // A node removed while pods remain keeps counting them if it comes back.
  cache.RemoveNode("n1");
  cache.UpdateSnapshot(&s);
  EXPECT_EQ(s.NumNodes(), 0u);
  cache.AddOrUpdateNode(NodeBuilder("n1", "4", "8Gi").Facts());
  cache.UpdateSnapshot(&s);
  ASSERT_EQ(s.NumNodes(), 1u);
  EXPECT_EQ(s.nodes()[0]->requested.milli_cpu, 3000);
}

TEST(CacheTest, SnapshotsAreIncrementalAndOrdered) {
  Cache cache;
  for (const char* n : {"a", "b", "c"}) cache.AddOrUpdateNode(NodeBuilder(n, "4", "8Gi").Facts());
  Snapshot s;
  cache.UpdateSnapshot(&s);
  ASSERT_EQ(s.NumNodes(), 3u);
  EXPECT_EQ(s.nodes()[0]->name(), "a");
  EXPECT_EQ(s.nodes()[2]->name(), "c");
  const NodeInfo* b_before = s.Get("b");
  const NodeInfo* a_before = s.Get("a");
  cache.AddPod(PodBuilder("p").Node("b").Req("1").Info());
  cache.UpdateSnapshot(&s);
  // Same NodeInfo objects, updated in place; only b changed.
  EXPECT_EQ(s.Get("b"), b_before);
  EXPECT_EQ(s.Get("b")->requested.milli_cpu, 1000);
  EXPECT_EQ(s.Get("a"), a_before);
  cache.RemoveNode("a");
  cache.UpdateSnapshot(&s);
  ASSERT_EQ(s.NumNodes(), 2u);
  EXPECT_EQ(s.Get("a"), nullptr);
  EXPECT_EQ(s.nodes()[0]->name(), "b");
  // A second snapshot built from scratch sees the same state.
  Snapshot fresh;
  cache.UpdateSnapshot(&fresh);
  ASSERT_EQ(fresh.NumNodes(), 2u);
  EXPECT_EQ(fresh.Get("b")->requested.milli_cpu, 1000);
}

TEST(CacheTest, UpdatePodMovesRequests) {
  Cache cache;
  cache.AddOrUpdateNode(NodeBuilder("n1", "4", "8Gi").Facts());
  cache.AddPod(PodBuilder("p").Node("n1").Req("2").Info());
  cache.UpdatePod(PodBuilder("p").Node("n1").Req("1").Info());
  EXPECT_EQ(cache.GetNodeInfo("n1")->requested.milli_cpu, 1000);
  EXPECT_EQ(cache.GetNodeInfo("n1")->pods.size(), 1u);
}

}  // namespace
}  // namespace converge::scheduler
