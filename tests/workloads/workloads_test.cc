// ReplicaSets and Deployments against a live server, observed through the real kubectl and a pod
// watch. The controllers run as `converge controller-manager --kubeconfig` (a separate process),
// except in the over-creation test, which runs them in-process behind a transport that delays
// pod watch events. Pod readiness is driven by the test (PodDriver) until simulated kubelets
// exist. No timing assertions: every wait is "until this holds", bounded only to fail a hung
// test.
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "client/transport.h"
#include "controllers/manager/controller_manager.h"
#include "pod_driver.h"
#include "testing/kubectl.h"
#include "testing/server.h"

namespace converge::workloads_test {
namespace {

namespace json = boost::json;
using testing::CommandResult;
using testing::Kubectl;
using testing::Process;
using testing::ServerProcess;
using testing::TempDir;

// Polls `pred` until it holds; false after `limit` (a hung test, not a timing assertion).
bool Eventually(const std::function<bool()>& pred,
                std::chrono::seconds limit = std::chrono::seconds(90)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

class WorkloadsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start({.command = "apiserver"}));
    cache_ = new TempDir();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete cache_;
  }

  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available()) << "kubectl is not on PATH";
    kubectl_ = std::make_unique<Kubectl>(server_->kubeconfig_path(), cache_->path());
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ns_ = "wl-";
    for (char c : name) {
      ns_ += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    }
    ns_ = ns_.substr(0, 60);
    CommandResult r = kubectl_->Run({"create", "namespace", ns_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  void TearDown() override {
    driver_.reset();
    if (manager_.Running()) manager_.Stop();
  }

  // Starts `converge controller-manager` against the server (replicaset + deployment).
  void StartControllerManager() {
    ASSERT_TRUE(manager_.Start(
        {CONVERGE_BINARY, "controller-manager", "--kubeconfig", server_->kubeconfig_path(),
         "--leader-elect=false", "--controllers", "replicaset,deployment"},
        server_->data_dir() + "/controller-manager-" + ns_ + ".log"));
  }

  void StartPodDriver(std::function<void(const LivePods&)> on_event = {}, bool ready = true) {
    driver_ = std::make_unique<PodDriver>(PodDriverOptions{.kubeconfig = server_->kubeconfig(),
                                                           .ns = ns_,
                                                           .make_ready = ready,
                                                           .on_event = std::move(on_event)});
    driver_->Start();
  }

  CommandResult K(std::vector<std::string> args, const std::string& stdin_data = "") {
    args.insert(args.begin(), {"-n", ns_});
    return kubectl_->Run(args, stdin_data);
  }
  std::string Get(const std::string& what, const std::string& jsonpath) {
    CommandResult r = K({"get", what, "-o", "jsonpath=" + jsonpath});
    return r.exit_code == 0 ? r.out : "<error: " + r.err + ">";
  }
  // Number of live pods, ready ones, and pods per image.
  size_t LiveCount() { return driver_->Live().size(); }
  size_t ReadyCount() {
    size_t n = 0;
    for (const auto& [name, p] : driver_->Live()) n += p.ready;
    return n;
  }
  bool AllLiveRun(const std::string& image, size_t count) {
    LivePods live = driver_->Live();
    if (live.size() != count) return false;
    for (const auto& [name, p] : live) {
      if (p.image != image || !p.ready) return false;
    }
    return true;
  }

  std::string DeploymentYaml(const std::string& name, int replicas, const std::string& image,
                             const std::string& strategy_yaml) {
    return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name +
           "\nspec:\n  replicas: " + std::to_string(replicas) +
           "\n  selector:\n    matchLabels:\n      app: " + name + "\n" + strategy_yaml +
           "  template:\n    metadata:\n      labels:\n        app: " + name +
           "\n    spec:\n      containers:\n      - name: c\n        image: " + image + "\n";
  }

  // spec.replicas of every ReplicaSet, sorted.
  std::vector<int> ReplicaSetSizes() {
    std::vector<int> out;
    std::stringstream ss(Get("rs", "{range .items[*]}{.spec.replicas} {end}"));
    for (int n; ss >> n;) out.push_back(n);
    std::sort(out.begin(), out.end());
    return out;
  }

  CommandResult RolloutStatus(const std::string& deployment) {
    return K({"rollout", "status", "deployment/" + deployment, "--timeout=120s"});
  }

  static ServerProcess* server_;
  static TempDir* cache_;
  std::unique_ptr<Kubectl> kubectl_;
  std::string ns_;
  Process manager_;
  std::unique_ptr<PodDriver> driver_;
};

ServerProcess* WorkloadsTest::server_ = nullptr;
TempDir* WorkloadsTest::cache_ = nullptr;

TEST_F(WorkloadsTest, ScaleOneToThreeToZero) {
  StartPodDriver();
  StartControllerManager();
  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1", "--replicas=1"}).exit_code, 0);
  CommandResult st = RolloutStatus("web");
  ASSERT_EQ(st.exit_code, 0) << st.out << st.err;
  EXPECT_NE(st.out.find("successfully rolled out"), std::string::npos) << st.out;
  ASSERT_TRUE(Eventually([&] { return AllLiveRun("nginx:1", 1); }));

  // The chain: Deployment → ReplicaSet web-<hash> (pod-template-hash) → pod.
  std::string hash = Get("rs", "{.items[0].metadata.labels.pod-template-hash}");
  ASSERT_FALSE(hash.empty());
  EXPECT_EQ(Get("rs", "{.items[0].metadata.name}"), "web-" + hash);
  EXPECT_EQ(Get("rs", "{.items[0].metadata.ownerReferences[0].kind}"), "Deployment");
  EXPECT_EQ(driver_->Live().begin()->second.rs, "web-" + hash);
  EXPECT_EQ(Get("deployment/web", "{.metadata.annotations.deployment\\.kubernetes\\.io/revision}"),
            "1")
      << K({"get", "deployment/web", "-o", "yaml"}).out;

  ASSERT_EQ(K({"scale", "deployment/web", "--replicas=3"}).exit_code, 0);
  ASSERT_EQ(RolloutStatus("web").exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return AllLiveRun("nginx:1", 3); }));
  ASSERT_TRUE(Eventually([&] {
    return Get("deployment/web",
               "{.status.availableReplicas}/{.status.readyReplicas}/"
               "{.status.updatedReplicas}/{.status.observedGeneration}") == "3/3/3/2";
  })) << Get("deployment/web", "{.status}");
  EXPECT_EQ(Get("rs/web-" + hash, "{.status.availableReplicas}"), "3");

  ASSERT_EQ(K({"scale", "deployment/web", "--replicas=0"}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return LiveCount() == 0; }));
  ASSERT_TRUE(Eventually([&] {
    return Get("deployment/web", "{.status.replicas}|{.status.observedGeneration}") == "|3";
  })) << Get("deployment/web", "{.status}");
  EXPECT_EQ(Get("rs/web-" + hash, "{.spec.replicas}"), "0");
  EXPECT_EQ(RolloutStatus("web").exit_code, 0);

  // What the controllers did is in the events.
  CommandResult ev = K({"get", "events", "-o", "custom-columns=REASON:.reason,MSG:.message"});
  EXPECT_NE(ev.out.find("Scaled up replica set web-" + hash + " from 1 to 3"), std::string::npos)
      << ev.out;
  EXPECT_NE(ev.out.find("Scaled down replica set web-" + hash + " from 3 to 0"), std::string::npos)
      << ev.out;
  EXPECT_NE(ev.out.find("SuccessfulCreate"), std::string::npos) << ev.out;
  EXPECT_NE(ev.out.find("SuccessfulDelete"), std::string::npos) << ev.out;
}

