#include "kubelet/pod_status.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "api/schema_registry.h"
#include "api/strategic_merge_patch.h"

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
      {"ProbeTimeAndEmptyMembers", R"({"phase":"Running","podIP":"10.244.0.2","reason":"",
        "conditions":[{"type":"Ready","status":"True","lastProbeTime":"2025-02-02T00:00:00Z","lastTransitionTime":"2025-01-01T00:00:00Z"},
                      {"type":"PodScheduled","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z","message":""}],
        "containerStatuses":[{"name":"web","ready":true,"restartCount":0,"state":{"waiting":{}}}]})",
       true},
      {"ConditionTransitionTime", R"({"phase":"Running","podIP":"10.244.0.2",
        "conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2025-01-01T00:00:01Z"},
                      {"type":"PodScheduled","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"}],
        "containerStatuses":[{"name":"web","ready":true,"restartCount":0}]})",
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
  for (const json::value& c : st.at("conditions").as_array()) {
    EXPECT_TRUE(c.as_object().at("reason").is_null()) << json::serialize(c);
    EXPECT_TRUE(c.as_object().at("message").is_null()) << json::serialize(c);
  }
}

// Ready goes False (ContainersNotReady, with a message) → True: the second patch, applied as the
// API server applies it, leaves no reason or message behind on the condition.
TEST(PodStatusTest, StatusPatchClearsAConditionsOldReason) {
  json::object pod = Parse(R"({"metadata":{"uid":"uid-1"},"status":{}})");
  auto apply = [&](std::string_view status_text) {
    json::object patch = Parse(BuildStatusPatch("uid-1", Parse(status_text)));
    auto merged = api::ApplyStrategicMergePatch(
        json::value(pod), patch, api::BuiltinSchemas().FindType("io.k8s.api.core.v1.Pod"));
    ASSERT_TRUE(merged.ok()) << merged.status().ToString();
    pod = merged->as_object();
  };
  apply(R"({"phase":"Pending","conditions":[{"type":"Ready","status":"False",
      "reason":"ContainersNotReady","message":"containers with unready status: [c]"}]})");
  EXPECT_EQ(pod.at("status").at("conditions").at(0).at("reason").as_string(), "ContainersNotReady");
  apply(R"({"phase":"Running","conditions":[{"type":"Ready","status":"True"}]})");
  const json::object& ready = pod.at("status").at("conditions").at(0).as_object();
  EXPECT_EQ(ready.at("status").as_string(), "True");
  EXPECT_FALSE(ready.contains("reason")) << json::serialize(ready);
  EXPECT_FALSE(ready.contains("message")) << json::serialize(ready);
}

TEST(PodStatusTest, CanonicalHashSortsKeysAndDropsEmptiesButKeepsStructure) {
  auto hash = [](std::string_view text) { return CanonicalHash(json::parse(text)); };
  // Equal canonical forms: {"b":1,"d":[{"z":2}]}.
  EXPECT_EQ(hash(R"({"b":1,"a":{"y":"","x":[]},"c":null,"d":[{"z":2,"y":{}}]})"),
            hash(R"({"d":[{"z":2}],"b":1})"));
  EXPECT_EQ(hash(R"({"n":7})"), CanonicalHash(json::object{{"n", uint64_t{7}}}));
  EXPECT_EQ(hash(R"({"":"x","a":1})"), hash(R"({"a":1,"":"x"})"));
  // Different ones.
  const std::vector<std::string_view> distinct = {
      R"({"b":1})",   R"({"b":2})",        R"({"b":"1"})",  R"({"b":1.0})",     R"({"b":true})",
      R"({"b":[1]})", R"({"b":[null]})",   R"({"b":[{}]})", R"({"a":"bc"})",    R"({"ab":"c"})",
      R"(["a","b"])", R"(["ab"])",         R"([[1],2])",    R"([1,[2]])",       R"([1,2])",
      R"([2,1])",     R"({"":"x","a":1})", R"({"a":1})",    R"({"b":{"c":1}})", R"({"b":{"c":2}})",
  };
  for (size_t i = 0; i < distinct.size(); ++i) {
    for (size_t j = i + 1; j < distinct.size(); ++j) {
      EXPECT_NE(hash(distinct[i]), hash(distinct[j])) << distinct[i] << " vs " << distinct[j];
    }
  }
}

TEST(PodStatusTest, PodScheduledTime) {
  EXPECT_EQ(PodScheduledTime(
                Parse(R"({"conditions":[{"type":"PodScheduled","lastTransitionTime":"T"}]})")),
            "T");
  EXPECT_EQ(PodScheduledTime(Parse("{}")), "");
}

TEST(ScheduledTimeTest, GivesBackTheTextItWasMadeFrom) {
  EXPECT_TRUE(ScheduledTime().empty());
  EXPECT_EQ(ScheduledTime().text(), "");
  EXPECT_TRUE(ScheduledTime("").empty());
  for (std::string_view text : {"2025-01-01T00:00:10Z", "1970-01-01T00:00:00Z",
                                "2025-01-01T00:00:10+00:00", "2025-01-01T00:00:10.5Z", "soon"}) {
    ScheduledTime t(text);
    EXPECT_FALSE(t.empty()) << text;
    EXPECT_EQ(t.text(), text);
  }
}

}  // namespace
}  // namespace converge::kubelet
