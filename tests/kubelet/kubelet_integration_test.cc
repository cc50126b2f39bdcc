// The simulated kubelet against a live `converge apiserver` (a separate process, reached through
// the kubeconfig it writes): pods bound to its nodes run, report status and events as a real
// kubelet's would, serve `kubectl logs` through the API server's proxy, terminate gracefully; a
// node whose heartbeats stop is marked Unknown, tainted and drained by the node lifecycle
// controller, and untainted when it comes back.
//
// The kubelets run in this process (so the test can pause a node's heartbeats); one also runs as
// `converge kubelet`. Timing is never asserted: every wait polls for a state with a generous
// deadline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <set>
#include <thread>

#include "client/event_recorder.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "client/shared_informer_factory.h"
#include "controllers/nodelifecycle/controller.h"
#include "kubelet/kubelet.h"
#include "testing/kubectl.h"
#include "testing/process.h"
#include "testing/server.h"

namespace converge {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;
using testing::CommandResult;
using ::testing::HasSubstr;
using testing::Kubectl;

const api::GroupVersionResource kPods{"", "v1", "pods"};
const api::GroupVersionResource kNodes{"", "v1", "nodes"};
const api::GroupVersionResource kEvents{"", "v1", "events"};
const api::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};
const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};

// Polls `pred` until it holds or `timeout` passes; returns whether it held.
bool Eventually(const std::function<bool()>& pred, std::chrono::seconds timeout = 60s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return pred();
}

std::unique_ptr<client::RestClient> ClientFor(const std::string& kubeconfig) {
  auto config = client::LoadRestConfig(kubeconfig);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  auto rest = client::RestClient::ForConfig(*config);
  EXPECT_TRUE(rest.ok()) << rest.status().ToString();
  return std::move(*rest);
}

// A running in-process kubelet.
class KubeletRunner {
 public:
  KubeletRunner(client::RestClient* client, kubelet::KubeletOptions o) {
    o.client = client;
    kubelet_ = std::make_unique<kubelet::Kubelet>(o);
    thread_ = std::jthread([this] { status_ = kubelet_->Run(stop_.get_token()); });
  }
  ~KubeletRunner() {
    stop_.request_stop();
    thread_.join();
  }
  kubelet::Kubelet& operator*() { return *kubelet_; }
  kubelet::Kubelet* operator->() { return kubelet_.get(); }

 private:
  std::unique_ptr<kubelet::Kubelet> kubelet_;
  std::stop_source stop_;
  util::Status status_;
  std::jthread thread_;
};

class KubeletIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new testing::ServerProcess();
    ASSERT_TRUE(server_->Start());
    cache_ = new testing::TempDir();
    client_ = ClientFor(server_->kubeconfig_path()).release();
    kubelet::KubeletOptions o;
    o.nodes = 3;
    o.node_prefix = "sim";
    o.listen = "127.0.0.1:0";
    // Renewed well within the node lifecycle test's grace period, so that only the node whose
    // heartbeats are paused goes Unknown there.
    o.lease_renew_interval = 1s;
    kubelet_ = new KubeletRunner(client_, o);
    std::stop_source never;
    ASSERT_TRUE((*kubelet_)->WaitReady(never.get_token()));
  }
  static void TearDownTestSuite() {
    delete kubelet_;
    delete client_;
    delete server_;
    delete cache_;
  }

  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ns_ = "k-";
    for (char c : name) {
      ns_ += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    }
    ns_ = ns_.substr(0, 50);
    auto created =
        client_->Create(kNamespaces, "",
                        api::Object(json::object{{"apiVersion", "v1"},
                                                 {"kind", "Namespace"},
                                                 {"metadata", json::object{{"name", ns_}}}}));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    kubectl_ = std::make_unique<Kubectl>(server_->kubeconfig_path(), cache_->path());
  }

  CommandResult K(std::vector<std::string> args) {
    args.insert(args.begin(), {"-n", ns_});
    return kubectl_->Run(args);
  }

  // A pod bound to `node`; `containers` are (name, image); `extra` edits the object.
  api::Object Pod(const std::string& name, const std::string& node,
                  std::vector<std::pair<std::string, std::string>> containers = {{"web",
                                                                                  "nginx:1.27"}},
                  std::map<std::string, std::string> annotations = {},
                  std::function<void(json::object&)> extra = {}) {
    json::array cs;
    for (const auto& [n, image] : containers)
      cs.push_back(json::object{{"name", n}, {"image", image}});
    json::object meta{{"name", name}, {"namespace", ns_}};
    if (!annotations.empty()) {
      json::object a;
      for (const auto& [k, v] : annotations) a[k] = v;
      meta["annotations"] = std::move(a);
    }
    json::object doc{{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", std::move(meta)},
                     {"spec", json::object{{"nodeName", node}, {"containers", std::move(cs)}}}};
    if (extra) extra(doc);
    return api::Object(std::move(doc));
  }

  api::Object Create(const api::Object& pod) {
    auto r = client_->Create(kPods, ns_, pod);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : api::Object();
  }

  std::optional<api::Object> GetPod(const std::string& name) {
    auto r = client_->Get(kPods, {ns_, name});
    if (!r.ok()) return std::nullopt;
    return *r;
  }

  static std::string Condition(const api::Object& obj, std::string_view type) {
    if (const json::array* conds = api::FindArray(obj.doc(), {"status", "conditions"})) {
      for (const json::value& c : *conds) {
        if (api::Object::GetString(c.as_object(), "type") == type) {
          return std::string(api::Object::GetString(c.as_object(), "status"));
        }
      }
    }
    return "";
  }
  static bool RunningAndReady(const api::Object& pod) {
    return api::FindString(pod.doc(), {"status", "phase"}) == "Running" &&
           Condition(pod, "Ready") == "True";
  }
  bool WaitPod(const std::string& name, const std::function<bool(const api::Object&)>& pred,
               std::chrono::seconds timeout = 60s) {
    return Eventually(
        [&] {
          auto p = GetPod(name);
          return p && pred(*p);
        },
        timeout);
  }

  // Reasons of the events about pod `name`, with source component and host.
  std::vector<json::object> Events(const std::string& name) {
    client::ListOptions lo;
    lo.field_selector = "involvedObject.name=" + name;
    auto list = client_->List(kEvents, ns_, lo);
    std::vector<json::object> out;
    if (list.ok()) {
      for (const api::Object& e : list->items) out.push_back(e.doc());
    }
    return out;
  }
  std::set<std::string> EventReasons(const std::string& name) {
    std::set<std::string> out;
    for (const json::object& e : Events(name)) out.emplace(api::Object::GetString(e, "reason"));
    return out;
  }

  static testing::ServerProcess* server_;
  static testing::TempDir* cache_;
  static client::RestClient* client_;
  static KubeletRunner* kubelet_;
  std::string ns_;
  std::unique_ptr<Kubectl> kubectl_;
};

testing::ServerProcess* KubeletIntegrationTest::server_ = nullptr;
testing::TempDir* KubeletIntegrationTest::cache_ = nullptr;
client::RestClient* KubeletIntegrationTest::client_ = nullptr;
KubeletRunner* KubeletIntegrationTest::kubelet_ = nullptr;