TEST_F(WorkloadsTest, RollingUpdateStaysWithinSurgeAndUnavailableAtEveryInstant) {
  constexpr size_t kReplicas = 6, kSurge = 2, kUnavailable = 1;
  // Shared with the driver's thread, which may outlive this function's frame until TearDown.
  struct Observed {
    std::mutex mu;
    bool checking = false;
    std::vector<std::string> violations;
    size_t max_total = 0, min_ready = kReplicas;
  };
  auto obs = std::make_shared<Observed>();
  StartPodDriver([obs](const LivePods& live) {
    size_t ready = 0;
    for (const auto& [name, p] : live) ready += p.ready;
    std::lock_guard lock(obs->mu);
    if (!obs->checking) return;
    obs->max_total = std::max(obs->max_total, live.size());
    obs->min_ready = std::min(obs->min_ready, ready);
    if (live.size() > kReplicas + kSurge || ready < kReplicas - kUnavailable) {
      obs->violations.push_back(std::to_string(live.size()) + " pods, " + std::to_string(ready) +
                                " ready");
    }
  });
  StartControllerManager();
  ASSERT_EQ(K({"apply", "-f", "-"},
              DeploymentYaml("web", kReplicas, "nginx:1",
                             "  strategy:\n    type: RollingUpdate\n    rollingUpdate:\n"
                             "      maxSurge: 2\n      maxUnavailable: 1\n"))
                .exit_code,
            0);
  ASSERT_EQ(RolloutStatus("web").exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return AllLiveRun("nginx:1", kReplicas); }));

  {
    std::lock_guard lock(obs->mu);
    obs->checking = true;
  }
  ASSERT_EQ(K({"set", "image", "deployment/web", "c=nginx:2"}).exit_code, 0);
  CommandResult st = RolloutStatus("web");
  ASSERT_EQ(st.exit_code, 0) << st.out << st.err;
  EXPECT_NE(st.out.find("successfully rolled out"), std::string::npos) << st.out;
  ASSERT_TRUE(Eventually([&] { return AllLiveRun("nginx:2", kReplicas); }));
  {
    std::lock_guard lock(obs->mu);
    obs->checking = false;
    EXPECT_TRUE(obs->violations.empty())
        << obs->violations.size() << " violations, first: " << obs->violations.front();
    // The rollout did use its room (a controller that never surged would pass trivially).
    EXPECT_GT(obs->max_total, kReplicas);
    EXPECT_LE(obs->max_total, kReplicas + kSurge);
    EXPECT_GE(obs->min_ready, kReplicas - kUnavailable);
  }
  EXPECT_GT(driver_->events(), 0);
  // Two ReplicaSets: the old one scaled to zero, kept as history.
  EXPECT_EQ(ReplicaSetSizes(), (std::vector<int>{0, 6}));
  EXPECT_EQ(Get("deployment/web", "{.metadata.annotations.deployment\\.kubernetes\\.io/revision}"),
            "2");
  CommandResult hist = K({"rollout", "history", "deployment/web"});
  EXPECT_EQ(hist.exit_code, 0) << hist.err;
  EXPECT_TRUE(std::regex_search(hist.out, std::regex("\\n1 +<none>"))) << hist.out;
  EXPECT_TRUE(std::regex_search(hist.out, std::regex("\\n2 +<none>"))) << hist.out;
  EXPECT_EQ(Get("deployment/web", "{.status.conditions[?(@.type==\"Progressing\")].reason}"),
            "NewReplicaSetAvailable");
  EXPECT_EQ(Get("deployment/web", "{.status.conditions[?(@.type==\"Available\")].status}"), "True");
}

