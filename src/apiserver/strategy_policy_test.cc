#include <gtest/gtest.h>

#include "apiserver/strategy.h"
#include "apiserver/strategy_test_util.h"

namespace converge::apiserver {
namespace {

using testing::Create;
using testing::Info;
using testing::Obj;
using Lines = std::vector<std::string>;

TEST(PodDisruptionBudgetStrategyTest, Validation) {
  auto s = MakeStrategy(
      Info("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, {"status"}));
  EXPECT_TRUE(s->TracksGeneration());
  struct Case {
    const char* name;
    const char* spec;
    Lines want;
  };
  const Case cases[] = {
      {"min available", R"({"minAvailable":2,"selector":{"matchLabels":{"app":"web"}}})", {}},
      {"percent", R"({"maxUnavailable":"50%"})", {}},
      {"both set",
       R"({"minAvailable":1,"maxUnavailable":1})",
       {R"(spec: Invalid value: {"minAvailable":1,"maxUnavailable":1}: minAvailable and maxUnavailable cannot be both set)"}},
      {"over 100%",
       R"({"minAvailable":"120%"})",
       {R"(spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%)"}},
      {"negative",
       R"({"maxUnavailable":-1})",
       {"spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"}},
      {"eviction policy",
       R"({"minAvailable":1,"unhealthyPodEvictionPolicy":"Never"})",
       {R"(spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget")"}},
  };
  for (const Case& c : cases) {
    api::Object pdb = Obj(R"({"metadata":{"name":"web","namespace":"d"}})");
    pdb.mutable_doc()["spec"] = boost::json::parse(c.spec);
    EXPECT_EQ(Create(*s, pdb), c.want) << c.name;
  }
}

}  // namespace
}  // namespace converge::apiserver
