#include "apiserver/authz.h"

#include <gtest/gtest.h>

namespace converge::apiserver {
namespace {

AuthzAttributes ResourceRequest(std::string verb, std::string group, std::string resource,
                                std::string subresource = "", std::string ns = "",
                                std::string name = "") {
  AuthzAttributes a;
  a.user = {"alice", "", {"system:authenticated"}, true};
  a.verb = std::move(verb);
  a.resource_request = true;
  a.group = std::move(group);
  a.resource = std::move(resource);
  a.subresource = std::move(subresource);
  a.ns = std::move(ns);
  a.name = std::move(name);
  return a;
}

AuthzAttributes Path(std::string verb, std::string path) {
  AuthzAttributes a;
  a.user = {"alice", "", {"system:authenticated"}, true};
  a.verb = std::move(verb);
  a.path = std::move(path);
  return a;
}

TEST(RuleAllowsTest, Table) {
  struct Case {
    const char* name;
    PolicyRule rule;
    AuthzAttributes attrs;
    bool want;
  };
  const PolicyRule pods_read{
      .verbs = {"get", "list", "watch"}, .api_groups = {""}, .resources = {"pods"}};
  const Case cases[] = {
      {"exact", pods_read, ResourceRequest("list", "", "pods", "", "default"), true},
      {"other verb", pods_read, ResourceRequest("delete", "", "pods", "", "default", "p"), false},
      {"other group", pods_read, ResourceRequest("list", "apps", "pods"), false},
      {"subresource not implied", pods_read, ResourceRequest("get", "", "pods", "log", "d", "p"),
       false},
      {"verb wildcard",
       {.verbs = {"*"}, .api_groups = {""}, .resources = {"pods"}},
       ResourceRequest("deletecollection", "", "pods"),
       true},
      {"group wildcard",
       {.verbs = {"get"}, .api_groups = {"*"}, .resources = {"deployments"}},
       ResourceRequest("get", "apps", "deployments", "", "d", "x"),
       true},
      {"resource wildcard covers subresources",
       {.verbs = {"get"}, .api_groups = {""}, .resources = {"*"}},
       ResourceRequest("get", "", "pods", "log", "d", "p"),
       true},
      {"star-slash subresource",
       {.verbs = {"update"}, .api_groups = {"*"}, .resources = {"*/scale"}},
       ResourceRequest("update", "apps", "deployments", "scale", "d", "x"),
       true},
      {"star-slash needs a subresource",
       {.verbs = {"update"}, .api_groups = {"*"}, .resources = {"*/scale"}},
       ResourceRequest("update", "apps", "deployments", "", "d", "x"),
       false},
      {"combined subresource",
       {.verbs = {"get"}, .api_groups = {""}, .resources = {"pods/log"}},
       ResourceRequest("get", "", "pods", "log", "d", "p"),
       true},
      {"resourceNames match",
       {.verbs = {"get"}, .api_groups = {""}, .resources = {"configmaps"}, .resource_names = {"a"}},
       ResourceRequest("get", "", "configmaps", "", "d", "a"),
       true},
      {"resourceNames other name",
       {.verbs = {"get"}, .api_groups = {""}, .resources = {"configmaps"}, .resource_names = {"a"}},
       ResourceRequest("get", "", "configmaps", "", "d", "b"),
       false},
      {"resourceNames do not allow list",
       {.verbs = {"list"},
        .api_groups = {""},
        .resources = {"configmaps"},
        .resource_names = {"a"}},
       ResourceRequest("list", "", "configmaps", "", "d"),
       false},
      {"url exact",
       {.verbs = {"get"}, .non_resource_urls = {"/healthz"}},
       Path("get", "/healthz"),
       true},
      {"url prefix",
       {.verbs = {"get"}, .non_resource_urls = {"/apis/*"}},
       Path("get", "/apis/apps/v1"),
       true},
      {"url not prefix",
       {.verbs = {"get"}, .non_resource_urls = {"/api"}},
       Path("get", "/apis"),
       false},
      {"url rule never matches resources",
       {.verbs = {"*"}, .non_resource_urls = {"*"}},
       ResourceRequest("get", "", "pods", "", "d", "p"),
       false},
      {"resource rule never matches urls",
       {.verbs = {"*"}, .api_groups = {"*"}, .resources = {"*"}},
       Path("get", "/metrics"),
       false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RuleAllows(c.attrs, c.rule), c.want) << c.name;
  }
}

TEST(ForbiddenForTest, UpstreamMessages) {
  ApiError e = ForbiddenFor(ResourceRequest("list", "", "pods", "", "default"), "");
  EXPECT_EQ(e.code, 403);
  EXPECT_EQ(e.reason, "Forbidden");
  EXPECT_EQ(e.message,
            "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in "
            "the namespace \"default\"");
  EXPECT_EQ(e.kind, "pods");

  e = ForbiddenFor(ResourceRequest("update", "apps", "deployments", "scale", "prod", "web"), "");
  EXPECT_EQ(e.message,
            "deployments.apps \"web\" is forbidden: User \"alice\" cannot update resource "
            "\"deployments/scale\" in API group \"apps\" in the namespace \"prod\"");
  EXPECT_EQ(e.name, "web");
  EXPECT_EQ(e.group, "apps");

  e = ForbiddenFor(ResourceRequest("get", "", "nodes", "", "", "n1"), "no relationship");
  EXPECT_EQ(e.message,
            "nodes \"n1\" is forbidden: User \"alice\" cannot get resource \"nodes\" in API group "
            "\"\" at the cluster scope: no relationship");

  e = ForbiddenFor(Path("get", "/metrics"), "");
  EXPECT_EQ(e.message, "forbidden: User \"alice\" cannot get path \"/metrics\"");
}

class FixedAuthorizer : public Authorizer {
 public:
  explicit FixedAuthorizer(AuthzResult r) : r_(std::move(r)) {}
  AuthzResult Authorize(const AuthzAttributes&) const override { return r_; }