TEST_F(WorkloadsTest, RolloutUndoGoesBackToThePreviousTemplate) {
  StartPodDriver();
  StartControllerManager();
  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1", "--replicas=2"}).exit_code, 0);
  ASSERT_EQ(RolloutStatus("web").exit_code, 0);
  std::string first_rs = Get("rs", "{.items[0].metadata.name}");
  ASSERT_EQ(K({"set", "image", "deployment/web", "nginx=nginx:2"}).exit_code, 0);
  ASSERT_EQ(RolloutStatus("web").exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return AllLiveRun("nginx:2", 2); }));

  CommandResult undo = K({"rollout", "undo", "deployment/web"});
  ASSERT_EQ(undo.exit_code, 0) << undo.err;
  EXPECT_NE(undo.out.find("rolled back"), std::string::npos) << undo.out;
  CommandResult st = RolloutStatus("web");
  ASSERT_EQ(st.exit_code, 0) << st.out << st.err;
  ASSERT_TRUE(Eventually([&] { return AllLiveRun("nginx:1", 2); }));
  // The first ReplicaSet is the new one again, with the next revision; it remembers revision 1.
  for (const auto& [name, p] : driver_->Live()) EXPECT_EQ(p.rs, first_rs);
  EXPECT_EQ(Get("rs/" + first_rs,
                "{.metadata.annotations.deployment\\.kubernetes\\.io/revision}|"
                "{.metadata.annotations.deployment\\.kubernetes\\.io/revision-history}"),
            "3|1");
  EXPECT_EQ(ReplicaSetSizes(), (std::vector<int>{0, 2})) << "one ReplicaSet has every replica";
  CommandResult hist = K({"rollout", "history", "deployment/web"});
  EXPECT_TRUE(std::regex_search(hist.out, std::regex("\\n2 +<none>"))) << hist.out;
  EXPECT_TRUE(std::regex_search(hist.out, std::regex("\\n3 +<none>"))) << hist.out;
  EXPECT_FALSE(std::regex_search(hist.out, std::regex("\\n1 +<none>"))) << hist.out;
  CommandResult ev = K({"get", "events", "--field-selector", "involvedObject.kind=Deployment"});
  EXPECT_NE(ev.out.find("ScalingReplicaSet"), std::string::npos) << ev.out;
}

