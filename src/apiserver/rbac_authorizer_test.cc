#include "apiserver/rbac_authorizer.h"

#include <gtest/gtest.h>

namespace converge::apiserver {
namespace {

namespace json = boost::json;

json::object ParseDoc(std::string_view text) {
  return json::parse(text).as_object();
}

UserInfo User(std::string name, std::vector<std::string> groups = {}) {
  groups.push_back("system:authenticated");
  return {std::move(name), "", std::move(groups), true};
}

AuthzAttributes AskAs(UserInfo user, std::string verb, std::string resource, std::string ns,
                      std::string group = "") {
  AuthzAttributes a;
  a.user = std::move(user);
  a.verb = std::move(verb);
  a.resource_request = true;
  a.group = std::move(group);
  a.resource = std::move(resource);
  a.ns = std::move(ns);
  return a;
}

// A small cluster: pod-reader Role in "dev" bound to alice; view-like ClusterRole bound in "qa" to
// group testers; a ClusterRoleBinding of node-reader to a ServiceAccount; an aggregated
// ClusterRole "monitor" collecting roles labelled monitor=true.
std::shared_ptr<const RbacPolicy> Cluster() {
  std::vector<json::object> cluster_roles = {
      ParseDoc(R"({"metadata":{"name":"reader"},"rules":[
          {"verbs":["get","list"],"apiGroups":[""],"resources":["pods","services"]}]})"),
      ParseDoc(R"({"metadata":{"name":"node-reader","labels":{"monitor":"true"}},"rules":[
          {"verbs":["get","list","watch"],"apiGroups":[""],"resources":["nodes"]}]})"),
      ParseDoc(R"({"metadata":{"name":"metrics","labels":{"monitor":"true"}},"rules":[
          {"verbs":["get"],"nonResourceURLs":["/metrics"]}]})"),
      ParseDoc(R"({"metadata":{"name":"monitor"},
          "aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"monitor":"true"}}]},
          "rules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}]})"),
  };
  std::vector<json::object> roles = {
      ParseDoc(R"({"metadata":{"name":"pod-reader","namespace":"dev"},"rules":[
          {"verbs":["get","list","watch"],"apiGroups":[""],"resources":["pods"]}]})"),
  };
  std::vector<json::object> crbs = {
      ParseDoc(
          R"({"metadata":{"name":"sa-nodes"},"roleRef":{"kind":"ClusterRole","name":"node-reader"},
          "subjects":[{"kind":"ServiceAccount","name":"agent","namespace":"ops"}]})"),
      ParseDoc(R"({"metadata":{"name":"mon"},"roleRef":{"kind":"ClusterRole","name":"monitor"},
          "subjects":[{"kind":"User","name":"mona"}]})"),
  };
  std::vector<json::object> rbs = {
      ParseDoc(R"({"metadata":{"name":"alice-pods","namespace":"dev"},
          "roleRef":{"kind":"Role","name":"pod-reader"},
          "subjects":[{"kind":"User","name":"alice"}]})"),
      ParseDoc(R"({"metadata":{"name":"testers","namespace":"qa"},
          "roleRef":{"kind":"ClusterRole","name":"reader"},
          "subjects":[{"kind":"Group","name":"testers"}]})"),
      ParseDoc(R"({"metadata":{"name":"dangling","namespace":"qa"},
          "roleRef":{"kind":"Role","name":"missing"},
          "subjects":[{"kind":"User","name":"alice"}]})"),
  };
  return RbacPolicy::Build(cluster_roles, roles, crbs, rbs);
}

TEST(RbacAuthorizerTest, BindingsGrantExactlyTheirScope) {
  auto policy = Cluster();
  RbacAuthorizer rbac([policy] { return policy; });
  struct Case {
    const char* name;
    AuthzAttributes attrs;
    bool want;
  };
  const UserInfo alice = User("alice");
  const UserInfo tess = User("tess", {"testers"});
  const UserInfo agent = User("system:serviceaccount:ops:agent");
  const UserInfo mona = User("mona");
  const Case cases[] = {
      {"role in its namespace", AskAs(alice, "list", "pods", "dev"), true},
      {"role verb not granted", AskAs(alice, "delete", "pods", "dev"), false},
      {"role in another namespace", AskAs(alice, "list", "pods", "qa"), false},
      {"role across all namespaces", AskAs(alice, "list", "pods", ""), false},
      {"role other resource", AskAs(alice, "list", "services", "dev"), false},
      {"group via clusterrole in a namespace", AskAs(tess, "get", "services", "qa"), true},
      {"group clusterrole only in its namespace", AskAs(tess, "get", "services", "dev"), false},
      {"service account subject", AskAs(agent, "watch", "nodes", ""), true},
      {"other service account",
       AskAs(User("system:serviceaccount:dev:agent"), "watch", "nodes", ""), false},
      {"aggregated rules", AskAs(mona, "list", "nodes", ""), true},
      {"aggregated role ignores its stored rules", AskAs(mona, "delete", "pods", "dev"), false},
      {"unbound user", AskAs(User("bob"), "list", "pods", "dev"), false},
  };
  for (const Case& c : cases) EXPECT_EQ(rbac.Authorize(c.attrs).allowed(), c.want) << c.name;

  AuthzAttributes metrics;
  metrics.user = mona;
  metrics.verb = "get";
  metrics.path = "/metrics";
  EXPECT_TRUE(rbac.Authorize(metrics).allowed());
}

TEST(RbacAuthorizerTest, RefreshIsConsultedOnDenial) {
  auto empty = RbacPolicy::Build({}, {}, {}, {});
  auto full = Cluster();
  bool refreshed = false;
  RbacAuthorizer rbac([&] { return refreshed ? full : empty; }, [&] { refreshed = true; });
  EXPECT_TRUE(rbac.Authorize(AskAs(User("alice"), "list", "pods", "dev")).allowed());
  EXPECT_TRUE(refreshed);
}

TEST(RbacAuthorizerTest, RulesForListsClusterAndNamespaceGrants) {
  auto policy = Cluster();
  RbacAuthorizer rbac([policy] { return policy; });
  std::vector<PolicyRule> rules;
  bool incomplete = false;
  rbac.RulesFor(User("alice"), "dev", &rules, &incomplete);
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].resources, std::vector<std::string>{"pods"});
  rules.clear();
  rbac.RulesFor(User("alice"), "", &rules, &incomplete);
  EXPECT_TRUE(rules.empty());
}

TEST(SubjectMatchesTest, ServiceAccountDefaultsToBindingNamespace) {
  RbacSubject sa{"ServiceAccount", "builder", ""};
  EXPECT_TRUE(SubjectMatches(sa, "ci", User("system:serviceaccount:ci:builder")));
  EXPECT_FALSE(SubjectMatches(sa, "", User("system:serviceaccount:ci:builder")));
  EXPECT_FALSE(SubjectMatches({"User", "a", ""}, "", User("b")));
  EXPECT_TRUE(SubjectMatches({"Group", "system:authenticated", ""}, "", User("b")));
}

}  // namespace
}  // namespace converge::apiserver