TEST_F(KubeletIntegrationTest, NodesRegisterWithLeasesAndKubectlSeesThemReady) {
  for (const std::string& name : (*kubelet_)->NodeNames()) {
    auto node = client_->Get(kNodes, {"", name});
    ASSERT_TRUE(node.ok()) << name;
    EXPECT_EQ(Condition(*node, "Ready"), "True");
    EXPECT_EQ(api::FindString(node->doc(), {"status", "nodeInfo", "kubeletVersion"}), "v1.32.0");
    EXPECT_EQ(api::FindInt(node->doc(), {"status", "daemonEndpoints", "kubeletEndpoint", "Port"}),
              (*kubelet_)->port());
    EXPECT_EQ(api::FindString(node->doc(), {"metadata", "labels", "kubernetes.io/hostname"}), name);
    auto lease = client_->Get(kLeases, {"kube-node-lease", name});
    ASSERT_TRUE(lease.ok()) << name;
    EXPECT_EQ(api::FindString(lease->doc(), {"spec", "holderIdentity"}), name);
    EXPECT_EQ(api::FindInt(lease->doc(), {"spec", "leaseDurationSeconds"}), 40);
    const json::array* owners = api::FindArray(lease->doc(), {"metadata", "ownerReferences"});
    ASSERT_TRUE(owners && owners->size() == 1);
    EXPECT_EQ(api::Object::GetString(owners->at(0).as_object(), "uid"), node->uid());
  }
  // Leases are renewed.
  std::string name = (*kubelet_)->NodeNames()[0];
  std::string first(api::FindString(client_->Get(kLeases, {"kube-node-lease", name})->doc(),
                                    {"spec", "renewTime"}));
  EXPECT_TRUE(Eventually(
      [&] {
        auto l = client_->Get(kLeases, {"kube-node-lease", name});
        return l.ok() && api::FindString(l->doc(), {"spec", "renewTime"}) != first;
      },
      30s));

  CommandResult r = kubectl_->Run({"get", "nodes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("sim-0\\s+Ready\\s+<none>\\s+\\S+\\s+v1.32.0")))
      << r.out;
  r = kubectl_->Run({"describe", "node", "sim-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("KubeletReady"));
  EXPECT_THAT(r.out, HasSubstr("kubelet is posting ready status"));
  EXPECT_THAT(r.out, HasSubstr("converge-sim://1.0"));
  EXPECT_TRUE(std::regex_search(r.out, std::regex("HolderIdentity:\\s+sim-1"))) << r.out;
}

TEST_F(KubeletIntegrationTest, PreBoundPodsRunWithDistinctIpsAndEvents) {
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) {
    names.push_back("web-" + std::to_string(i));
    Create(Pod(names.back(), "sim-" + std::to_string(i % 3)));
  }
  std::set<std::string> ips;
  for (const std::string& n : names) {
    ASSERT_TRUE(WaitPod(n, RunningAndReady)) << n;
    api::Object p = *GetPod(n);
    const auto& st = *api::FindObject(p.doc(), {"status"});
    std::string ip(api::Object::GetString(st, "podIP"));
    EXPECT_TRUE(std::regex_match(ip, std::regex("10\\.244\\.[0-2]\\.\\d+"))) << ip;
    ips.insert(ip);
    EXPECT_EQ(api::Object::GetString(st, "hostIP"), "127.0.0.1");
    EXPECT_FALSE(api::Object::GetString(st, "startTime").empty());
    for (const char* c :
         {"PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready", "PodScheduled"}) {
      EXPECT_EQ(Condition(p, c), "True") << n << " " << c;
    }
    const json::object& cs = api::FindArray(st, {"containerStatuses"})->at(0).as_object();
    EXPECT_THAT(std::string(api::Object::GetString(cs, "containerID")),
                HasSubstr("converge-sim://"));
    EXPECT_EQ(api::Object::GetString(cs, "image"), "docker.io/library/nginx:1.27");
    EXPECT_TRUE(api::FindBool(cs, {"ready"}));
  }
  EXPECT_EQ(ips.size(), names.size()) << "pod IPs are distinct";

  // Events along the chain, from the kubelet of the pod's node.
  ASSERT_TRUE(Eventually([&] {
    std::set<std::string> r = EventReasons("web-0");
    return r.count("Pulling") && r.count("Pulled") && r.count("Created") && r.count("Started");
  }));
  for (const json::object& e : Events("web-0")) {
    EXPECT_EQ(api::FindString(e, {"source", "component"}), "kubelet");
    EXPECT_EQ(api::FindString(e, {"source", "host"}), "sim-0");
  }
  CommandResult r = K({"get", "pods", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("web-0\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+10\\.244\\.0\\.\\d+\\s+sim-0")))
      << r.out;
  r = K({"describe", "pod", "web-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("Node:\\s+sim-1/127\\.0\\.0\\.1"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("Container ID:\\s+converge-sim://[0-9a-f]{64}")))
      << r.out;
  EXPECT_THAT(r.out, HasSubstr("Started container web"));
  EXPECT_THAT(r.out, HasSubstr("kubelet"));
}

TEST_F(KubeletIntegrationTest, MissingImageShowsErrImagePullThenImagePullBackOff) {
  Create(Pod("bad", "sim-1", {{"web", "nginx:doesnotexist"}}));
  auto watch = kubectl_->Start({"-n", ns_, "get", "pod", "bad", "-w"});
  ASSERT_TRUE(watch->WaitFor("ImagePullBackOff", 60s)) << watch->out_so_far();
  CommandResult watched = watch->Stop();
  size_t err = watched.out.find("ErrImagePull");
  size_t backoff = watched.out.find("ImagePullBackOff");
  ASSERT_NE(err, std::string::npos) << watched.out;
  EXPECT_LT(err, backoff) << "ErrImagePull comes first:\n" << watched.out;

  CommandResult r = K({"get", "pods"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex("bad\\s+0/1\\s+(ImagePullBackOff|ErrImagePull)\\s+0")))
      << r.out;
  r = K({"describe", "pod", "bad"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Waiting"));
  EXPECT_THAT(r.out, HasSubstr("Failed to pull image \"nginx:doesnotexist\""));
  EXPECT_THAT(r.out, HasSubstr("Error: ErrImagePull"));
  EXPECT_THAT(r.out, HasSubstr("Back-off pulling image \"nginx:doesnotexist\""));
  EXPECT_THAT(r.out, HasSubstr("Error: ImagePullBackOff"));

  // Logs of a container that never started: the kubelet's answer, through the proxy.
  r = K({"logs", "bad"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("is waiting to start"));
}

TEST_F(KubeletIntegrationTest, LogsFollowTailAndPrevious) {
  Create(Pod("talker", "sim-2", {{"app", "busybox:1.36"}, {"side", "busybox:1.36"}},
             {{"sim.converge.io/log-interval-seconds", "0.5"},
              {"app.sim.converge.io/crash-after-seconds", "3"}}));
  ASSERT_TRUE(WaitPod("talker", [](const api::Object& p) {
    const json::array* cs = api::FindArray(p.doc(), {"status", "containerStatuses"});
    return cs && api::FindInt(cs->at(0).as_object(), {"restartCount"}) >= 1 &&
           api::FindObject(cs->at(0).as_object(), {"state", "running"});
  })) << "the app container crashed once and runs again";

  CommandResult r = K({"logs", "talker", "-c", "app"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("converge-sim: container app started (image busybox:1.36, run 2)"));
  r = K({"logs", "talker", "-c", "app", "--previous"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("started (image busybox:1.36, run 1)"));
  EXPECT_THAT(r.out, HasSubstr("converge-sim: container app exiting with code 1"));
  r = K({"logs", "talker", "-c", "side", "--tail=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("running for"));
  r = K({"logs", "talker", "-c", "side", "--tail=1", "--timestamps"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(
      std::regex_match(r.out, std::regex("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{9}Z "
                                         "converge-sim: container side running for .*\n")))
      << r.out;
  r = K({"logs", "talker", "-c", "nosuch"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("container nosuch is not valid for pod talker"));

  // -f streams new lines as they are written, and ends when the container exits (it crashes
  // every 3 s).
  auto follow = kubectl_->Start({"-n", ns_, "logs", "-f", "talker", "-c", "app"});
  ASSERT_TRUE(follow->WaitFor("running for 1.5s", 30s)) << follow->out_so_far();
  ASSERT_TRUE(follow->WaitFor("exiting with code 1", 30s)) << follow->out_so_far();
  CommandResult followed = follow->Stop();
  EXPECT_THAT(followed.out, HasSubstr("started (image busybox:1.36"));
}

TEST_F(KubeletIntegrationTest, JobPodSucceedsAfterAboutASecond) {
  Create(Pod("job-pod", "sim-0", {{"work", "busybox:1.36"}}, {}, [](json::object& doc) {
    doc["metadata"].as_object()["ownerReferences"] =
        json::array{json::object{{"apiVersion", "batch/v1"},
                                 {"kind", "Job"},
                                 {"name", "job"},
                                 {"uid", "0b6d3c5e-0000-4000-8000-000000000001"},
                                 {"controller", true}}};
    doc["spec"].as_object()["restartPolicy"] = "Never";
  }));
  ASSERT_TRUE(WaitPod("job-pod", [](const api::Object& p) {
    return api::FindString(p.doc(), {"status", "phase"}) == "Succeeded";
  }));
  api::Object p = *GetPod("job-pod");
  const json::object& cs =
      api::FindArray(p.doc(), {"status", "containerStatuses"})->at(0).as_object();
  EXPECT_EQ(api::FindString(cs, {"state", "terminated", "reason"}), "Completed");
  EXPECT_EQ(api::FindInt(cs, {"state", "terminated", "exitCode"}, -1), 0);
  EXPECT_EQ(Condition(p, "Ready"), "False");
  CommandResult r = K({"get", "pod", "job-pod"});
  EXPECT_TRUE(std::regex_search(r.out, std::regex("job-pod\\s+0/1\\s+Completed\\s+0"))) << r.out;
}

TEST_F(KubeletIntegrationTest, GracefulDeletionCompletes) {
  Create(Pod(
      "stubborn", "sim-0", {{"web", "nginx:1.27"}}, {{"sim.converge.io/ignore-sigterm", "true"}},
      [](json::object& doc) { doc["spec"].as_object()["terminationGracePeriodSeconds"] = 3; }));
  Create(Pod("polite", "sim-1"));
  ASSERT_TRUE(WaitPod("stubborn", RunningAndReady));
  ASSERT_TRUE(WaitPod("polite", RunningAndReady));
  CommandResult r = K({"delete", "pod", "stubborn", "polite", "--wait=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The stubborn one is Terminating until its grace period ends, then killed and removed; the
  // polite one exits on SIGTERM.
  auto stubborn = GetPod("stubborn");
  ASSERT_TRUE(stubborn.has_value());
  EXPECT_TRUE(stubborn->being_deleted());
  EXPECT_TRUE(Eventually([&] { return !GetPod("polite"); }, 30s)) << "polite pod removed";
  EXPECT_TRUE(Eventually([&] { return !GetPod("stubborn"); }, 30s)) << "stubborn pod removed";
  std::set<std::string> reasons = EventReasons("stubborn");
  EXPECT_TRUE(reasons.count("Killing"));
}

TEST_F(KubeletIntegrationTest, NodeThatStopsHeartbeatingIsTaintedDrainedAndRecovers) {
  kubelet::KubeletOptions o;
  o.nodes = 2;
  o.node_prefix = "flaky";
  o.first_node_index = 50;
  o.lease_renew_interval = 1s;
  KubeletRunner flaky(client_, o);
  std::stop_source never;
  ASSERT_TRUE(flaky->WaitReady(never.get_token()));

  client::SharedInformerFactory informers({.client = client_});
  controllers::nodelifecycle::NodeLifecycleOptions lo;
  lo.client = client_;
  lo.informers = &informers;
  lo.monitor_period = 500ms;
  lo.health.grace = 5s;  // leases are renewed every second here
  lo.rates.node_eviction_rate = 100;
  client::RestEventSink sink(client_);
  client::EventRecorder node_events({.source = {.component = "node-controller"}, .sink = &sink});
  client::EventRecorder eviction_events(
      {.source = {.component = "taint-eviction-controller"}, .sink = &sink});
  lo.node_recorder = &node_events;
  lo.eviction_recorder = &eviction_events;
  auto controller = controllers::nodelifecycle::NodeLifecycleController::New(lo);
  ASSERT_TRUE(controller.ok()) << controller.status().ToString();
  std::stop_source stop;
  informers.Start(stop.get_token());
  std::jthread recording_node([&] { node_events.Run(stop.get_token()); });
  std::jthread recording_evictions([&] { eviction_events.Run(stop.get_token()); });
  std::jthread running([&] { (*controller)->Run(stop.get_token()); });

  // DefaultTolerationSeconds admission would give it 300 s; 2 s are enough to show the wait.
  Create(Pod("doomed", "flaky-50", {{"web", "nginx:1.27"}}, {}, [](json::object& doc) {
    doc["spec"].as_object()["tolerations"] =
        json::array{json::object{{"key", "node.kubernetes.io/unreachable"},
                                 {"operator", "Exists"},
                                 {"effect", "NoExecute"},
                                 {"tolerationSeconds", 2}}};
  }));
  Create(Pod("tolerant", "flaky-50", {{"web", "nginx:1.27"}}, {}, [](json::object& doc) {
    doc["spec"].as_object()["tolerations"] =
        json::array{json::object{{"key", "node.kubernetes.io/unreachable"},
                                 {"operator", "Exists"},
                                 {"effect", "NoExecute"}}};
  }));
  ASSERT_TRUE(WaitPod("doomed", RunningAndReady));
  ASSERT_TRUE(WaitPod("tolerant", RunningAndReady));

  flaky->PauseHeartbeats("flaky-50");
  auto has_taint = [&](std::string_view key, std::string_view effect) {
    auto node = client_->Get(kNodes, {"", "flaky-50"});
    if (!node.ok()) return false;
    if (const json::array* taints = api::FindArray(node->doc(), {"spec", "taints"})) {
      for (const json::value& t : *taints) {
        if (api::Object::GetString(t.as_object(), "key") == key &&
            api::Object::GetString(t.as_object(), "effect") == effect) {
          return true;
        }
      }
    }
    return false;
  };
  ASSERT_TRUE(Eventually([&] {
    auto node = client_->Get(kNodes, {"", "flaky-50"});
    return node.ok() && Condition(*node, "Ready") == "Unknown";
  })) << "Ready=Unknown after the grace period";
  auto node = client_->Get(kNodes, {"", "flaky-50"});
  ASSERT_TRUE(node.ok());
  for (const json::value& c : *api::FindArray(node->doc(), {"status", "conditions"})) {
    if (api::Object::GetString(c.as_object(), "type") == "Ready") {
      EXPECT_EQ(api::Object::GetString(c.as_object(), "reason"), "NodeStatusUnknown");
      EXPECT_EQ(api::Object::GetString(c.as_object(), "message"),
                "Kubelet stopped posting node status.");
    }
  }
  EXPECT_TRUE(Eventually([&] { return has_taint("node.kubernetes.io/unreachable", "NoExecute"); }));
  EXPECT_TRUE(has_taint("node.kubernetes.io/unreachable", "NoSchedule"));
  // The pod whose toleration runs out (2 s) is evicted; the one tolerating forever stays.
  EXPECT_TRUE(Eventually([&] {
    auto p = GetPod("doomed");
    return !p || p->being_deleted();
  })) << "doomed pod evicted";
  EXPECT_TRUE(Eventually([&] { return EventReasons("doomed").count("TaintManagerEviction") > 0; }));
  auto tolerant = GetPod("tolerant");
  ASSERT_TRUE(tolerant.has_value());
  EXPECT_FALSE(tolerant->being_deleted());
  // The other node never stopped.
  auto other = client_->Get(kNodes, {"", "flaky-51"});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(Condition(*other, "Ready"), "True");

  flaky->ResumeHeartbeats("flaky-50");
  EXPECT_TRUE(Eventually([&] {
    auto n = client_->Get(kNodes, {"", "flaky-50"});
    return n.ok() && Condition(*n, "Ready") == "True" &&
           !has_taint("node.kubernetes.io/unreachable", "NoExecute") &&
           !has_taint("node.kubernetes.io/unreachable", "NoSchedule");
  })) << "untainted once it heartbeats again";
  stop.request_stop();
  running.join();
  recording_node.join();
  recording_evictions.join();
  informers.Shutdown();
}

TEST_F(KubeletIntegrationTest, KubeletAsAProcess) {
  testing::Process proc;
  ASSERT_TRUE(proc.Start({CONVERGE_BINARY, "kubelet", "--kubeconfig", server_->kubeconfig_path(),
                          "--nodes", "2", "--node-prefix", "proc", "--first-node-index", "100"},
                         server_->data_dir() + "/kubelet-process.log"));
  ASSERT_TRUE(Eventually([&] {
    auto n = client_->Get(kNodes, {"", "proc-101"});
    return n.ok() && Condition(*n, "Ready") == "True";
  })) << testing::ReadFile(server_->data_dir() + "/kubelet-process.log");
  Create(Pod("remote", "proc-101", {{"web", "nginx:1.27"}},
             {{"sim.converge.io/log-interval-seconds", "1"}}));
  ASSERT_TRUE(WaitPod("remote", RunningAndReady));
  EXPECT_TRUE(
      api::FindString(GetPod("remote")->doc(), {"status", "podIP"}).starts_with("10.244.101."));
  ASSERT_TRUE(Eventually(
      [&] {
        CommandResult r = K({"logs", "remote"});
        return r.exit_code == 0 && r.out.find("running for 1s") != std::string::npos;
      },
      30s));
  proc.Stop();
}

}  // namespace
}  // namespace converge
