// The system split into processes (issue #8): `converge apiserver`, two `converge
// controller-manager`s (one leads through the kube-system/kube-controller-manager Lease),
// `converge scheduler` and `converge kubelet --nodes 3`, driven through the walkthrough with the
// real kubectl while components are killed (-9) and restarted: the leader (the standby takes
// over; nothing is created twice), the scheduler, the kubelet, and the API server itself
// (restarted on the same data dir and port). The ConvergenceChecker watches throughout.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <set>
#include <thread>

#include "testing/convergence_checker.h"
#include "testing/kubectl.h"
#include "testing/server.h"

namespace converge {
namespace {

using testing::CommandResult;
using testing::ConvergenceChecker;
using testing::Kubectl;
using testing::Process;
using testing::RunCommand;
using testing::ServerProcess;
using testing::TempDir;

// A loopback port nobody listens on now (the API server must keep it across restarts, so that
// the components' kubeconfig stays right).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(a.sin_port);
}

// Leader election of the controller-managers and the scheduler, shortened from upstream's 15s /
// 10s / 2s so that a killed leader's successor (the standby controller-manager, the restarted
// scheduler) takes over ~5 s after the kill instead of ~17 s. The renew deadline (4 s) still
// outlasts the API server's restart below, or the scheduler, alone, would exit (lost lease).
const std::vector<std::string> kLeaderElectionFlags = {"--leader-elect-lease-duration", "5s",
                                                       "--leader-elect-renew-deadline", "4s",
                                                       "--leader-elect-retry-period",   "500ms"};

class SplitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available());
    int port = FreePort();
    ASSERT_NE(port, 0);
    server_options_ = {.command = "apiserver", .listen = "127.0.0.1:" + std::to_string(port)};
    ASSERT_TRUE(server_.Start(server_options_));
    server_options_.data_dir = server_.data_dir();
    kubeconfig_ = server_.kubeconfig_path();
    kubectl_ = std::make_unique<Kubectl>(kubeconfig_, cache_.path());
  }

  // Starts `converge <args...> --kubeconfig <admin kubeconfig>`, logging to logs_/<name>.log.
  void StartComponent(Process* p, const std::string& name, std::vector<std::string> args) {
    std::vector<std::string> argv = {CONVERGE_BINARY};
    for (auto& a : args) argv.push_back(std::move(a));
    argv.push_back("--kubeconfig");
    argv.push_back(kubeconfig_);
    ASSERT_TRUE(p->Start(argv, Log(name)));
  }
  std::string Log(const std::string& name) const { return logs_.path() + "/" + name + ".log"; }

  CommandResult K(const std::vector<std::string>& args) { return kubectl_->Run(args); }

  // A component's args followed by kLeaderElectionFlags.
  static std::vector<std::string> Elected(std::vector<std::string> args) {
    args.insert(args.end(), kLeaderElectionFlags.begin(), kLeaderElectionFlags.end());
    return args;
  }
  // spec.leaseDurationSeconds of the Lease kube-system/<name>.
  std::string LeaseDurationSeconds(const std::string& name) {
    return K({"get", "lease", name, "-n", "kube-system", "-o",
              "jsonpath={.spec.leaseDurationSeconds}"})
        .out;
  }

  // The holder of the Lease kube-system/<name>, "" until there is one.
  std::string LeaseHolder(const std::string& name = "kube-controller-manager") {
    CommandResult r =
        K({"get", "lease", name, "-n", "kube-system", "-o", "jsonpath={.spec.holderIdentity}"});
    return r.exit_code == 0 ? r.out : "";
  }
  // Waits until the Lease is held by someone other than `not_holder`.
  std::string WaitForLeader(const std::string& not_holder) {
    for (int i = 0; i < 600; ++i) {
      std::string h = LeaseHolder();
      if (!h.empty() && h != not_holder) return h;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "no controller-manager other than '" << not_holder << "' took the lease";
    return "";
  }
  // Which controller-manager (0 or 1) logged that `identity` leads (the log line follows the
  // Lease write: waits for it a while); -1 if none.
  int WhoIs(const std::string& identity) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      for (int i = 0; i < 2; ++i) {
        if (testing::ReadFile(Log("cm-" + std::to_string(i))).find(identity + " is the leader") !=
            std::string::npos) {
          return i;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return -1;
  }
  void ExpectConverged(ConvergenceChecker& checker, const std::string& step) {
    std::string why;
    EXPECT_TRUE(checker.WaitConverged(std::chrono::seconds(180), &why)) << step << ": " << why;
  }

  ServerProcess server_;
  testing::ServerOptions server_options_;
  TempDir cache_;
  TempDir logs_;
  std::string kubeconfig_;
  std::unique_ptr<Kubectl> kubectl_;
};

TEST_F(SplitTest, WalkthroughWhileComponentsDieAndRestart) {
  Process cm[2], scheduler, kubelet;
  StartComponent(&cm[0], "cm-0", Elected({"controller-manager"}));
  StartComponent(&cm[1], "cm-1", Elected({"controller-manager"}));
  StartComponent(&scheduler, "scheduler", Elected({"scheduler"}));
  const std::vector<std::string> kubelet_args = {
      "kubelet", "--nodes", "3", "--listen", "127.0.0.1:0", "--enable-fault-injection"};
  StartComponent(&kubelet, "kubelet", kubelet_args);

  // One controller-manager leads; the other runs no controller.
  std::string leader = WaitForLeader("");
  int l = WhoIs(leader);
  ASSERT_NE(l, -1) << "no controller-manager logged that " << leader << " leads";
  const int standby = 1 - l;
  // The flags reached the Leases (the standby's wait below is this long, not 15 s).
  EXPECT_EQ(LeaseDurationSeconds("kube-controller-manager"), "5");

  ConvergenceChecker checker({.kubeconfig_path = kubeconfig_, .ns = "default"});
  ASSERT_TRUE(checker.Start());

  // The walkthrough (§八, §十四).
  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1.27"}).exit_code, 0);
  ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=3"}).exit_code, 0);
  CommandResult rollout = K({"rollout", "status", "deployment/web", "--timeout=120s"});
  EXPECT_EQ(rollout.exit_code, 0) << rollout.out << rollout.err;
  ExpectConverged(checker, "scaled to 3");
  CommandResult wide = K({"get", "pods", "-l", "app=web", "-o", "wide", "--no-headers"});
  std::set<std::string> nodes;
  for (const std::string node : {"converge-node-0", "converge-node-1", "converge-node-2"}) {
    if (wide.out.find(node) != std::string::npos) nodes.insert(node);
  }
  EXPECT_EQ(nodes.size(), 3u) << "3 pods on distinct nodes:\n" << wide.out;
  CommandResult yaml = K({"get", "deployment", "web", "-o", "yaml"});
  EXPECT_NE(yaml.out.find("readyReplicas: 3"), std::string::npos) << yaml.out;
  CommandResult logs = K({"logs", "deployment/web"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(testing::ReadFile(Log("cm-" + std::to_string(standby))).find("started the"),
            std::string::npos)
      << "the standby controller-manager ran controllers";
  EXPECT_NE(testing::ReadFile(Log("cm-" + std::to_string(l))).find("started the replicaset"),
            std::string::npos);
  // The leader publishes the CA its kubeconfig trusts in every namespace.
  EXPECT_EQ(K({"get", "configmap", "kube-root-ca.crt", "-n", "default", "-o",
               "jsonpath={.data.ca\\.crt}"})
                .out,
            testing::ReadFile(server_.data_dir() + "/pki/ca.crt"));

  // The leader dies; the standby takes over once the lease expires and carries on.
  cm[l].Kill();
  std::string successor = WaitForLeader(leader);
  EXPECT_EQ(WhoIs(successor), standby);
  ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=6"}).exit_code, 0);
  ASSERT_EQ(K({"set", "image", "deployment/web", "nginx=nginx:1.28"}).exit_code, 0);
  ExpectConverged(checker, "after the leader died");
  StartComponent(&cm[l], "cm-" + std::to_string(l) + "-restarted", Elected({"controller-manager"}));

  // The scheduler and the kubelet die and come back (the new scheduler leads once the killed
  // one's Lease expires).
  EXPECT_EQ(LeaseDurationSeconds("kube-scheduler"), "5");
  scheduler.Kill();
  ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=8"}).exit_code, 0);
  StartComponent(&scheduler, "scheduler-restarted", Elected({"scheduler"}));
  ExpectConverged(checker, "after the scheduler restarted");
  kubelet.Kill();
  ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=4"}).exit_code, 0);
  StartComponent(&kubelet, "kubelet-restarted", kubelet_args);
  ExpectConverged(checker, "after the kubelet restarted");

  // The API server dies and restarts on the same data dir; every component reconnects.
  server_.Kill();
  ASSERT_TRUE(server_.Start(server_options_));
  ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=5"}).exit_code, 0);
  ExpectConverged(checker, "after the API server restarted");

  for (const std::string& v : checker.Violations()) ADD_FAILURE() << v;
  for (const std::string& w : checker.CheckQuiet(std::chrono::seconds(3))) {
    ADD_FAILURE() << "written after convergence: " << w;
  }
  checker.Stop();
  std::cout << "leader " << leader << " → " << successor << "; checker: " << checker.stats().events
            << " events, " << checker.stats().relists << " relists\n";
}

// A leader whose Lease another holder takes steps down and exits 1 ("leaderelection lost"), as
// upstream's controller manager and scheduler do, so that whatever runs them restarts them as
// candidates; neither keeps working, nor sits idle, without its Lease.
TEST_F(SplitTest, ALeaderWhoseLeaseIsTakenExits) {
  const std::vector<std::string> timings = {"--leader-elect-lease-duration", "2s",
                                            "--leader-elect-renew-deadline", "1500ms",
                                            "--leader-elect-retry-period",   "500ms"};
  Process components[2];
  const std::string commands[2] = {"controller-manager", "scheduler"};
  const std::string leases[2] = {"kube-controller-manager", "kube-scheduler"};
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> args = {commands[i]};
    args.insert(args.end(), timings.begin(), timings.end());
    StartComponent(&components[i], commands[i], args);
  }
  for (int i = 0; i < 2; ++i) {
    bool held = false;
    for (int attempt = 0; attempt < 300 && !held; ++attempt) {
      held = !LeaseHolder(leases[i]).empty();
      if (!held) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_TRUE(held) << commands[i] << " never took " << leases[i];
    EXPECT_TRUE(components[i].Running()) << commands[i];
  }

  // Someone else holds both Leases for an hour from now on.
  for (const std::string& lease : leases) {
    CommandResult r = K({"patch", "lease", lease, "-n", "kube-system", "--type=merge", "-p",
                         R"({"spec":{"holderIdentity":"intruder","leaseDurationSeconds":3600}})"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  for (int i = 0; i < 2; ++i) {
    bool exited = false;
    for (int attempt = 0; attempt < 600 && !exited; ++attempt) {
      exited = !components[i].Running();
      if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(exited) << commands[i] << " kept running without its Lease";
    EXPECT_EQ(components[i].exit_code(), 1) << commands[i];
    EXPECT_NE(testing::ReadFile(Log(commands[i])).find("leaderelection lost"), std::string::npos)
        << commands[i];
    // It let go: the intruder's record stands.
    EXPECT_EQ(LeaseHolder(leases[i]), "intruder") << commands[i];
  }
}

// In the all-in-one server the controller manager and the scheduler that lose their Leases stand
// as candidates again (the process also serves the API, so it does not exit): once the other
// holder's Lease expires they lead again and work.
TEST(AllInOneLeaderElectionTest, ComponentsThatLoseTheirLeasesLeadAgainLater) {
  ASSERT_TRUE(Kubectl::Available());
  ServerProcess server;
  ASSERT_TRUE(server.Start(
      {.command = "server",
       .extra_args = {"--nodes", "1", "--leader-elect", "true", "--leader-elect-lease-duration",
                      "2s", "--leader-elect-renew-deadline", "1500ms",
                      "--leader-elect-retry-period", "500ms"}}));
  TempDir cache;
  Kubectl kubectl(server.kubeconfig_path(), cache.path());
  auto holder = [&](const std::string& lease) {
    CommandResult r = kubectl.Run(
        {"get", "lease", lease, "-n", "kube-system", "-o", "jsonpath={.spec.holderIdentity}"});
    return r.exit_code == 0 ? r.out : "";
  };
  auto wait_for_holder_other_than = [&](const std::string& lease, const std::string& other) {
    for (int attempt = 0; attempt < 300; ++attempt) {
      std::string h = holder(lease);
      if (!h.empty() && h != other) return h;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return std::string();
  };
  const std::string leases[2] = {"kube-controller-manager", "kube-scheduler"};
  for (const std::string& lease : leases) {
    ASSERT_NE(wait_for_holder_other_than(lease, ""), "") << lease;
  }

  // Another holder takes both for 5 s.
  for (const std::string& lease : leases) {
    CommandResult r =
        kubectl.Run({"patch", "lease", lease, "-n", "kube-system", "--type=merge", "-p",
                     R"({"spec":{"holderIdentity":"intruder","leaseDurationSeconds":5}})"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  for (const std::string& lease : leases) {
    EXPECT_NE(wait_for_holder_other_than(lease, "intruder"), "") << lease << " never taken back";
  }
  std::string log = server.log();
  for (const std::string component : {"controller-manager", "scheduler"}) {
    EXPECT_NE(log.find(component + ": leaderelection lost; standing as a candidate again"),
              std::string::npos)
        << component;
  }

  // Both work again: a Deployment's pod is created (controller manager), scheduled and Ready.
  ASSERT_EQ(kubectl.Run({"create", "deployment", "web", "--image=nginx:1.27"}).exit_code, 0);
  CommandResult rollout = kubectl.Run({"rollout", "status", "deployment/web", "--timeout=120s"});
  EXPECT_EQ(rollout.exit_code, 0) << rollout.out << rollout.err;
}

// Leader election and node lease flags that cannot work are refused at start, with an error
// naming what is wrong, before anything runs (no API server is needed to see it).
TEST(ComponentFlagsTest, UnusableLeaderElectionAndNodeLeaseTimingsExitWithAnError) {
  struct Case {
    const char* name;
    std::vector<std::string> args;
    const char* says;
  };
  const Case cases[] = {
      {"lease duration not above the renew deadline",
       {"controller-manager", "--leader-elect-lease-duration", "10s",
        "--leader-elect-renew-deadline", "10s"},
       "must be greater than the renew deadline"},
      {"renew deadline within retry period x 1.2",
       {"scheduler", "--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "2s"},
       "must be greater than the retry period"},
      {"zero retry period",
       {"server", "--data-dir", "/dev/null/never-created", "--leader-elect-retry-period", "0s"},
       "retry period must be greater than zero"},
      {"lease duration under a second",
       {"controller-manager", "--leader-elect-lease-duration", "800ms",
        "--leader-elect-renew-deadline", "500ms", "--leader-elect-retry-period", "100ms"},
       "must be at least 1s"},
      {"not a duration", {"scheduler", "--leader-elect-retry-period", "soon"}, "not a duration"},
      {"node lease of zero seconds",
       {"kubelet", "--node-lease-duration-seconds", "0"},
       "--node-lease-duration-seconds must be greater than 0"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {CONVERGE_BINARY};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    if (c.args[0] != "server") {
      argv.push_back("--kubeconfig");
      argv.push_back("/nonexistent/kubeconfig");
    }
    CommandResult r = RunCommand(argv, {}, "", std::chrono::seconds(30));
    EXPECT_FALSE(r.timed_out) << c.name;
    EXPECT_NE(r.exit_code, 0) << c.name;
    EXPECT_NE((r.out + r.err).find(c.says), std::string::npos) << c.name << ": " << r.out << r.err;
  }
}

}  // namespace
}  // namespace converge