TEST_F(WorkloadsTest, PauseHoldsTheRolloutAndResumeFinishesIt) {
  StartPodDriver();
  StartControllerManager();
  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1", "--replicas=2"}).exit_code, 0);
  ASSERT_EQ(RolloutStatus("web").exit_code, 0);
  ASSERT_EQ(K({"rollout", "pause", "deployment/web"}).exit_code, 0);
  ASSERT_EQ(K({"set", "image", "deployment/web", "nginx=nginx:2"}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] {
    return Get("deployment/web", "{.status.conditions[?(@.type==\"Progressing\")].reason}") ==
           "DeploymentPaused";
  }));
  // Paused: the generation is observed, but no new ReplicaSet exists.
  ASSERT_TRUE(Eventually([&] {
    return Get("deployment/web", "{.status.observedGeneration}") ==
           Get("deployment/web", "{.metadata.generation}");
  }));
  EXPECT_EQ(Get("rs", "{range .items[*]}{.metadata.name} {end}"),
            Get("rs", "{.items[0].metadata.name}") + " ");
  ASSERT_EQ(K({"rollout", "resume", "deployment/web"}).exit_code, 0);
  ASSERT_EQ(RolloutStatus("web").exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return AllLiveRun("nginx:2", 2); }));
}

// A transport that holds back every chunk of pod watch streams for `delay` (the informer's pod
// cache lags the server by that much) and, optionally, slows pod creation down so that a sync
// creating many pods takes a while. Everything else passes straight through.
class LaggingTransport final : public client::Transport {
 public:
  LaggingTransport(std::shared_ptr<client::Transport> inner, std::chrono::milliseconds delay,
                   std::chrono::milliseconds create_delay)
      : inner_(std::move(inner)), delay_(delay), create_delay_(create_delay) {}

