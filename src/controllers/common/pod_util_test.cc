#include "controllers/common/pod_util.h"

#include <gtest/gtest.h>

#include "controllers/common/active_pods.h"
#include "controllers/common/test_objects.h"

namespace converge::controllers {
namespace {

using testing::At;
using testing::MakePod;
using testing::PodSpec;

TEST(PodUtilTest, ReadyAndAvailable) {
  api::ObjectPtr not_ready = MakePod({.name = "a"});
  api::ObjectPtr ready = MakePod({.name = "b", .ready_since = 10});
  EXPECT_FALSE(IsPodReady(*not_ready));
  EXPECT_TRUE(IsPodReady(*ready));
  EXPECT_EQ(PodReadyTime(*ready), At(10));
  EXPECT_FALSE(PodReadyTime(*not_ready).has_value());

  // minReadySeconds 0: available as soon as ready.
  EXPECT_TRUE(IsPodAvailable(*ready, 0, At(10)));
  EXPECT_FALSE(IsPodAvailable(*not_ready, 0, At(100)));
  // minReadySeconds 5: ready at 10, available strictly after 15 (upstream: since+min < now).
  EXPECT_FALSE(IsPodAvailable(*ready, 5, At(15)));
  EXPECT_TRUE(IsPodAvailable(*ready, 5, At(16)));
  EXPECT_EQ(PodAvailableAt(*ready, 5), At(15));
}

TEST(PodUtilTest, Active) {
  EXPECT_TRUE(IsPodActive(*MakePod({.name = "a", .phase = "Pending"})));
  EXPECT_TRUE(IsPodActive(*MakePod({.name = "a", .phase = ""})));
  EXPECT_FALSE(IsPodActive(*MakePod({.name = "a", .phase = "Succeeded"})));
  EXPECT_FALSE(IsPodActive(*MakePod({.name = "a", .phase = "Failed"})));
  EXPECT_FALSE(IsPodActive(*MakePod({.name = "a", .deleting = true})));
  std::vector<api::ObjectPtr> pods = {MakePod({.name = "a"}),
                                      MakePod({.name = "b", .phase = "Failed"}),
                                      MakePod({.name = "c", .deleting = true})};
  auto active = FilterActivePods(pods);
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0]->name(), "a");
}

// Each case: two pods and which one a scale-down removes first. Worked out from upstream's
// ActivePodsWithRanks.Less.
TEST(ActivePodsTest, DeletesFirst) {
  const util::Clock::WallTime now = At(100000);
  struct Case {
    std::string name;
    PodSpec first;  // expected to go first
    PodSpec second;
    int first_rank = 0;
    int second_rank = 0;
  };
  std::vector<Case> cases = {
      {"unassigned before assigned", {.name = "a", .node = ""}, {.name = "b", .node = "n1"}},
      {"pending before running",
       {.name = "a", .phase = "Pending", .node = "n"},
       {.name = "b", .phase = "Running", .node = "n"}},
      {"unknown before running",
       {.name = "a", .phase = "Unknown", .node = "n"},
       {.name = "b", .phase = "Running", .node = "n"}},
      {"unset phase counts as pending",
       {.name = "a", .phase = "", .node = "n"},
       {.name = "b", .phase = "Unknown", .node = "n"}},
      {"not ready before ready",
       {.name = "a", .node = "n"},
       {.name = "b", .ready_since = 5, .node = "n"}},
      {"lower deletion cost first",
       {.name = "a",
        .ready_since = 5,
        .node = "n",
        .annotations = {{std::string(kPodDeletionCostAnnotation), "-5"}}},
       {.name = "b", .ready_since = 5, .node = "n"}},
      {"doubled up first",
       {.name = "a", .ready_since = 5, .node = "n"},
       {.name = "b", .ready_since = 5, .node = "m"},
       3,
       1},
      // Ready 100 s ago (log2 bucket 36) vs 90000 s ago (bucket 46): the recent one goes.
      {"ready recently before ready long ago",
       {.name = "a", .ready_since = 99900, .node = "n"},
       {.name = "b", .ready_since = 10000, .node = "n"}},
      {"more restarts first",
       {.name = "a", .ready_since = 5, .node = "n", .restarts = 3},
       {.name = "b", .ready_since = 5, .node = "n", .restarts = 1}},
      {"newer before older",
       {.name = "a", .ready_since = 5, .node = "n", .created = 99000},
       {.name = "b", .ready_since = 5, .node = "n", .created = 1}},
  };
  for (const Case& c : cases) {
    api::ObjectPtr a = MakePod(c.first);
    api::ObjectPtr b = MakePod(c.second);
    EXPECT_TRUE(PodDeletesFirst({a.get(), c.first_rank}, {b.get(), c.second_rank}, now)) << c.name;
    EXPECT_FALSE(PodDeletesFirst({b.get(), c.second_rank}, {a.get(), c.first_rank}, now)) << c.name;
  }
}

TEST(ActivePodsTest, SameLogBucketOrdersByUid) {
  const util::Clock::WallTime now = At(100000);
  // Ready 99000 s and 98000 s ago: both in bucket floor(log2(~9.9e13 ns)) = 46.
  api::ObjectPtr a = MakePod({.name = "a", .ready_since = 1000, .node = "n", .uid = "u1"});
  api::ObjectPtr b = MakePod({.name = "b", .ready_since = 2000, .node = "n", .uid = "u2"});
  EXPECT_TRUE(PodDeletesFirst({a.get(), 0}, {b.get(), 0}, now));
  EXPECT_FALSE(PodDeletesFirst({b.get(), 0}, {a.get(), 0}, now));
}

TEST(ActivePodsTest, PodsToDeletePicksTheCheapest) {
  std::vector<api::ObjectPtr> pods = {
      MakePod({.name = "ready-old", .ready_since = 1, .node = "n1"}),
      MakePod({.name = "pending", .phase = "Pending", .node = "n1"}),
      MakePod({.name = "unready", .node = "n2"}),
      MakePod({.name = "unscheduled", .phase = "Pending"}),
  };
  auto chosen = PodsToDelete(pods, pods, 3, At(100000));
  ASSERT_EQ(chosen.size(), 3u);
  EXPECT_EQ(chosen[0]->name(), "unscheduled");
  EXPECT_EQ(chosen[1]->name(), "pending");
  EXPECT_EQ(chosen[2]->name(), "unready");
  // Deleting all: no ranking needed, every pod returned.
  EXPECT_EQ(PodsToDelete(pods, pods, 9, At(0)).size(), 4u);
}

}  // namespace
}  // namespace converge::controllers
