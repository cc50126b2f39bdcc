#include "apiserver/rbac_escalation.h"

#include <gtest/gtest.h>

namespace converge::apiserver {
namespace {

class StaticRules : public Authorizer {
 public:
  explicit StaticRules(std::vector<PolicyRule> rules) : rules_(std::move(rules)) {}
  AuthzResult Authorize(const AuthzAttributes& attrs) const override {
    for (const PolicyRule& r : rules_) {
      if (RuleAllows(attrs, r)) return {AuthzDecision::kAllow, ""};
    }
    return {};
  }
  void RulesFor(const UserInfo&, std::string_view, std::vector<PolicyRule>* out,
                bool*) const override {
    out->insert(out->end(), rules_.begin(), rules_.end());
  }

 private:
  std::vector<PolicyRule> rules_;
};

TEST(UncoveredRulesTest, Table) {
  struct Case {
    const char* name;
    std::vector<PolicyRule> owner;
    std::vector<PolicyRule> requested;
    std::vector<std::string> want;  // CompactString of each missing rule
  };
  const PolicyRule pods_rw{
      .verbs = {"get", "list", "create", "delete"}, .api_groups = {""}, .resources = {"pods"}};
  const Case cases[] = {
      {"subset",
       {pods_rw},
       {{.verbs = {"get", "list"}, .api_groups = {""}, .resources = {"pods"}}},
       {}},
      {"missing verbs merge",
       {{.verbs = {"get"}, .api_groups = {""}, .resources = {"pods"}}},
       {pods_rw},
       {R"({APIGroups:[""], Resources:["pods"], Verbs:["list" "create" "delete"]})"}},
      {"wildcard owner",
       {{.verbs = {"*"}, .api_groups = {"*"}, .resources = {"*"}}},
       {pods_rw, {.verbs = {"get"}, .api_groups = {"apps"}, .resources = {"deployments/scale"}}},
       {}},
      {"star-slash covers subresources",
       {{.verbs = {"get"}, .api_groups = {"apps"}, .resources = {"*/scale"}}},
       {{.verbs = {"get"}, .api_groups = {"apps"}, .resources = {"deployments/scale"}}},
       {}},
      {"resource does not cover subresource",
       {{.verbs = {"get"}, .api_groups = {""}, .resources = {"pods"}}},
       {{.verbs = {"get"}, .api_groups = {""}, .resources = {"pods/log"}}},
       {R"({APIGroups:[""], Resources:["pods/log"], Verbs:["get"]})"}},
      {"named owner does not cover unnamed",
       {{.verbs = {"get"}, .api_groups = {""}, .resources = {"secrets"}, .resource_names = {"a"}}},
       {{.verbs = {"get"}, .api_groups = {""}, .resources = {"secrets"}}},
       {R"({APIGroups:[""], Resources:["secrets"], Verbs:["get"]})"}},
      {"unnamed owner covers named",
       {{.verbs = {"get"}, .api_groups = {""}, .resources = {"secrets"}}},
       {{.verbs = {"get"}, .api_groups = {""}, .resources = {"secrets"}, .resource_names = {"a"}}},
       {}},
      {"non-resource urls",
       {{.verbs = {"get"}, .non_resource_urls = {"/apis/*"}}},
       {{.verbs = {"get"}, .non_resource_urls = {"/apis/apps", "/metrics"}}},
       {R"({NonResourceURLs:["/metrics"], Verbs:["get"]})"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> got;
    for (const PolicyRule& r : UncoveredRules(c.owner, c.requested))
      got.push_back(CompactString(r));
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(ConfirmNoEscalationTest, UpstreamMessage) {
  StaticRules owner({{.verbs = {"get"}, .api_groups = {""}, .resources = {"pods"}}});
  UserInfo alice{"alice", "", {"dev", "system:authenticated"}, true};
  auto msg = ConfirmNoEscalation(
      owner, alice, "default",
      {{.verbs = {"get", "delete"}, .api_groups = {""}, .resources = {"pods", "secrets"}}});
  ASSERT_TRUE(msg);
  EXPECT_EQ(*msg,
            "user \"alice\" (groups=[\"dev\" \"system:authenticated\"]) is attempting to grant "
            "RBAC permissions not currently held:\n"
            "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}\n"
            "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\"]}");
  EXPECT_FALSE(ConfirmNoEscalation(
      owner, alice, "default", {{.verbs = {"get"}, .api_groups = {""}, .resources = {"pods"}}}));
}

}  // namespace
}  // namespace converge::apiserver
