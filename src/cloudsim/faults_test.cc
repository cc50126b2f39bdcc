#include "cloudsim/faults.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace converge::cloudsim {
namespace {

TEST(FaultInjectorTest, NoFaultsByDefault) {
  FaultInjector f({});
  for (int i = 0; i < 100; ++i) {
    CallFaults c = f.Next();
    EXPECT_EQ(c.fail_status, 0);
    EXPECT_EQ(c.hang_after.count(), 0);
    EXPECT_EQ(c.latency.count(), 0);
  }
}

TEST(FaultInjectorTest, BurstFailsExactlyTheNextNCalls) {
  FaultInjector f({});
  ASSERT_TRUE(f.Patch(boost::json::parse(R"({"errorBurst":3})").as_object()).ok());
  std::vector<int> statuses;
  for (int i = 0; i < 5; ++i) statuses.push_back(f.Next().fail_status);
  EXPECT_EQ(statuses, (std::vector<int>{500, 502, 503, 0, 0}));
  EXPECT_EQ(f.counters().injected_errors, 3);
}

TEST(FaultInjectorTest, OutageRejectsEverythingUntilSwitchedOff) {
  FaultInjector f({.config = {.outage = true}});
  EXPECT_EQ(f.Next().fail_status, 503);
  ASSERT_TRUE(f.Patch(boost::json::parse(R"({"outage":false})").as_object()).ok());
  EXPECT_EQ(f.Next().fail_status, 0);
  EXPECT_EQ(f.counters().outage_rejections, 1);
}

TEST(FaultInjectorTest, TimedOutageEndsByItself) {
  util::FakeClock clock;
  FaultInjector f({.clock = &clock});
  ASSERT_TRUE(f.Patch(boost::json::parse(R"({"outageSeconds":30})").as_object()).ok());
  EXPECT_EQ(f.Next().fail_status, 503);
  EXPECT_EQ(f.ToJson().at("outageRemainingMs").as_int64(), 30000);
  clock.Step(std::chrono::seconds(29));
  EXPECT_EQ(f.Next().fail_status, 503);
  clock.Step(std::chrono::seconds(1));
  EXPECT_EQ(f.Next().fail_status, 0);
  EXPECT_EQ(f.ToJson().at("outageRemainingMs").as_int64(), 0);
}

TEST(FaultInjectorTest, TimeoutAfterActionHangsForTheConfiguredTime) {
  FaultInjector f(
      {.config = {.timeout_after_action_probability = 1, .hang = std::chrono::milliseconds(1234)}});
  CallFaults c = f.Next();
  EXPECT_EQ(c.fail_status, 0);
  EXPECT_EQ(c.hang_after, std::chrono::milliseconds(1234));
  EXPECT_EQ(f.counters().injected_timeouts, 1);
}

TEST(FaultInjectorTest, TimeoutNextCreatesHitsExactlyTheNextCreates) {
  FaultInjector f({.config = {.hang = std::chrono::milliseconds(50)}});
  ASSERT_TRUE(f.Patch(boost::json::parse(R"({"timeoutNextCreates":2})").as_object()).ok());
  EXPECT_EQ(f.Next(/*is_create=*/false).hang_after.count(), 0);  // a list is not a create
  EXPECT_EQ(f.Next(true).hang_after.count(), 50);
  EXPECT_EQ(f.Next(true).hang_after.count(), 50);
  EXPECT_EQ(f.Next(true).hang_after.count(), 0);
  EXPECT_EQ(f.counters().injected_timeouts, 2);
  EXPECT_EQ(f.ToJson().at("timeoutNextCreates").as_int64(), 0);
}

TEST(FaultInjectorTest, ProbabilitiesAreRoughlyHonouredAndSeeded) {
  auto run = [](uint64_t seed) {
    FaultInjector f({.config = {.timeout_after_action_probability = 0.1}, .seed = seed});
    std::vector<bool> hangs;
    for (int i = 0; i < 2000; ++i) hangs.push_back(f.Next().hang_after.count() > 0);
    return hangs;
  };
  std::vector<bool> a = run(7);
  EXPECT_EQ(a, run(7));  // same seed, same faults
  int64_t n = std::count(a.begin(), a.end(), true);
  EXPECT_GT(n, 100);  // 10% of 2000 = 200; far outside these bounds means a broken draw
  EXPECT_LT(n, 300);
}

TEST(FaultInjectorTest, PatchRejectsBadInputWithoutApplyingAnything) {
  FaultInjector f({});
  const char* bad[] = {
      R"({"latencyMs":-1})",
      R"({"errorProbability":2})",
      R"({"outage":"yes"})",
      R"({"latencyMs":5,"nonsense":1})",
  };
  for (const char* b : bad) {
    EXPECT_FALSE(f.Patch(boost::json::parse(b).as_object()).ok()) << b;
  }
  EXPECT_EQ(f.config().latency.count(), 0);
  ASSERT_TRUE(f.Patch(boost::json::parse(R"({"latencyMs":5,"hangMs":7})").as_object()).ok());
  EXPECT_EQ(f.config().latency.count(), 5);
  EXPECT_EQ(f.config().hang.count(), 7);
}

}  // namespace
}  // namespace converge::cloudsim