 private:
  AuthzResult r_;
};

TEST(AuthorizerChainTest, FirstDecisionWinsAndReasonsJoin) {
  AuthorizerChain chain;
  chain.Add(std::make_shared<FixedAuthorizer>(AuthzResult{AuthzDecision::kNoOpinion, "a"}));
  chain.Add(std::make_shared<FixedAuthorizer>(AuthzResult{AuthzDecision::kNoOpinion, "b"}));
  AuthzResult r = chain.Authorize(ResourceRequest("get", "", "pods"));
  EXPECT_EQ(r.decision, AuthzDecision::kNoOpinion);
  EXPECT_EQ(r.reason, "a\nb");
  chain.Add(std::make_shared<FixedAuthorizer>(AuthzResult{AuthzDecision::kDeny, "no"}));
  chain.Add(std::make_shared<FixedAuthorizer>(AuthzResult{AuthzDecision::kAllow, ""}));
  EXPECT_EQ(chain.Authorize(ResourceRequest("get", "", "pods")).decision, AuthzDecision::kDeny);
}

TEST(PrivilegedGroupAuthorizerTest, MastersOnly) {
  PrivilegedGroupAuthorizer a;
  AuthzAttributes attrs = ResourceRequest("delete", "", "nodes", "", "", "n1");
  EXPECT_FALSE(a.Authorize(attrs).allowed());
  attrs.user.groups.push_back("system:masters");
  EXPECT_TRUE(a.Authorize(attrs).allowed());
}

TEST(AlwaysAllowPathsAuthorizerTest, HealthVersionDiscoveryOnly) {
  AlwaysAllowPathsAuthorizer a;
  EXPECT_TRUE(a.Authorize(Path("get", "/healthz")).allowed());
  EXPECT_TRUE(a.Authorize(Path("get", "/version")).allowed());
  EXPECT_TRUE(a.Authorize(Path("get", "/apis/apps/v1")).allowed());
  EXPECT_FALSE(a.Authorize(Path("get", "/metrics")).allowed());
  EXPECT_FALSE(a.Authorize(Path("post", "/healthz")).allowed());
  EXPECT_FALSE(a.Authorize(ResourceRequest("list", "", "pods")).allowed());
}

}  // namespace
}  // namespace converge::apiserver
