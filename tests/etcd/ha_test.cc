// A highly available control plane as separate processes: a 3-member etcd cluster, two API
// servers on it, two controller-managers and a scheduler electing leaders through Leases, and
// simulated kubelets. The seed's walkthrough runs through kubectl pointed at each API server in
// turn while the test kills the etcd leader mid-rollout, then the leading controller-manager,
// then an API server; the system converges every time and nothing is created twice.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <thread>

#include "store/etcd/etcd_cluster.h"
#include "testing/kubectl.h"
#include "testing/server.h"

namespace converge::testing {
namespace {

class HighAvailabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available());
    etcd_ = std::make_unique<store::etcd::EtcdCluster>(
        store::etcd::EtcdClusterOptions{.dir = dir_.path() + "/etcd", .members = 3});
    auto s = etcd_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    const std::vector<std::string> store = {"--store", "etcd", "--etcd-endpoints",
                                            etcd_->EndpointsFlag()};
    ASSERT_TRUE(a_.Start({.extra_args = store}));
    // The second replica shares the first one's PKI (CA, serving certificate, SA key).
    std::filesystem::create_directories(dir_.path() + "/b");
    std::filesystem::copy(a_.data_dir() + "/pki", dir_.path() + "/b/pki",
                          std::filesystem::copy_options::recursive);
    ASSERT_TRUE(b_.Start({.extra_args = store, .data_dir = dir_.path() + "/b"}));
    ka_ = std::make_unique<Kubectl>(a_.kubeconfig_path(), dir_.path() + "/cache-a");
    kb_ = std::make_unique<Kubectl>(b_.kubeconfig_path(), dir_.path() + "/cache-b");
  }

  void StartComponent(Process* p, const std::string& name, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {CONVERGE_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_TRUE(p->Start(argv, LogPath(name)));
  }
  std::string LogPath(const std::string& name) const { return dir_.path() + "/" + name + ".log"; }

  // Runs kubectl until stdout matches `pattern` (up to `seconds`); returns the last output.
  std::string Until(const Kubectl& k, const std::vector<std::string>& args,
                    const std::string& pattern, int seconds = 120) {
    std::regex re(pattern);
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      CommandResult r = k.Run(args);
      out = r.out + r.err;
      if (r.exit_code == 0 && std::regex_search(r.out, re)) return out;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    ADD_FAILURE() << "never matched /" << pattern << "/; last output:\n" << out;
    return out;
  }

  // Names of all pods of the deployment that ever existed are unique per ReplicaSet; "nothing
  // created twice" means the live pods are exactly `replicas`, all of the current template.
  void ExpectExactly(const Kubectl& k, int replicas) {
    Until(k, {"get", "deployment", "web", "--no-headers"},
          "web\\s+" + std::to_string(replicas) + "/" + std::to_string(replicas));
    // Let the old ReplicaSet's pods finish terminating, then count.
    std::string pods = Until(k, {"get", "pods", "-l", "app=web", "--no-headers"},
                             "^(?:[^\\n]*Running[^\\n]*\\n){" + std::to_string(replicas) + "}$");
    EXPECT_EQ(std::count(pods.begin(), pods.end(), '\n'), replicas) << pods;
  }

  TempDir dir_;
  std::unique_ptr<store::etcd::EtcdCluster> etcd_;
  ServerProcess a_, b_;
  std::unique_ptr<Kubectl> ka_, kb_;
};

// The controller-managers' leader election, shorter than upstream's 15s / 10s / 2s so that the
// standby takes over ~10 s after the leader dies instead of ~17 s. The renew deadline stays well
// above what the loss of the etcd leader can stall a write for (a request that reached the dead
// leader times out after etcd's 5 s + 2 election timeouts = 6 s), so that the leader keeps its
// Lease through it and the standby does not take over early.
const std::vector<std::string> kLeaderElectionFlags = {"--leader-elect-lease-duration", "10s",
                                                       "--leader-elect-renew-deadline", "9s",
                                                       "--leader-elect-retry-period",   "1s"};

