// Least privilege in the all-in-one server: `converge server` converges a Deployment, garbage
// collects it and deletes a namespace while every component acts under its own identity, and the
// audit log proves who did what — ReplicaSets created by the deployment controller's
// ServiceAccount, pods by the ReplicaSet controller's, pod status and Leases by the node
// identities, namespace finalization by the namespace controller's — that none of them was ever
// refused, and that nobody but the administrator is in system:masters.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "apiserver/kubeconfig.h"
#include "apiserver/pki.h"
#include "testing/kubectl.h"
#include "testing/process.h"
#include "testing/server.h"

namespace converge {
namespace {

namespace json = boost::json;
using testing::CommandResult;
using testing::Kubectl;
using testing::ServerProcess;
using testing::TempDir;

std::vector<json::object> ReadEvents(const std::string& path) {
  std::vector<json::object> out;
  std::istringstream in(testing::ReadFile(path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    if (!ec && v.is_object()) out.push_back(v.as_object());
  }
  return out;
}

std::string Str(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* v = nullptr;
  const json::object* cur = &o;
  for (std::string_view key : path) {
    if (!cur) return "";
    v = cur->if_contains(key);
    if (!v) return "";
    cur = v->if_object();
  }
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

int64_t Code(const json::object& ev) {
  const json::value* rs = ev.if_contains("responseStatus");
  if (!rs || !rs->is_object()) return 0;
  const json::value* code = rs->as_object().if_contains("code");
  return code && code->is_int64() ? code->as_int64() : 0;
}

// The users that made a request with this verb on this resource (and subresource) and succeeded.
std::set<std::string> Actors(const std::vector<json::object>& events, std::string_view verb,
                             std::string_view resource, std::string_view subresource = "") {
  std::set<std::string> out;
  for (const json::object& ev : events) {
    if (Str(ev, {"verb"}) != verb || Str(ev, {"objectRef", "resource"}) != resource ||
        Str(ev, {"objectRef", "subresource"}) != subresource) {
      continue;
    }
    if (Code(ev) >= 200 && Code(ev) < 300) out.insert(Str(ev, {"user", "username"}));
  }
  return out;
}

bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 600; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(LeastPrivilegeTest, ComponentsRunWithLeastPrivilege) {
  TempDir dir;
  const std::string log = dir.path() + "/audit.log";
  ServerProcess server;
  ASSERT_TRUE(
      server.Start({.command = "server", .extra_args = {"--nodes", "2", "--audit-log-path", log}}));
  Kubectl k(server.kubeconfig_path(), dir.path() + "/cache");

  CommandResult r = k.Run({"create", "deployment", "web", "--image=nginx", "--replicas=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = k.Run({"rollout", "status", "deployment/web", "--timeout=90s"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  // The garbage collector removes the ReplicaSet and pods of a deleted Deployment.
  ASSERT_EQ(k.Run({"delete", "deployment", "web"}).exit_code, 0);
  EXPECT_TRUE(Eventually([&] {
    return k.Run({"get", "replicasets,pods", "-l", "app=web", "-o", "name"}).out.empty();
  })) << "the garbage collector did not clean up";

  // The namespace controller empties and finalizes a deleted namespace.
  ASSERT_EQ(k.Run({"create", "namespace", "scratch"}).exit_code, 0);
  ASSERT_EQ(k.Run({"create", "configmap", "c", "-n", "scratch"}).exit_code, 0);
  r = k.Run({"delete", "namespace", "scratch", "--timeout=60s"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  std::vector<json::object> events;
  const std::string deployment_sa = "system:serviceaccount:kube-system:deployment-controller";
  const std::string replicaset_sa = "system:serviceaccount:kube-system:replicaset-controller";
  const std::string gc_sa = "system:serviceaccount:kube-system:generic-garbage-collector";
  const std::string namespace_sa = "system:serviceaccount:kube-system:namespace-controller";
  // The audit writer is asynchronous: wait until the last of the writes we look for is logged.
  ASSERT_TRUE(Eventually([&] {
    events = ReadEvents(log);
    return Actors(events, "update", "namespaces", "finalize").count(namespace_sa) > 0;
  })) << "no namespace finalization by the namespace controller in the audit log";

  EXPECT_EQ(Actors(events, "create", "replicasets"), std::set<std::string>{deployment_sa});
  EXPECT_EQ(Actors(events, "create", "pods"), std::set<std::string>{replicaset_sa});
  EXPECT_TRUE(Actors(events, "delete", "replicasets").count(gc_sa));
  EXPECT_EQ(Actors(events, "create", "pods", "binding"),
            std::set<std::string>{"system:kube-scheduler"});
  std::set<std::string> status_writers;
  for (const char* verb : {"update", "patch"}) {
    for (const std::string& u : Actors(events, verb, "pods", "status")) status_writers.insert(u);
  }
  EXPECT_TRUE(status_writers.count("system:node:converge-node-0") ||
              status_writers.count("system:node:converge-node-1"))
      << "pod status comes from the nodes";
  for (const std::string& u : status_writers) {
    EXPECT_EQ(u.rfind("system:node:", 0), 0u) << u << " wrote pod status";
  }
  EXPECT_EQ(Actors(events, "create", "nodes"),
            (std::set<std::string>{"system:node:converge-node-0", "system:node:converge-node-1"}));

  for (const json::object& ev : events) {
    const std::string user = Str(ev, {"user", "username"});
    if (user == "kubernetes-admin") continue;
    // No component is refused what its job needs (a kubelet reporting the status of a pod
    // deleted a moment ago is refused like upstream's: the node no longer relates to it)...
    if (Str(ev, {"responseStatus", "message"}).find("no relationship found") == std::string::npos) {
      EXPECT_NE(Code(ev), 403) << json::serialize(ev);
    }
    // ...and none is privileged.
    if (const json::value* groups = ev.at("user").as_object().if_contains("groups")) {
      for (const json::value& g : groups->as_array()) {
        EXPECT_NE(g.as_string(), "system:masters") << user;
      }
    }
  }
}

// `converge controller-manager --use-service-account-credentials` (a separate process, as
// system:kube-controller-manager) gives each controller its kube-system ServiceAccount and a token
// for it: the ReplicaSet's pods are created by the ReplicaSet controller's ServiceAccount.
TEST(LeastPrivilegeTest, SeparateControllerManagerUsesServiceAccountCredentials) {
  TempDir dir;
  const std::string log = dir.path() + "/audit.log";
  ServerProcess server;
  ASSERT_TRUE(server.Start({.extra_args = {"--audit-log-path", log}}));
  auto pki = apiserver::LoadOrCreatePki({.dir = server.data_dir() + "/pki"});
  ASSERT_TRUE(pki.ok());
  auto cert = pki->ClientCertificate("system:kube-controller-manager", {});
  ASSERT_TRUE(cert.ok());
  const std::string cm_kubeconfig = dir.path() + "/controller-manager.kubeconfig";
  ASSERT_TRUE(
      apiserver::WriteKubeconfig(cm_kubeconfig, {.server = server.kubeconfig().server,
                                                 .user_name = "system:kube-controller-manager",
                                                 .ca_pem = pki->ca.cert_pem,
                                                 .client_cert_pem = cert->cert_pem,
                                                 .client_key_pem = cert->key_pem})
          .ok());
  testing::Process cm;
  ASSERT_TRUE(cm.Start({CONVERGE_BINARY, "controller-manager", "--kubeconfig", cm_kubeconfig,
                        "--use-service-account-credentials=true", "--leader-elect=false"},
                       dir.path() + "/controller-manager.log"));

  Kubectl k(server.kubeconfig_path(), dir.path() + "/cache");
  CommandResult r = k.Run({"apply", "-f", "-"}, R"(
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  replicas: 2
  selector: {matchLabels: {app: rs}}
  template:
    metadata: {labels: {app: rs}}
    spec:
      containers: [{name: c, image: nginx}]
)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Eventually([&] {
    return k.Run({"get", "pods", "-l", "app=rs", "-o", "name"}).out.size() > 0;
  })) << testing::ReadFile(dir.path() + "/controller-manager.log");
  const std::string replicaset_sa = "system:serviceaccount:kube-system:replicaset-controller";
  std::vector<json::object> events;
  EXPECT_TRUE(Eventually([&] {
    events = ReadEvents(log);
    return Actors(events, "create", "pods").count(replicaset_sa) > 0;
  }));
  EXPECT_EQ(Actors(events, "create", "pods"), std::set<std::string>{replicaset_sa});
  EXPECT_TRUE(Actors(events, "create", "serviceaccounts").count("system:kube-controller-manager"));
  EXPECT_EQ(
      k.Run({"get", "serviceaccount", "replicaset-controller", "-n", "kube-system", "-o", "name"})
          .out,
      "serviceaccount/replicaset-controller\n");
  cm.Stop();
}

}  // namespace
}  // namespace converge
