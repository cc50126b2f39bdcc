#include "scheduler/pod_status.h"

#include <gtest/gtest.h>

#include "scheduler/scheduler_test_util.h"
#include "util/time_format.h"

namespace converge::scheduler {
namespace {

namespace json = boost::json;

api::Object PodWithCondition(json::object cond) {
  json::object doc = testing::PodBuilder("p").Object()->doc();
  doc["status"] = json::object{{"conditions", json::array{std::move(cond)}}};
  return api::Object(doc);
}

TEST(PodStatusTest, PatchSetsTheConditionAndKeepsTransitionTimeWhileFalse) {
  util::FakeClock clock;
  api::Object fresh = *testing::PodBuilder("p").Object();
  std::optional<std::string> patch =
      PodScheduledFalsePatch(fresh, kReasonUnschedulable, "m1", std::nullopt, clock.WallNow());
  ASSERT_TRUE(patch.has_value());
  json::object p = json::parse(*patch).as_object();
  json::object cond = p.at("status").at("conditions").as_array()[0].as_object();
  EXPECT_EQ(cond.at("lastTransitionTime"), util::FormatRfc3339(clock.WallNow()).c_str());
  EXPECT_TRUE(cond.at("lastProbeTime").is_null());
  EXPECT_FALSE(p.at("status").as_object().contains("nominatedNodeName"));

  json::object existing{
      {"type", "PodScheduled"},    {"status", "False"},
      {"reason", "Unschedulable"}, {"message", "m1"},
      {"lastProbeTime", nullptr},  {"lastTransitionTime", "2020-01-01T00:00:00Z"}};
  api::Object pod = PodWithCondition(existing);
  EXPECT_FALSE(
      PodScheduledFalsePatch(pod, kReasonUnschedulable, "m1", std::nullopt, clock.WallNow()))
      << "unchanged: no write";
  patch = PodScheduledFalsePatch(pod, kReasonUnschedulable, "m2", std::nullopt, clock.WallNow());
  ASSERT_TRUE(patch.has_value());
  cond = json::parse(*patch).at("status").at("conditions").as_array()[0].as_object();
  EXPECT_EQ(cond.at("lastTransitionTime"), "2020-01-01T00:00:00Z");
  EXPECT_EQ(cond.at("message"), "m2");
  // A nominated node is a change too.
  EXPECT_TRUE(
      PodScheduledFalsePatch(pod, kReasonUnschedulable, "m1", std::string("n1"), clock.WallNow()));
}

TEST(PodStatusTest, TruncateMessage) {
  EXPECT_EQ(TruncateMessage("short"), "short");
  std::string long_message(2000, 'x');
  std::string t = TruncateMessage(long_message);
  EXPECT_EQ(t.size(), 1024u);
  EXPECT_EQ(t.substr(1021), "...");
}

}  // namespace
}  // namespace converge::scheduler