  util::StatusOr<client::HttpResponse> Do(client::HttpRequest r) override {
    if (r.method == "POST" && r.path.ends_with("/pods")) {
      std::this_thread::sleep_for(create_delay_);
    }
    return inner_->Do(std::move(r));
  }

  util::StatusOr<client::StreamedResponse> Stream(client::HttpRequest r) override {
    bool pods = r.path.ends_with("/pods");
    auto stream = std::make_unique<DelayedStream>(delay_);
    if (pods) {
      // Our own stop, so that the reader thread can always be ended (see ~DelayedStream).
      stream->Link(r.stop);
      r.stop = stream->token();
    }
    CONVERGE_ASSIGN_OR_RETURN(client::StreamedResponse resp, inner_->Stream(std::move(r)));
    if (!pods) return resp;
    stream->Begin(std::move(resp.body));
    resp.body = std::move(stream);
    return resp;
  }

 private:
  class DelayedStream final : public client::ResponseStream {
   public:
    explicit DelayedStream(std::chrono::milliseconds delay) : delay_(delay) {}
    ~DelayedStream() override {
      stop_.request_stop();
      if (reader_.joinable()) reader_.join();
    }
    void Link(std::stop_token outer) {
      link_.emplace(outer, [this] { stop_.request_stop(); });
    }
    std::stop_token token() { return stop_.get_token(); }
    void Begin(std::unique_ptr<client::ResponseStream> inner) {
      inner_ = std::move(inner);
      reader_ = std::thread([this] {
        while (true) {
          std::vector<std::shared_ptr<const std::string>> chunks;
          util::StatusOr<bool> more = inner_->Read(&chunks);
          std::lock_guard lock(mu_);
          auto due = std::chrono::steady_clock::now() + delay_;
          for (auto& c : chunks) queue_.push_back({due, std::move(c)});
          if (!more.ok() || !*more) {
            end_ = more.ok() ? util::Status() : more.status();
            ended_ = true;
            cv_.notify_all();
            return;
          }
          cv_.notify_all();
        }
      });
    }
    util::StatusOr<bool> Read(std::vector<std::shared_ptr<const std::string>>* out) override {
      std::unique_lock lock(mu_);
      while (true) {
        if (!queue_.empty()) {
          auto due = queue_.front().first;
          if (std::chrono::steady_clock::now() >= due) {
            while (!queue_.empty() && queue_.front().first <= std::chrono::steady_clock::now()) {
              out->push_back(std::move(queue_.front().second));
              queue_.pop_front();
            }
            return true;
          }
          cv_.wait_until(lock, due);
          continue;
        }
        if (ended_) {
          if (!end_.ok()) return end_;
          return false;
        }
        cv_.wait(lock);
      }
    }

   private:
    const std::chrono::milliseconds delay_;
    std::stop_source stop_;
    std::optional<std::stop_callback<std::function<void()>>> link_;
    std::unique_ptr<client::ResponseStream> inner_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::pair<std::chrono::steady_clock::time_point,
                         std::shared_ptr<const std::string>>>
        queue_;           // guarded by mu_
    bool ended_ = false;  // guarded by mu_
    util::Status end_;    // guarded by mu_
    std::thread reader_;
  };

  std::shared_ptr<client::Transport> inner_;
  const std::chrono::milliseconds delay_;
  const std::chrono::milliseconds create_delay_;
};

// The ReplicaSet controller in this process, reading pods through a lagging watch.
class InProcessControllers {
 public:
  explicit InProcessControllers(const std::string& kubeconfig) {
    auto config = client::LoadRestConfig(kubeconfig);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    auto inner = client::NewTransportForConfig(*config);
    EXPECT_TRUE(inner.ok()) << inner.status().ToString();
    transport_ = std::make_shared<LaggingTransport>(*inner, std::chrono::seconds(2),
                                                    std::chrono::milliseconds(100));
    client_ =
        std::make_unique<client::RestClient>(client::RestClientOptions{.transport = transport_});
    controllers::ControllerManagerOptions o;
    o.client = client_.get();
    o.controllers = {"replicaset"};
    o.leader_elect = false;
    manager_ = std::make_unique<controllers::ControllerManager>(o);
    thread_ = std::thread([this] { result_ = manager_->Run(stop_.get_token()); });
  }
  // Stops the controllers (a sync in flight stops sending creates) and waits for them.
  ~InProcessControllers() {
    stop_.request_stop();
    thread_.join();
    manager_.reset();
  }

