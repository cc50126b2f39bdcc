#include "server/fault_injector.h"

#include <gtest/gtest.h>

namespace converge::server {
namespace {

apiserver::RequestInfo Write(std::string verb, std::string group, std::string resource,
                             std::string subresource = "", std::string ns = "default") {
  apiserver::RequestInfo ri;
  ri.is_resource_request = true;
  ri.verb = std::move(verb);
  ri.group = std::move(group);
  ri.resource = std::move(resource);
  ri.subresource = std::move(subresource);
  ri.ns = std::move(ns);
  ri.name = "web";
  return ri;
}

TEST(WriteFaultTest, Matches) {
  struct Case {
    const char* name;
    WriteFault fault;
    apiserver::RequestInfo ri;
    bool want;
  };
  const WriteFault pods{.resource = "pods"};
  const Case cases[] = {
      {"create", pods, Write("create", "", "pods"), true},
      {"delete", pods, Write("delete", "", "pods"), true},
      {"reads never", pods, Write("get", "", "pods"), false},
      {"watches never", pods, Write("watch", "", "pods"), false},
      {"other resource", pods, Write("create", "", "configmaps"), false},
      {"other group", pods, Write("create", "example.com", "pods"), false},
      {"subresources too", pods, Write("update", "", "pods", "status"), true},
      {"only the subresource",
       {.resource = "pods", .subresource = "status"},
       Write("update", "", "pods"),
       false},
      {"the subresource",
       {.resource = "pods", .subresource = "status"},
       Write("patch", "", "pods", "status"),
       true},
      {"namespace", {.resource = "pods", .ns = "team"}, Write("create", "", "pods"), false},
      {"verbs", {.resource = "pods", .verbs = {"create"}}, Write("delete", "", "pods"), false},
      {"group",
       {.group = "apps", .resource = "deployments"},
       Write("patch", "apps", "deployments"),
       true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.fault.Matches(c.ri), c.want) << c.name;
  }
}

TEST(FaultInjectorTest, FailsExactlyTheNextNMatchingWrites) {
  FaultInjector f({});
  ASSERT_TRUE(f.FailWrites({.resource = "pods", .code = 409, .remaining = 2}).ok());
  ASSERT_TRUE(
      f.FailWrites({.group = "apps", .resource = "replicasets", .code = 500, .remaining = 1}).ok());
  apiserver::Request req;
  apiserver::RequestInfo create_pod = Write("create", "", "pods");
  apiserver::RequestInfo get_pod = Write("get", "", "pods");
  apiserver::RequestInfo update_rs = Write("update", "apps", "replicasets");

  EXPECT_FALSE(f.Intercept(req, get_pod).has_value());
  auto first = f.Intercept(req, create_pod);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->status, 409);
  EXPECT_NE(first->body.find("\"reason\":\"Conflict\""), std::string::npos) << first->body;
  auto rs = f.Intercept(req, update_rs);
  ASSERT_TRUE(rs.has_value());
  EXPECT_EQ(rs->status, 500);
  EXPECT_FALSE(f.Intercept(req, update_rs).has_value()) << "armed for one write only";
  ASSERT_TRUE(f.Intercept(req, create_pod).has_value());
  EXPECT_FALSE(f.Intercept(req, create_pod).has_value()) << "armed for two writes only";
  EXPECT_NE(f.Describe().find("\"failWrites\":[]"), std::string::npos) << f.Describe();
}

TEST(FaultInjectorTest, RejectsBadWriteFaults) {
  FaultInjector f({});
  EXPECT_FALSE(f.FailWrites({.resource = "", .remaining = 1}).ok());
  EXPECT_FALSE(f.FailWrites({.resource = "pods", .code = 404, .remaining = 1}).ok());
  EXPECT_FALSE(f.FailWrites({.resource = "pods", .verbs = {"get"}, .remaining = 1}).ok());
}

apiserver::Response Post(FaultInjector& f, std::string path,
                         std::vector<std::pair<std::string, std::string>> query) {
  apiserver::Request req;
  req.method = "POST";
  req.path = std::move(path);
  req.query = std::move(query);
  apiserver::RequestInfo ri;  // a non-resource request
  auto r = f.Intercept(req, ri);
  EXPECT_TRUE(r.has_value());
  return r ? *r : apiserver::Response{};
}

TEST(FaultInjectorTest, EndpointsArmFaults) {
  FaultInjector f({});
  apiserver::Response armed = Post(f, "/converge/faults/fail-writes",
                                   {{"resource", "deployments.apps"},
                                    {"count", "3"},
                                    {"code", "500"},
                                    {"subresource", "status"}});
  EXPECT_EQ(armed.status, 200) << armed.body;
  EXPECT_NE(f.Describe().find("\"remaining\":3"), std::string::npos) << f.Describe();
  apiserver::Request req;
  auto failed = f.Intercept(req, Write("update", "apps", "deployments", "status"));
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->status, 500);

  EXPECT_EQ(Post(f, "/converge/faults/fail-writes", {{"resource", "pods"}, {"count", "x"}}).status,
            400);
  // Delays exist for the components that registered one.
  std::shared_ptr<WatchDelay> cm = f.ComponentWatchDelay("controller-manager");
  EXPECT_EQ(Post(f, "/converge/faults/watch-delay",
                 {{"component", "controller-manager"}, {"seconds", "1.5"}})
                .status,
            200);
  EXPECT_EQ(cm->Get(), std::chrono::milliseconds(1500));
  EXPECT_EQ(
      Post(f, "/converge/faults/watch-delay", {{"component", "nobody"}, {"seconds", "1"}}).status,
      400);
  // Heartbeats go to whoever carries the nodes.
  EXPECT_EQ(Post(f, "/converge/faults/heartbeats", {{"node", "n1"}, {"paused", "true"}}).status,
            400)
      << "no kubelet in this process yet";
  std::vector<std::pair<std::string, bool>> calls;
  f.SetHeartbeatControl([&](const std::string& node, bool paused) {
    if (node != "n1") return util::NotFound("no " + node);
    calls.emplace_back(node, paused);
    return util::Status();
  });
  EXPECT_EQ(Post(f, "/converge/faults/heartbeats", {{"node", "n1"}, {"paused", "true"}}).status,
            200);
  EXPECT_EQ(Post(f, "/converge/faults/heartbeats", {{"node", "n2"}, {"paused", "true"}}).status,
            404);
  EXPECT_EQ(Post(f, "/converge/faults/heartbeats", {{"node", "n1"}, {"paused", "false"}}).status,
            200);
  EXPECT_EQ(calls, (std::vector<std::pair<std::string, bool>>{{"n1", true}, {"n1", false}}));
  EXPECT_EQ(Post(f, "/converge/faults/nothing", {}).status, 404);
}

TEST(FaultInjectorTest, OtherPathsAreNotIntercepted) {
  FaultInjector f({});
  apiserver::Request req;
  req.method = "GET";
  req.path = "/healthz";
  EXPECT_FALSE(f.Intercept(req, apiserver::RequestInfo{}).has_value());
  req.path = "/converge/faultsx";
  EXPECT_FALSE(f.Intercept(req, apiserver::RequestInfo{}).has_value());
}

}  // namespace
}  // namespace converge::server
