#include <gtest/gtest.h>

#include <functional>

#include "apiserver/strategy.h"
#include "apiserver/strategy_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using testing::Create;
using testing::Info;
using testing::Json;
using testing::Obj;
using Lines = std::vector<std::string>;

api::Object Config() {
  return Obj(R"({"metadata":{"name":"policy"},"webhooks":[{"name":"check.example.com",
    "clientConfig":{"service":{"name":"hook","namespace":"system"}},
    "rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"]}],
    "sideEffects":"None","admissionReviewVersions":["v1"]}]})");
}

TEST(WebhookStrategyTest, Defaults) {
  auto s = MakeStrategy(Info("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
                             "MutatingWebhookConfiguration", false));
  api::Object cfg = Config();
  EXPECT_EQ(Create(*s, cfg), Lines{});
  const json::value* hook = &api::Find(cfg.doc(), {"webhooks"})->get_array()[0];
  const json::object& h = hook->get_object();
  EXPECT_EQ(json::serialize(h.at("failurePolicy")), R"("Fail")");
  EXPECT_EQ(json::serialize(h.at("matchPolicy")), R"("Equivalent")");
  EXPECT_EQ(json::serialize(h.at("timeoutSeconds")), "10");
  EXPECT_EQ(json::serialize(h.at("reinvocationPolicy")), R"("Never")");
  EXPECT_EQ(json::serialize(h.at("namespaceSelector")), "{}");
  EXPECT_EQ(json::serialize(h.at("clientConfig")),
            R"({"service":{"name":"hook","namespace":"system","port":443}})");
  EXPECT_EQ(json::serialize(h.at("rules").at(0).at("scope")), R"("*")");
}

TEST(WebhookStrategyTest, ValidationTable) {
  auto s =
      MakeStrategy(Info("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
                        "ValidatingWebhookConfiguration", false));
  struct Case {
    const char* name;
    std::function<void(json::object& hook)> mutate;
    Lines want;
  };
  const Case cases[] = {
      {"valid", [](json::object&) {}, {}},
      {"name needs three segments",
       [](json::object& h) { h["name"] = "check.example"; },
       {R"(webhooks[0].name: Invalid value: "check.example": should be a domain with at least three segments separated by dots)"}},
      {"sideEffects required",
       [](json::object& h) { h.erase("sideEffects"); },
       {"webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"}},
      {"admissionReviewVersions required",
       [](json::object& h) { h.erase("admissionReviewVersions"); },
       {"webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"}},
      {"exactly one client config",
       [](json::object& h) { h["clientConfig"].get_object()["url"] = "https://x.example.com"; },
       {"webhooks[0].clientConfig: Required value: exactly one of url or service is required"}},
      {"https only",
       [](json::object& h) { h["clientConfig"] = json::parse(R"({"url":"http://x"})"); },
       {R"(webhooks[0].clientConfig.url: Invalid value: "http://x": 'https' is the only allowed URL scheme)"}},
      {"timeout range",
       [](json::object& h) { h["timeoutSeconds"] = 31; },
       {"webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 "
        "seconds"}},
      {"failurePolicy enum",
       [](json::object& h) { h["failurePolicy"] = "Maybe"; },
       {R"(webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore")"}},
      {"rule fields",
       [](json::object& h) {
         h["rules"] = json::parse(R"([{"operations":["PATCH"],"scope":"Node"}])");
       },
       {"webhooks[0].rules[0].apiGroups: Required value",
        "webhooks[0].rules[0].apiVersions: Required value",
        "webhooks[0].rules[0].resources: Required value",
        R"(webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE")",
        R"(webhooks[0].rules[0].scope: Unsupported value: "Node": supported values: "*", "Cluster", "Namespaced")"}},
  };
  for (const Case& c : cases) {
    api::Object cfg = Config();
    c.mutate(cfg.mutable_doc()["webhooks"].get_array()[0].get_object());
    EXPECT_EQ(Create(*s, cfg), c.want) << c.name;
  }
  api::Object dup = Config();
  json::array& hooks = dup.mutable_doc()["webhooks"].get_array();
  hooks.push_back(hooks[0]);
  EXPECT_EQ(Create(*s, dup), Lines{R"(webhooks[1].name: Duplicate value: "check.example.com")"});
  // Validating webhooks have no reinvocationPolicy default.
  EXPECT_EQ(Json(dup, {"webhooks"}).find("reinvocationPolicy"), std::string::npos);
}

}  // namespace
}  // namespace converge::apiserver