 private:
  std::shared_ptr<LaggingTransport> transport_;
  std::unique_ptr<client::RestClient> client_;
  std::unique_ptr<controllers::ControllerManager> manager_;
  std::stop_source stop_;
  util::Status result_;
  std::thread thread_;
};

TEST_F(WorkloadsTest, NoOverCreationWithLaggingPodEventsAndARestartMidSync) {
  constexpr size_t kReplicas = 30;
  struct Observed {
    std::mutex mu;
    size_t allowed = kReplicas;
    std::vector<std::string> violations;
  };
  auto obs = std::make_shared<Observed>();
  StartPodDriver(
      [obs](const LivePods& live) {
        std::lock_guard lock(obs->mu);
        if (live.size() > obs->allowed) {
          obs->violations.push_back(std::to_string(live.size()) + " live pods, allowed " +
                                    std::to_string(obs->allowed));
        }
      },
      /*ready=*/false);
  auto controllers = std::make_unique<InProcessControllers>(server_->kubeconfig_path());
  std::string rs =
      "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web\nspec:\n  replicas: " +
      std::to_string(kReplicas) +
      "\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n"
      "      labels:\n        app: web\n    spec:\n      containers:\n      - name: c\n"
      "        image: nginx\n";
  ASSERT_EQ(K({"apply", "-f", "-"}, rs).exit_code, 0);
  // Mid-sync: some pods exist, more are being created (slow start, creates slowed down).
  ASSERT_TRUE(Eventually([&] { return LiveCount() >= 3; }));
  controllers.reset();
  size_t at_restart = LiveCount();
  controllers = std::make_unique<InProcessControllers>(server_->kubeconfig_path());
  ASSERT_TRUE(Eventually([&] { return LiveCount() == kReplicas; }));
  EXPECT_LT(at_restart, kReplicas) << "the restart did not land mid-sync";
  // The lagging watch keeps waking the controller with a stale pod cache for a while (its own
  // status writes, the delayed pod events): nothing more may be created. Wait until every pod
  // event reached the controller, as the status it writes says.
  ASSERT_TRUE(Eventually([&] { return Get("rs/web", "{.status.replicas}") == "30"; }));

  // Down to 10, restarted again while deleting, then up to 20: never more than asked for.
  ASSERT_EQ(K({"scale", "rs/web", "--replicas=10"}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return LiveCount() <= 20; }));
  controllers.reset();
  controllers = std::make_unique<InProcessControllers>(server_->kubeconfig_path());
  ASSERT_TRUE(Eventually([&] { return LiveCount() == 10; }));
  {
    std::lock_guard lock(obs->mu);
    obs->allowed = 20;
  }
  ASSERT_EQ(K({"scale", "rs/web", "--replicas=20"}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return LiveCount() >= 12; }));
  controllers.reset();
  controllers = std::make_unique<InProcessControllers>(server_->kubeconfig_path());
  ASSERT_TRUE(Eventually([&] { return LiveCount() == 20; }));
  ASSERT_TRUE(Eventually([&] { return Get("rs/web", "{.status.replicas}") == "20"; }));
  controllers.reset();
  std::lock_guard lock(obs->mu);
  EXPECT_TRUE(obs->violations.empty())
      << obs->violations.size() << " violations, first: " << obs->violations.front();
  EXPECT_EQ(driver_->MaxLive(), kReplicas);
}

}  // namespace
}  // namespace converge::workloads_test
