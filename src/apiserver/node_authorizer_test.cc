#include "apiserver/node_authorizer.h"

#include <gtest/gtest.h>

#include <map>

#include "apiserver/admission_node_restriction.h"

namespace converge::apiserver {
namespace {

const UserInfo kNode1{"system:node:n1", "", {"system:nodes", "system:authenticated"}, true};

AuthzAttributes Ask(std::string verb, std::string group, std::string resource,
                    std::string subresource, std::string ns, std::string name,
                    std::string field_selector = "") {
  AuthzAttributes a;
  a.user = kNode1;
  a.verb = std::move(verb);
  a.resource_request = true;
  a.group = std::move(group);
  a.resource = std::move(resource);
  a.subresource = std::move(subresource);
  a.ns = std::move(ns);
  a.name = std::move(name);
  a.field_selector = std::move(field_selector);
  return a;
}

NodeAuthorizer MakeAuthorizer() {
  // default/mine runs on n1, default/theirs on n2, default/pending is unscheduled.
  static const std::map<std::string, std::string> pods = {
      {"default/mine", "n1"}, {"default/theirs", "n2"}, {"default/pending", ""}};
  return NodeAuthorizer(NodeAuthorizerOptions{
      .pod_node = [](std::string_view ns, std::string_view name) -> std::optional<std::string> {
        auto it = pods.find(std::string(ns) + "/" + std::string(name));
        if (it == pods.end()) return std::nullopt;
        return it->second;
      },
      .node_rules = {{.verbs = {"get", "list", "watch"},
                      .api_groups = {""},
                      .resources = {"services"}}},
  });
}

TEST(NodeAuthorizerTest, Table) {
  NodeAuthorizer node = MakeAuthorizer();
  struct Case {
    const char* name;
    AuthzAttributes attrs;
    bool want;
  };
  const Case cases[] = {
      {"own node", Ask("get", "", "nodes", "", "", "n1"), true},
      {"own node status", Ask("patch", "", "nodes", "status", "", "n1"), true},
      {"other node", Ask("get", "", "nodes", "", "", "n2"), false},
      {"other node status", Ask("update", "", "nodes", "status", "", "n2"), false},
      {"register", Ask("create", "", "nodes", "", "", ""), true},
      {"watch own node", Ask("watch", "", "nodes", "", "", "", "metadata.name=n1"), true},
      {"list every node", Ask("list", "", "nodes", "", "", ""), false},
      {"own pod", Ask("get", "", "pods", "", "default", "mine"), true},
      {"own pod status", Ask("update", "", "pods", "status", "default", "mine"), true},
      {"delete own pod", Ask("delete", "", "pods", "", "default", "mine"), true},
      {"other node's pod", Ask("get", "", "pods", "", "default", "theirs"), false},
      {"other node's pod status", Ask("patch", "", "pods", "status", "default", "theirs"), false},
      {"delete other node's pod", Ask("delete", "", "pods", "", "default", "theirs"), false},
      {"unscheduled pod", Ask("update", "", "pods", "status", "default", "pending"), false},
      {"missing pod", Ask("get", "", "pods", "", "default", "ghost"), false},
      {"pod exec", Ask("create", "", "pods", "exec", "default", "mine"), false},
      {"watch own pods", Ask("watch", "", "pods", "", "", "", "spec.nodeName=n1"), true},
      {"watch own pods, several terms",
       Ask("list", "", "pods", "", "", "", "status.phase!=Failed,spec.nodeName==n1"), true},
      {"watch other node's pods", Ask("watch", "", "pods", "", "", "", "spec.nodeName=n2"), false},
      {"list all pods", Ask("list", "", "pods", "", "", ""), false},
      {"own lease", Ask("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "n1"),
       true},
      {"other lease", Ask("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "n2"),
       false},
      {"lease elsewhere", Ask("get", "coordination.k8s.io", "leases", "", "kube-system", "n1"),
       false},
      {"events", Ask("create", "", "events", "", "default", ""), true},
      {"node rules", Ask("list", "", "services", "", "", ""), true},
      {"nothing else", Ask("list", "", "secrets", "", "default", ""), false},
  };
  for (const Case& c : cases) EXPECT_EQ(node.Authorize(c.attrs).allowed(), c.want) << c.name;
  EXPECT_EQ(node.Authorize(Ask("get", "", "pods", "", "default", "theirs")).reason,
            "no relationship found between node 'n1' and this object");
}

TEST(NodeAuthorizerTest, OnlyNodeIdentities) {
  NodeAuthorizer node = MakeAuthorizer();
  AuthzAttributes a = Ask("get", "", "nodes", "", "", "n1");
  a.user.groups = {"system:authenticated"};  // the name alone is not enough
  EXPECT_EQ(node.Authorize(a).decision, AuthzDecision::kNoOpinion);
  EXPECT_TRUE(node.Authorize(a).reason.empty());
}

TEST(NodeRestrictionTest, WritesMustBelongToTheNode) {
  NodeRestriction plugin;
  api::ResourceInfo pods_info;
  pods_info.gvr = {"", "v1", "pods"};
  api::ResourceInfo nodes_info;
  nodes_info.gvr = {"", "v1", "nodes"};
  auto object = [](std::string_view json) { return *api::Object::Parse(json); };

  api::Object mine = object(R"({"metadata":{"name":"p"},"spec":{"nodeName":"n1"}})");
  api::Object theirs = object(R"({"metadata":{"name":"p"},"spec":{"nodeName":"n2"}})");
  AdmissionAttributes attrs{.operation = "CREATE",
                            .resource = &pods_info,
                            .ns = "default",
                            .object = &mine,
                            .user = &kNode1};
  EXPECT_FALSE(plugin.Validate(attrs));
  attrs.object = &theirs;
  auto err = plugin.Validate(attrs);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, 403);

  api::Object n2 = object(R"({"metadata":{"name":"n2"}})");
  attrs = {.operation = "CREATE", .resource = &nodes_info, .object = &n2, .user = &kNode1};
  err = plugin.Validate(attrs);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->message,
            "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\"");

  UserInfo admin{"admin", "", {"system:masters"}, true};
  attrs.user = &admin;
  EXPECT_FALSE(plugin.Validate(attrs));
}

}  // namespace
}  // namespace converge::apiserver
