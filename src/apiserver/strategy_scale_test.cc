#include "apiserver/strategy_scale.h"

#include <gtest/gtest.h>

#include "apiserver/strategy_test_util.h"

namespace converge::apiserver {
namespace {

using testing::Json;
using testing::Obj;

api::Object DeploymentObject() {
  return Obj(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","namespace":"default","uid":"u1","resourceVersion":"1009",
      "creationTimestamp":"2026-01-01T00:00:00Z","generation":3,"labels":{"app":"web"}},
    "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web","tier":"fe"}}},
    "status":{"replicas":1}})");
}

TEST(ScaleTest, ScaleOfMatchesKubectlCapture) {
  EXPECT_EQ(ScaleOf(DeploymentObject()).Serialize(),
            R"({"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web",)"
            R"("namespace":"default","uid":"u1","resourceVersion":"1009",)"
            R"("creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"replicas":3},)"
            R"("status":{"replicas":1,"selector":"app=web,tier=fe"}})");
  api::Object zero = DeploymentObject();
  zero.mutable_doc()["spec"].get_object()["replicas"] = 0;
  zero.mutable_doc().erase("status");
  EXPECT_EQ(Json(ScaleOf(zero), {"spec"}), "{}");
  EXPECT_EQ(Json(ScaleOf(zero), {"status"}), R"({"replicas":0,"selector":"app=web,tier=fe"})");
}

TEST(ScaleTest, ApplyScale) {
  struct Case {
    const char* name;
    const char* scale;
    std::string error;  // empty: applies
    const char* replicas;
    const char* resource_version;
  };
  const Case cases[] = {
      {"merge-patched",
       R"({"metadata":{"name":"web","namespace":"default"},"spec":{"replicas":5}})", "", "5",
       "1009"},
      {"put with precondition",
       R"({"metadata":{"name":"web","namespace":"default","resourceVersion":"1000"},"spec":{"replicas":2}})",
       "", "2", "1000"},
      {"scale to zero", R"({"metadata":{"name":"web","namespace":"default"},"spec":{}})", "", "0",
       "1009"},
      {"negative", R"({"metadata":{"name":"web","namespace":"default"},"spec":{"replicas":-1}})",
       R"(Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0)",
       "3", "1009"},
  };
  for (const Case& c : cases) {
    api::Object d = DeploymentObject();
    std::optional<ApiError> err = ApplyScale(d, Obj(c.scale));
    if (c.error.empty()) {
      EXPECT_FALSE(err.has_value()) << c.name;
    } else {
      ASSERT_TRUE(err.has_value()) << c.name;
      EXPECT_EQ(err->code, 422) << c.name;
      EXPECT_EQ(err->message, c.error) << c.name;
      EXPECT_EQ(err->kind, "Scale") << c.name;
    }
    EXPECT_EQ(Json(d, {"spec", "replicas"}), c.replicas) << c.name;
    EXPECT_EQ(d.resource_version(), c.resource_version) << c.name;
  }
}

}  // namespace
}  // namespace converge::apiserver