std::vector<std::string> ControllerManagerArgs(const std::string& kubeconfig) {
  std::vector<std::string> args = {"controller-manager", "--kubeconfig", kubeconfig};
  args.insert(args.end(), kLeaderElectionFlags.begin(), kLeaderElectionFlags.end());
  return args;
}

TEST_F(HighAvailabilityTest, ConvergesThroughTheLossOfEtcdLeaderControllerManagerAndApiserver) {
  // The controller-manager on A starts first and leads; the one on B stands by.
  Process cm_a, cm_b, scheduler, kubelet;
  StartComponent(&cm_a, "cm-a", ControllerManagerArgs(a_.kubeconfig_path()));
  for (int i = 0; i < 300 && ReadFile(LogPath("cm-a")).find("is the leader") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(ReadFile(LogPath("cm-a")).find("is the leader"), std::string::npos);
  StartComponent(&cm_b, "cm-b", ControllerManagerArgs(b_.kubeconfig_path()));
  StartComponent(&scheduler, "scheduler", {"scheduler", "--kubeconfig", b_.kubeconfig_path()});
  StartComponent(&kubelet, "kubelet",
                 {"kubelet", "--kubeconfig", b_.kubeconfig_path(), "--nodes", "3"});
  ASSERT_FALSE(HasFatalFailure());

  // The walkthrough: nodes register (seen through A), a deployment is created through A and
  // rolls out (observed through B).
  Until(*ka_, {"get", "nodes", "--no-headers"}, "(?:\\bReady\\b[^\\n]*\\n[^\\n]*){2}\\bReady\\b");
  ASSERT_EQ(
      ka_->Run({"create", "deployment", "web", "--image=nginx:1.27", "--replicas=3"}).exit_code, 0);
  CommandResult rolled = kb_->Run({"rollout", "status", "deployment/web", "--timeout=120s"});
  ASSERT_EQ(rolled.exit_code, 0) << rolled.out << rolled.err;

  // A rolling update; the etcd leader dies in the middle of it. The rollout completes.
  ASSERT_EQ(kb_->Run({"set", "image", "deployment/web", "nginx=nginx:1.28"}).exit_code, 0);
  auto leader = etcd_->Leader();
  ASSERT_TRUE(leader.ok()) << leader.status().ToString();
  etcd_->Kill(*leader);
  CommandResult updated = ka_->Run({"rollout", "status", "deployment/web", "--timeout=180s"});
  ASSERT_EQ(updated.exit_code, 0) << updated.out << updated.err;
  ExpectExactly(*kb_, 3);

  // The leading controller-manager dies; the other takes over within the lease duration and
  // scales up without creating anything twice.
  EXPECT_EQ(ReadFile(LogPath("cm-b")).find("is the leader"), std::string::npos);
  EXPECT_EQ(ka_->Run({"get", "lease", "kube-controller-manager", "-n", "kube-system", "-o",
                      "jsonpath={.spec.leaseDurationSeconds}"})
                .out,
            "10");
  cm_a.Kill();
  ASSERT_EQ(ka_->Run({"scale", "deployment", "web", "--replicas=5"}).exit_code, 0);
  ExpectExactly(*ka_, 5);
  EXPECT_NE(ReadFile(LogPath("cm-b")).find("is the leader"), std::string::npos);

  // An API server dies: clients of the other keep working, and so does everything that talks
  // to it (controller-manager, scheduler, kubelets).
  a_.Kill();
  ASSERT_EQ(kb_->Run({"scale", "deployment", "web", "--replicas=2"}).exit_code, 0);
  ExpectExactly(*kb_, 2);
  ASSERT_EQ(kb_->Run({"set", "image", "deployment/web", "nginx=nginx:1.29"}).exit_code, 0);
  CommandResult last = kb_->Run({"rollout", "status", "deployment/web", "--timeout=120s"});
  EXPECT_EQ(last.exit_code, 0) << last.out << last.err;
}

}  // namespace
}  // namespace converge::testing
