// The scheduler against a live `converge apiserver`: `converge scheduler --kubeconfig` in its own
// process, Node and Pod objects created over HTTP, results read back over HTTP. Each test gets a
// fresh API server (nodes are cluster-wide) and scheduler.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "testing/kubectl.h"
#include "testing/process.h"
#include "testing/server.h"

namespace converge {
namespace {

namespace json = boost::json;
using testing::HttpResponse;
using testing::ServerProcess;
using testing::TestClient;

std::string Str(const json::value& v, std::initializer_list<const char*> path) {
  const json::value* cur = &v;
  for (const char* p : path) {
    if (!cur->is_object() || !cur->get_object().contains(p)) return "";
    cur = &cur->get_object().at(p);
  }
  return cur->is_string() ? std::string(cur->get_string()) : json::serialize(*cur);
}

// A Node as the simulated kubelet registers it: allocatable cpu/memory/pods and Ready.
json::object Node(const std::string& name, const std::string& cpu, const std::string& memory,
                  json::object labels = {}, json::array taints = {}) {
  labels["kubernetes.io/hostname"] = name;
  json::object spec;
  if (!taints.empty()) spec["taints"] = std::move(taints);
  json::object resources{{"cpu", cpu}, {"memory", memory}, {"pods", "110"}};
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", json::object{{"name", name}, {"labels", std::move(labels)}}},
      {"spec", std::move(spec)},
      {"status",
       json::object{{"capacity", resources},
                    {"allocatable", resources},
                    {"conditions",
                     json::array{json::object{
                         {"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
}

json::object Pod(const std::string& name, const std::string& cpu, json::object extra_spec = {}) {
  json::object spec{
      {"containers", json::array{json::object{
                         {"name", "app"},
                         {"image", "nginx:1.27"},
                         {"resources", json::object{{"requests", json::object{{"cpu", cpu}}}}}}}}};
  for (auto& [k, v] : extra_spec) spec[k] = v;
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata", json::object{{"name", name}}},
                      {"spec", std::move(spec)}};
}

class SchedulerIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    client_ = server_.Client();
    ASSERT_TRUE(
        scheduler_.Start({CONVERGE_BINARY, "scheduler", "--kubeconfig", server_.kubeconfig_path(),
                          "--metrics-bind-address", "127.0.0.1:0"},
                         server_.data_dir() + "/scheduler.log"));
  }
  void TearDown() override {
    scheduler_.Stop();
    if (HasFailure()) {
      ADD_FAILURE() << "scheduler log:\n"
                    << testing::ReadFile(server_.data_dir() + "/scheduler.log");
    }
  }

  void Create(const std::string& path, const json::object& obj) {
    HttpResponse r = client_->Post(path, json::serialize(obj));
    ASSERT_EQ(r.status, 201) << r.body;
  }
  void CreateNode(const json::object& node) { Create("/api/v1/nodes", node); }
  void CreatePod(const json::object& pod) { Create("/api/v1/namespaces/default/pods", pod); }
  json::value GetPod(const std::string& name) {
    return client_->Get("/api/v1/namespaces/default/pods/" + name).Json();
  }
  // Polls until `done` or 60 s pass; returns whether it got done (no timing is asserted).
  bool WaitFor(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }
  std::string NodeOf(const std::string& pod) { return Str(GetPod(pod), {"spec", "nodeName"}); }
  // Messages of events with `reason` about `pod`.
  std::vector<std::string> Events(const std::string& pod, const std::string& reason) {
    json::value list = client_
                           ->Get("/api/v1/namespaces/default/events?fieldSelector=" +
                                 testing::Escape("involvedObject.name=" + pod))
                           .Json();
    std::vector<std::string> out;
    if (!list.is_object() || !list.as_object().contains("items")) return out;
    for (const json::value& e : list.at("items").as_array()) {
      if (Str(e, {"reason"}) == reason) out.push_back(Str(e, {"message"}));
    }
    return out;
  }
  json::object Condition(const std::string& pod, const std::string& type) {
    json::value p = GetPod(pod);
    const json::value* conds = p.is_object() ? p.as_object().if_contains("status") : nullptr;
    if (!conds || !conds->as_object().contains("conditions")) return {};
    for (const json::value& c : conds->at("conditions").as_array()) {
      if (Str(c, {"type"}) == type) return c.as_object();
    }
    return {};
  }

  ServerProcess server_;
  std::unique_ptr<TestClient> client_;
  testing::Process scheduler_;
};

TEST_F(SchedulerIntegrationTest, ThreePodsGoToThreeNodes) {
  for (const char* n : {"node-1", "node-2", "node-3"}) CreateNode(Node(n, "4", "8Gi"));
  for (const char* p : {"web-1", "web-2", "web-3"}) CreatePod(Pod(p, "1"));
  ASSERT_TRUE(WaitFor([&] {
    return !NodeOf("web-1").empty() && !NodeOf("web-2").empty() && !NodeOf("web-3").empty();
  }));
  std::set<std::string> nodes;
  for (const char* p : {"web-1", "web-2", "web-3"}) {
    std::string node = NodeOf(p);
    nodes.insert(node);
    EXPECT_EQ(Str(Condition(p, "PodScheduled"), {"status"}), "True") << p;
    ASSERT_TRUE(WaitFor([&] { return !Events(p, "Scheduled").empty(); })) << p;
    EXPECT_EQ(Events(p, "Scheduled"), std::vector<std::string>{"Successfully assigned default/" +
                                                               std::string(p) + " to " + node});
  }
  EXPECT_EQ(nodes.size(), 3u) << "least-allocated spreads one pod per empty node";
  // A fourth pod lands too; with 4 cpu per node, 1 cpu each, every node can take it.
  CreatePod(Pod("web-4", "1"));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("web-4").empty(); }));
}

TEST_F(SchedulerIntegrationTest, TooLargeForEveryNodeThenABigNodeAppears) {
  for (const char* n : {"node-1", "node-2", "node-3"}) CreateNode(Node(n, "2", "4Gi"));
  CreatePod(Pod("huge", "16"));
  const std::string message =
      "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No "
      "preemption victims found for incoming pod..";
  ASSERT_TRUE(WaitFor([&] { return !Events("huge", "FailedScheduling").empty(); }));
  EXPECT_EQ(Events("huge", "FailedScheduling")[0], message);
  ASSERT_TRUE(WaitFor([&] { return !Condition("huge", "PodScheduled").empty(); }));
  json::object cond = Condition("huge", "PodScheduled");
  EXPECT_EQ(Str(cond, {"status"}), "False");
  EXPECT_EQ(Str(cond, {"reason"}), "Unschedulable");
  EXPECT_EQ(Str(cond, {"message"}), message);
  EXPECT_TRUE(NodeOf("huge").empty());

  // What a user sees with kubectl.
  ASSERT_TRUE(testing::Kubectl::Available()) << "kubectl is not on PATH";
  testing::TempDir cache;
  testing::Kubectl kubectl(server_.kubeconfig_path(), cache.path());
  testing::CommandResult events =
      kubectl.Run({"get", "events", "--field-selector", "involvedObject.name=huge"});
  ASSERT_EQ(events.exit_code, 0) << events.err;
  EXPECT_NE(events.out.find("FailedScheduling"), std::string::npos) << events.out;
  EXPECT_NE(events.out.find("0/3 nodes are available: 3 Insufficient cpu."), std::string::npos)
      << events.out;
  testing::CommandResult describe = kubectl.Run({"describe", "pod", "huge"});
  ASSERT_EQ(describe.exit_code, 0) << describe.err;
  std::string::size_type cond_line = describe.out.find("  PodScheduled ");
  ASSERT_NE(cond_line, std::string::npos) << describe.out;
  EXPECT_NE(
      describe.out.substr(cond_line, describe.out.find('\n', cond_line) - cond_line).find("False"),
      std::string::npos)
      << describe.out;
  EXPECT_NE(describe.out.find("FailedScheduling"), std::string::npos) << describe.out;
  EXPECT_NE(describe.out.find("default-scheduler"), std::string::npos) << describe.out;

  CreateNode(Node("big", "32", "64Gi"));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("huge").empty(); }));
  EXPECT_EQ(NodeOf("huge"), "big");
  EXPECT_EQ(Str(Condition("huge", "PodScheduled"), {"status"}), "True");
}

