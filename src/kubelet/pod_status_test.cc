#include "kubelet/pod_status.h"

#include <gtest/gtest.h>

namespace converge::kubelet {
namespace {

namespace json = boost::json;

json::object Parse(std::string_view s) {
  return json::parse(s).as_object();
}

TEST(PodStatusTest, FingerprintIgnoresWhatReadersCannotSee) {
  const json::object base = Parse(R"({"phase":"Running","podIP":"10.244.0.2",
    "conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2025-01-01T00:00:00Z"},
                  {"type":"PodScheduled","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"}],
    "containerStatuses":[{"name":"web","ready":true,"restartCount":0,"lastState":{}}]})");
  struct Case {
    std::string name;
    std::string status;
    bool same;
  };
  const std::vector<Case> cases = {
      {"KeyOrderAndConditionOrder", R"({"podIP":"10.244.0.2","phase":"Running",
        "conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"},
                      {"lastTransitionTime":"2025-01-01T00:00:00Z","status":"True","type":"Ready"}],
        "containerStatuses":[{"restartCount":0,"ready":true,"name":"web"}]})",
       true},
      {"ForeignConditionsAndQosClass",
       R"({"phase":"Running","podIP":"10.244.0.2","qosClass":"BestEffort",
        "conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"},
                      {"type":"PodScheduled","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"},
                      {"type":"DisruptionTarget","status":"True"}],
        "containerStatuses":[{"name":"web","ready":true,"restartCount":0}]})",
       true},
      {"ReadyFlipped", R"({"phase":"Running","podIP":"10.244.0.2",
        "conditions":[{"type":"Ready","status":"False","lastTransitionTime":"2025-01-01T00:00:00Z"},
                      {"type":"PodScheduled","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"}],
        "containerStatuses":[{"name":"web","ready":true,"restartCount":0}]})",
       false},
      {"ContainerChanged", R"({"phase":"Running","podIP":"10.244.0.2",
        "conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"},
                      {"type":"PodScheduled","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"}],
        "containerStatuses":[{"name":"web","ready":true,"restartCount":1}]})",
       false},
      {"Empty", "{}", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(StatusFingerprint(Parse(c.status)) == StatusFingerprint(base), c.same) << c.name;
  }
}

TEST(PodStatusTest, PatchKeepsConditionOrderAndClearsReason) {
  json::object status =
      Parse(R"({"phase":"Running","conditions":[{"type":"Initialized","status":"True"},
      {"type":"Ready","status":"True"}]})");
  json::object patch = Parse(BuildStatusPatch("uid-1", status));
  EXPECT_EQ(json::serialize(patch.at("metadata")), R"({"uid":"uid-1"})");
  const json::object& st = patch.at("status").as_object();
  EXPECT_EQ(json::serialize(st.at("$setElementOrder/conditions")),
            R"([{"type":"Initialized"},{"type":"Ready"}])");
  EXPECT_TRUE(st.at("reason").is_null());
  EXPECT_TRUE(st.at("message").is_null());
}

TEST(PodStatusTest, CanonicalJsonSortsAndDropsEmpties) {
  EXPECT_EQ(
      CanonicalJson(json::parse(R"({"b":1,"a":{"y":"","x":[]},"c":null,"d":[{"z":2,"y":{}}]})")),
      R"({"b":1,"d":[{"z":2}]})");
}

TEST(PodStatusTest, PodScheduledTime) {
  EXPECT_EQ(PodScheduledTime(
                Parse(R"({"conditions":[{"type":"PodScheduled","lastTransitionTime":"T"}]})")),
            "T");
  EXPECT_EQ(PodScheduledTime(Parse("{}")), "");
}

}  // namespace
}  // namespace converge::kubelet
