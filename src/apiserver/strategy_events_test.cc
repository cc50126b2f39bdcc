#include <gtest/gtest.h>

#include "apiserver/strategy.h"
#include "apiserver/strategy_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using testing::Create;
using testing::Info;
using testing::Obj;
using testing::Update;
using Lines = std::vector<std::string>;

api::Object GoodEvent() {
  return Obj(R"({"apiVersion":"events.k8s.io/v1","kind":"Event",
    "metadata":{"name":"web.17a","namespace":"default"},
    "eventTime":"2026-01-01T00:00:00.000000Z","type":"Normal","reason":"Scheduled",
    "action":"Binding","reportingController":"default-scheduler","reportingInstance":"sched-1",
    "regarding":{"kind":"Pod","namespace":"default","name":"web"},"note":"assigned"})");
}

TEST(EventsStrategyTest, StrictCreate) {
  auto s = MakeStrategy(Info("events.k8s.io", "v1", "events", "Event"));
  struct Case {
    const char* name;
    const char* patch;  // merged into the event
    Lines want;
  };
  const Case cases[] = {
      {"valid", "{}", {}},
      {"type", R"({"type":"Info"})", {R"(type: Invalid value: "": has invalid value: Info)"}},
      {"eventTime required", R"({"eventTime":null})", {"eventTime: Required value"}},
      {"deprecated fields must be unset",
       R"({"deprecatedCount":3,"deprecatedSource":{"component":"x"}})",
       {R"(count: Invalid value: "": needs to be unset)",
        R"(source: Invalid value: "": needs to be unset)"}},
      {"series needs two and a time",
       R"({"series":{"count":1}})",
       {R"(series.count: Invalid value: "": should be at least 2)",
        "series.lastObservedTime: Required value"}},
      {"reporting fields",
       R"({"reportingController":"","action":""})",
       {"reportingController: Required value",
        R"(reportingController: Invalid value: "": name part must be non-empty)",
        "action: Required value"}},
      {"note length", nullptr, {R"(message: Invalid value: "": can have at most 1024 characters)"}},
  };
  for (const Case& c : cases) {
    api::Object ev = GoodEvent();
    if (c.patch) {
      json::value patch = json::parse(c.patch);
      for (auto& [k, v] : patch.as_object()) {
        if (v.is_null()) {
          ev.mutable_doc().erase(k);
        } else {
          ev.mutable_doc()[k] = v;
        }
      }
    } else {
      ev.mutable_doc()["note"] = std::string(1025, 'x');
    }
    EXPECT_EQ(Create(*s, ev), c.want) << c.name;
  }
  api::Object bad_name = GoodEvent();
  bad_name.set_name("Web_1");
  EXPECT_EQ(Create(*s, bad_name).size(), 1u);
}

TEST(EventsStrategyTest, UpdateKeepsIdentityFields) {
  auto s = MakeStrategy(Info("events.k8s.io", "v1", "events", "Event"));
  api::Object old = GoodEvent();
  api::Object upd = GoodEvent();
  upd.mutable_doc()["series"] =
      json::parse(R"({"count":2,"lastObservedTime":"2026-01-01T00:01:00.000000Z"})");
  EXPECT_EQ(Update(*s, upd, old), Lines{});
  upd.mutable_doc()["reason"] = "Other";
  upd.mutable_doc()["note"] = "changed";
  EXPECT_EQ(Update(*s, upd, old),
            (Lines{R"(reason: Invalid value: "Other": field is immutable)",
                   R"(message: Invalid value: "changed": field is immutable)"}));
}

}  // namespace
}  // namespace converge::apiserver