TEST_F(SchedulerIntegrationTest, NodeSelectorsAndTaintsAreRespected) {
  CreateNode(Node("ssd", "4", "8Gi", {{"disktype", "ssd"}}));
  CreateNode(
      Node("gpu", "4", "8Gi", {{"accelerator", "gpu"}},
           {json::object{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}}}));
  CreateNode(Node("plain", "4", "8Gi"));
  CreatePod(Pod("wants-ssd", "100m", {{"nodeSelector", json::object{{"disktype", "ssd"}}}}));
  CreatePod(Pod("gpu-job", "100m",
                {{"nodeSelector", json::object{{"accelerator", "gpu"}}},
                 {"tolerations", json::array{json::object{{"key", "dedicated"},
                                                          {"operator", "Equal"},
                                                          {"value", "gpu"},
                                                          {"effect", "NoSchedule"}}}}}));
  CreatePod(Pod("untolerated", "100m", {{"nodeSelector", json::object{{"accelerator", "gpu"}}}}));
  // Pods without constraints never land on the tainted node.
  for (int i = 0; i < 6; ++i) CreatePod(Pod("free-" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("wants-ssd").empty() && !NodeOf("gpu-job").empty(); }));
  EXPECT_EQ(NodeOf("wants-ssd"), "ssd");
  EXPECT_EQ(NodeOf("gpu-job"), "gpu");
  for (int i = 0; i < 6; ++i) {
    std::string p = "free-" + std::to_string(i);
    ASSERT_TRUE(WaitFor([&] { return !NodeOf(p).empty(); })) << p;
    EXPECT_NE(NodeOf(p), "gpu") << p;
  }
  ASSERT_TRUE(WaitFor([&] { return !Events("untolerated", "FailedScheduling").empty(); }));
  EXPECT_EQ(Events("untolerated", "FailedScheduling")[0],
            "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) "
            "didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 "
            "Preemption is not helpful for scheduling..");
  EXPECT_TRUE(NodeOf("untolerated").empty());
}

TEST_F(SchedulerIntegrationTest, PodsOfOtherSchedulersAreLeftAlone) {
  CreateNode(Node("node-1", "4", "8Gi"));
  // "theirs" is older: had the scheduler queued it, it would have been tried before "mine".
  CreatePod(Pod("theirs", "100m", {{"schedulerName", "other-scheduler"}}));
  CreatePod(Pod("mine", "100m"));
  ASSERT_TRUE(WaitFor([&] { return !Events("mine", "Scheduled").empty(); }));
  EXPECT_TRUE(NodeOf("theirs").empty());
  EXPECT_TRUE(Events("theirs", "FailedScheduling").empty());
  EXPECT_TRUE(Events("theirs", "Scheduled").empty());
}

TEST_F(SchedulerIntegrationTest, HoldsTheLeaderLease) {
  ASSERT_TRUE(WaitFor([&] {
    return client_->Get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler")
               .status == 200;
  }));
  json::value lease =
      client_->Get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler")
          .Json();
  EXPECT_FALSE(Str(lease, {"spec", "holderIdentity"}).empty());
}

}  // namespace
}  // namespace converge
