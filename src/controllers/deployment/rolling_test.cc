// Rolling-update arithmetic, worked out by hand (the numbers are in rolling.h's comment).
#include "controllers/deployment/rolling.h"

#include <gtest/gtest.h>

namespace converge::controllers::deployment {
namespace {

namespace json = boost::json;

struct ScaledCase {
  const char* name;
  json::value value;
  int64_t total;
  bool round_up;
  std::optional<int64_t> want;  // nullopt: an error
};

TEST(ScaledValueFromIntOrPercentTest, Table) {
  const ScaledCase cases[] = {
      {"absolute", 3, 10, false, 3},
      {"null is zero", nullptr, 10, true, 0},
      {"25% of 10 up", "25%", 10, true, 3},     // ceil(2.5)
      {"25% of 10 down", "25%", 10, false, 2},  // floor(2.5)
      {"33% of 3 up", "33%", 3, true, 1},       // ceil(0.99)
      {"33% of 3 down", "33%", 3, false, 0},    // floor(0.99)
      {"100% of 7", "100%", 7, false, 7},
      {"0%", "0%", 7, true, 0},
      {"exact percentage", "50%", 8, true, 4},
      {"not a percentage", "abc", 10, true, std::nullopt},
      {"bare percent sign", "%", 10, true, std::nullopt},
      {"fraction", "1.5%", 10, true, std::nullopt},
      {"bool", true, 10, true, std::nullopt},
  };
  for (const ScaledCase& c : cases) {
    auto got = ScaledValueFromIntOrPercent(c.value, c.total, c.round_up);
    if (!c.want) {
      EXPECT_FALSE(got.ok()) << c.name;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status().ToString();
    EXPECT_EQ(*got, *c.want) << c.name;
  }
}

TEST(ResolveFencepostsTest, Table) {
  struct Case {
    const char* name;
    json::value surge;
    json::value unavailable;
    int64_t replicas;
    int64_t want_surge;
    int64_t want_unavailable;
  } cases[] = {
      {"defaults at 10", "25%", "25%", 10, 3, 2},
      {"defaults at 4", "25%", "25%", 4, 1, 1},
      {"defaults at 1", "25%", "25%", 1, 1, 0},
      {"defaults at 3", "25%", "25%", 3, 1, 0},
      // Both resolve to 0: unavailable becomes 1 so that the rollout can move.
      {"both zero", 0, "10%", 3, 0, 1},
      {"absolute", 2, 1, 5, 2, 1},
      {"surge may exceed replicas", 10, 0, 3, 10, 0},
  };
  for (const Case& c : cases) {
    auto f = ResolveFenceposts(c.surge, c.unavailable, c.replicas);
    ASSERT_TRUE(f.ok()) << c.name;
    EXPECT_EQ(f->max_surge, c.want_surge) << c.name;
    EXPECT_EQ(f->max_unavailable, c.want_unavailable) << c.name;
  }
}

// The worked example of rolling.h, step by step: replicas 10, maxSurge 3, maxUnavailable 2;
// A is the old ReplicaSet, B the new one. Each step gives what the ReplicaSets report and what
// the sync decides.
TEST(RollingStepsTest, WorkedExampleOfTheHeader) {
  constexpr int64_t kReplicas = 10, kSurge = 3, kUnavailable = 2;
  struct Step {
    RsCounts a, b;
    int64_t want_b;  // after scaling up (== b.spec when it cannot)
    int64_t want_a;  // after scaling down (only when B did not grow)
  } steps[] = {
      // B just created (sized by NewReplicaSetReplicas from 0), then A shrinks in the same sync.
      {{10, 10, 10}, {3, 0, 0}, 3, 8}, {{8, 8, 8}, {3, 3, 3}, 5, 8},
      {{8, 8, 8}, {5, 5, 3}, 5, 5},    {{5, 5, 5}, {5, 5, 5}, 8, 5},
      {{5, 5, 5}, {8, 8, 5}, 8, 3},    {{3, 3, 3}, {8, 8, 8}, 10, 3},
      {{3, 3, 3}, {10, 10, 8}, 10, 0}, {{0, 0, 0}, {10, 10, 10}, 10, 0},
  };
  // The creation step of the new ReplicaSet.
  EXPECT_EQ(NewReplicaSetReplicas(kReplicas, kSurge, {{10, 10, 10}, {0, 0, 0}}, {0, 0, 0}), 3);
  int n = 0;
  for (const Step& s : steps) {
    ++n;
    std::vector<RsCounts> all{s.a, s.b};
    int64_t b = NewReplicaSetReplicas(kReplicas, kSurge, all, s.b);
    EXPECT_EQ(b, s.want_b) << "step " << n;
    if (b != s.b.spec) continue;  // grew: the sync ends there
    int64_t max_down = MaxScaledDown(kReplicas, kUnavailable, all, s.b);
    std::vector<int64_t> cleaned = CleanupUnhealthy({s.a}, std::max<int64_t>(max_down, 0));
    EXPECT_EQ(cleaned[0], s.a.spec) << "step " << n << ": A has no unhealthy pods";
    int64_t a = s.a.spec;
    if (max_down > 0) a = ScaleDownOld(kReplicas, kUnavailable, all, {s.a})[0];
    EXPECT_EQ(a, s.want_a) << "step " << n;
    // The invariants, against what the ReplicaSets may have at this instant.
    EXPECT_LE(std::max(a, s.a.status_replicas) + std::max(b, s.b.status_replicas),
              kReplicas + kSurge)
        << "step " << n;
    EXPECT_GE(std::min(a, s.a.available) + std::min(b, s.b.available), kReplicas - kUnavailable)
        << "step " << n;
  }
}

TEST(RollingStepsTest, NewReplicaSetCountsPodsStillBeingDeleted) {
  // A was just scaled 10 → 8 but still has 10 pods (status.replicas): upstream would grow B to
  // 5 and briefly run 15 pods; counting max(spec, status.replicas) keeps it at 13.
  std::vector<RsCounts> all{{8, 10, 8}, {3, 3, 3}};
  EXPECT_EQ(NewReplicaSetReplicas(10, 3, all, all[1]), 3);
  all[0].status_replicas = 8;
  EXPECT_EQ(NewReplicaSetReplicas(10, 3, all, all[1]), 5);
  // Never past spec.replicas, and never shrinks.
  EXPECT_EQ(NewReplicaSetReplicas(3, 5, {{0, 0, 0}, {1, 1, 1}}, {1, 1, 1}), 3);
  EXPECT_EQ(NewReplicaSetReplicas(3, 1, {{3, 3, 3}, {2, 2, 2}}, {2, 2, 2}), 2);
}

TEST(RollingStepsTest, UnhealthyOldPodsGoFirstOldestFirst) {
  // Two old ReplicaSets, oldest first: 3 with 1 available, 4 with 2 available; up to 3 may go.
  std::vector<int64_t> got = CleanupUnhealthy({{3, 3, 1}, {4, 4, 2}}, 3);
  EXPECT_EQ(got, (std::vector<int64_t>{1, 3}));
  // Limited to what may go.
  EXPECT_EQ(CleanupUnhealthy({{3, 3, 1}, {4, 4, 2}}, 1), (std::vector<int64_t>{2, 4}));
  // Healthy ones are left alone.
  EXPECT_EQ(CleanupUnhealthy({{3, 3, 3}}, 5), (std::vector<int64_t>{3}));
}

TEST(RollingStepsTest, ScaleDownOldKeepsTheFloor) {
  // replicas 4, maxUnavailable 1: at least 3 available. Old 4/4 available, new 1 (0 available).
  std::vector<RsCounts> all{{4, 4, 4}, {1, 1, 0}};
  EXPECT_EQ(ScaleDownOld(4, 1, all, {all[0]}), (std::vector<int64_t>{3}));
  // Already at the floor: nothing.
  all[0] = {3, 3, 3};
  EXPECT_EQ(ScaleDownOld(4, 1, all, {all[0]}), (std::vector<int64_t>{3}));
  // Pods being deleted are not counted as available: A spec 3 but still reports 4 available.
  all[0] = {3, 4, 4};
  EXPECT_EQ(ScaleDownOld(4, 1, all, {all[0]}), (std::vector<int64_t>{3}));
  // MaxScaledDown subtracts the new ReplicaSet's unavailable pods.
  EXPECT_EQ(MaxScaledDown(4, 1, {{4, 4, 4}, {1, 1, 0}}, {1, 1, 0}), 1);
  EXPECT_EQ(MaxScaledDown(4, 0, {{4, 4, 4}, {1, 1, 0}}, {1, 1, 0}), 0);
}

TEST(ScaleProportionallyTest, Table) {
  using WallTime = util::Clock::WallTime;
  WallTime older{std::chrono::seconds(100)}, newer{std::chrono::seconds(200)};
  struct Case {
    const char* name;
    std::vector<ProportionalRs> active;
    int64_t replicas, max_surge, status_replicas;
    std::vector<int64_t> want;
  } cases[] = {
      // The header's example: 10 → 20 (maxSurge 25% = 5), A 8 and B 5 both from max 13.
      {"grow keeps the ratio", {{"a", 8, 13, older}, {"b", 5, 13, newer}}, 20, 5, 13, {15, 10}},
      // 10 → 5 (maxSurge 25% = 2): allowed 7, remove 6. A round(8·7/13) = 4, B round(5·7/13) = 3.
      {"shrink keeps the ratio", {{"a", 8, 13, older}, {"b", 5, 13, newer}}, 5, 2, 13, {4, 3}},
      // Rounding leftovers go to the first in order: the largest, newest first when growing.
      {"leftover to the newest of equals",
       {{"a", 1, 3, older}, {"b", 1, 3, newer}, {"c", 1, 3, WallTime{std::chrono::seconds(150)}}},
       4,
       0,
       3,
       {1, 2, 1}},
      {"to zero", {{"a", 2, 3, older}, {"b", 1, 3, newer}}, 0, 0, 3, {0, 0}},
      // Without annotations the Deployment's status.replicas is the base.
      {"no annotations",
       {{"a", 2, std::nullopt, older}, {"b", 2, std::nullopt, newer}},
       8,
       0,
       4,
       {4, 4}},
      {"nothing to do", {{"a", 2, 4, older}, {"b", 2, 4, newer}}, 4, 0, 4, {2, 2}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ScaleProportionally(c.active, c.replicas, c.max_surge, c.status_replicas), c.want)
        << c.name;
  }
}

}  // namespace
}  // namespace converge::controllers::deployment
