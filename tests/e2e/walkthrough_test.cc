// The README's walkthrough, end to end: `converge server --nodes 3` (API server, controllers,
// scheduler and simulated kubelets in one process) driven by the real kubectl, asserting on what
// kubectl prints. Every step is the seed's reconcile loop at work: desired state in, the cluster
// converging on it.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "testing/kubectl.h"
#include "testing/server.h"

namespace converge {
namespace {

using testing::CommandResult;
using testing::Kubectl;
using testing::ServerProcess;
using testing::TempDir;

class WalkthroughTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available());
    ASSERT_TRUE(server_.Start({.command = "server", .extra_args = {"--nodes", "3"}}));
    kubectl_ = std::make_unique<Kubectl>(server_.kubeconfig_path(), cache_.path());
  }
  CommandResult K(const std::vector<std::string>& args) { return kubectl_->Run(args); }
  // Runs `args` until its stdout matches `pattern` (up to ~60 s); returns the last output.
  std::string Until(const std::vector<std::string>& args, const std::string& pattern) {
    std::regex re(pattern);
    std::string out;
    for (int i = 0; i < 300; ++i) {
      CommandResult r = K(args);
      out = r.out + r.err;
      if (r.exit_code == 0 && std::regex_search(r.out, re)) return out;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "never matched /" << pattern << "/; last output:\n" << out;
    return out;
  }
  static int CountLines(const std::string& s, const std::string& needle) {
    int n = 0;
    size_t pos = 0;
    while ((pos = s.find(needle, pos)) != std::string::npos) {
      ++n;
      pos += needle.size();
    }
    return n;
  }

  ServerProcess server_;
  TempDir cache_;
  std::unique_ptr<Kubectl> kubectl_;
};

// Every namespace has the ConfigMap kube-root-ca.crt with the cluster's CA (the pods' projected
// kube-api-access volumes name it); deleted or edited, it is put back.
TEST_F(WalkthroughTest, EveryNamespaceHasTheClusterCa) {
  const std::string ca = testing::ReadFile(server_.data_dir() + "/pki/ca.crt");
  ASSERT_NE(ca.find("BEGIN CERTIFICATE"), std::string::npos);
  const std::vector<std::string> get_ca = {"get", "configmap", "kube-root-ca.crt", "-o",
                                           "jsonpath={.data.ca\\.crt}"};
  auto in = [&](const std::string& ns) {
    std::vector<std::string> args = get_ca;
    args.insert(args.end(), {"-n", ns});
    return args;
  };
  auto wait_for_ca = [&](const std::string& ns) {
    for (int attempt = 0; attempt < 300; ++attempt) {
      CommandResult r = K(in(ns));
      if (r.exit_code == 0 && r.out == ca) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  };
  for (const std::string ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    EXPECT_TRUE(wait_for_ca(ns)) << ns << ": " << K(in(ns)).out;
  }
  ASSERT_EQ(K({"create", "namespace", "team"}).exit_code, 0);
  EXPECT_TRUE(wait_for_ca("team"));

  ASSERT_EQ(K({"delete", "configmap", "kube-root-ca.crt", "-n", "team"}).exit_code, 0);
  EXPECT_TRUE(wait_for_ca("team")) << "not recreated";
  CommandResult edited = K({"patch", "configmap", "kube-root-ca.crt", "-n", "team", "-p",
                            R"({"data":{"ca.crt":"forged","extra":"x"}})"});
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  EXPECT_TRUE(wait_for_ca("team")) << "not restored";
  EXPECT_EQ(
      K({"get", "configmap", "kube-root-ca.crt", "-n", "team", "-o", "jsonpath={.data.extra}"}).out,
      "");
}

// A Service with a selector gets Endpoints listing its ready pods' IPs at the target port; they
// follow scaling, and go with the Service.
TEST_F(WalkthroughTest, ExposedDeploymentHasEndpoints) {
  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1.27", "--replicas=2"}).exit_code, 0);
  ASSERT_EQ(K({"rollout", "status", "deployment/web", "--timeout=90s"}).exit_code, 0);
  CommandResult exposed = K({"expose", "deployment", "web", "--port=80", "--target-port=8080"});
  ASSERT_EQ(exposed.exit_code, 0) << exposed.err;
  auto pod_ips = [&] {
    std::string out = K({"get", "pods", "-l", "app=web", "-o",
                         "jsonpath={range .items[*]}{.status.podIP}:8080 {end}"})
                          .out;
    std::istringstream in(out);
    std::set<std::string> ips;
    for (std::string ip; in >> ip;) ips.insert(ip);
    return ips;
  };
  auto endpoint_ips = [&] {
    std::string out = K({"get", "endpoints", "web", "-o",
                         "jsonpath={range .subsets[*].addresses[*]}{.ip}:8080 {end}"})
                          .out;
    std::istringstream in(out);
    std::set<std::string> ips;
    for (std::string ip; in >> ip;) ips.insert(ip);
    return ips;
  };
  auto wait_for_match = [&](size_t n) {
    std::set<std::string> want, have;
    for (int attempt = 0; attempt < 300; ++attempt) {
      want = pod_ips();
      have = endpoint_ips();
      if (want.size() == n && have == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "endpoints " << ::testing::PrintToString(have) << ", pods "
                  << ::testing::PrintToString(want);
    return false;
  };
  EXPECT_TRUE(wait_for_match(2));
  std::string listed = K({"get", "endpoints", "web", "--no-headers"}).out;
  EXPECT_TRUE(std::regex_search(listed, std::regex("^web\\s+[0-9.]+:8080,[0-9.]+:8080\\s")))
      << listed;
  EXPECT_EQ(
      K({"get", "endpoints", "web", "-o", "jsonpath={.subsets[0].addresses[0].targetRef.kind}"})
          .out,
      "Pod");

  ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=3"}).exit_code, 0);
  EXPECT_TRUE(wait_for_match(3));

  ASSERT_EQ(K({"delete", "service", "web"}).exit_code, 0);
  Until({"get", "endpoints", "-o", "name"}, "^endpoints/kubernetes\\n$");
}

TEST_F(WalkthroughTest, DeploymentLifecycleThroughKubectl) {
  CommandResult version = K({"version"});
  ASSERT_EQ(version.exit_code, 0) << version.err;
  EXPECT_NE(version.out.find("Server Version: v1.32"), std::string::npos) << version.out;

  // Three simulated nodes register and report Ready.
  std::string nodes =
      Until({"get", "nodes", "--no-headers"}, "(?:\\bReady\\b[^\\n]*\\n[^\\n]*){2}\\bReady\\b");
  EXPECT_EQ(CountLines(nodes, " Ready "), 3) << nodes;

  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1.27", "--replicas=2"}).exit_code, 0);
  CommandResult rollout = K({"rollout", "status", "deployment/web", "--timeout=90s"});
  ASSERT_EQ(rollout.exit_code, 0) << rollout.out << rollout.err;
  EXPECT_NE(rollout.out.find("successfully rolled out"), std::string::npos) << rollout.out;
  std::string pods = K({"get", "pods", "-l", "app=web", "-o", "wide", "--no-headers"}).out;
  EXPECT_EQ(CountLines(pods, "Running"), 2) << pods;
  EXPECT_NE(pods.find("converge-node-"), std::string::npos) << "scheduled onto a node: " << pods;
  // Components write under upstream's field managers (their User-Agents' prefixes).
  EXPECT_EQ(K({"get", "deployment", "web", "-o",
               "jsonpath={.metadata.managedFields[?(@.subresource==\"status\")].manager}"})
                .out,
            "kube-controller-manager");

  // Scale up; the new pods are scheduled and started.
  ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=5"}).exit_code, 0);
  ASSERT_EQ(K({"rollout", "status", "deployment/web", "--timeout=90s"}).exit_code, 0);
  Until({"get", "deployment", "web", "--no-headers"}, "web\\s+5/5\\s+5\\s+5");

  // A rolling update to a new image, then back.
  ASSERT_EQ(K({"set", "image", "deployment/web", "nginx=nginx:1.28"}).exit_code, 0);
  CommandResult updated = K({"rollout", "status", "deployment/web", "--timeout=120s"});
  ASSERT_EQ(updated.exit_code, 0) << updated.out << updated.err;
  std::string images = K({"get", "pods", "-l", "app=web", "-o",
                          "jsonpath={range .items[*]}{.spec.containers[0].image}{\"\\n\"}{end}"})
                           .out;
  EXPECT_NE(images.find("nginx:1.28"), std::string::npos) << images;
  std::string history = K({"rollout", "history", "deployment/web"}).out;
  EXPECT_NE(history.find("2 "), std::string::npos) << history;
  ASSERT_EQ(K({"rollout", "undo", "deployment/web"}).exit_code, 0);
  ASSERT_EQ(K({"rollout", "status", "deployment/web", "--timeout=120s"}).exit_code, 0);
  Until({"get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"},
        "^nginx:1\\.27$");

  // Deleted pods are replaced: the ReplicaSet converges back to five.
  ASSERT_EQ(K({"delete", "pod", "-l", "app=web", "--wait=false"}).exit_code, 0);
  Until({"get", "deployment", "web", "--no-headers"}, "web\\s+5/5\\s+5\\s+5");

  // What happened is visible as events and logs.
  std::string events = K({"get", "events", "--sort-by=.lastTimestamp"}).out;
  for (const char* reason :
       {"ScalingReplicaSet", "SuccessfulCreate", "Scheduled", "Pulled", "Started", "Killing"}) {
    EXPECT_NE(events.find(reason), std::string::npos) << reason << " missing from:\n" << events;
  }
  CommandResult logs = K({"logs", "deployment/web"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
}

TEST_F(WalkthroughTest, MissingImagesBackOffAndNamespacesCleanUp) {
  ASSERT_EQ(K({"create", "namespace", "team"}).exit_code, 0);
  ASSERT_EQ(K({"run", "broken", "--image=nginx:doesnotexist", "-n", "team"}).exit_code, 0);
  Until({"get", "pod", "broken", "-n", "team", "--no-headers"}, "ErrImagePull|ImagePullBackOff");
  Until({"get", "pod", "broken", "-n", "team", "--no-headers"}, "ImagePullBackOff");

  CommandResult token = K({"create", "token", "default", "-n", "team"});
  EXPECT_EQ(token.exit_code, 0) << token.err;
  CommandResult can = K({"auth", "can-i", "create", "deployments", "-n", "team",
                         "--as=system:serviceaccount:team:default"});
  EXPECT_EQ(can.out, "no\n") << can.out << can.err;

  CommandResult del = K({"delete", "namespace", "team", "--timeout=90s"});
  EXPECT_EQ(del.exit_code, 0) << del.out << del.err;
  CommandResult gone = K({"get", "namespace", "team"});
  EXPECT_NE(gone.exit_code, 0);
  EXPECT_NE(gone.err.find("NotFound"), std::string::npos) << gone.err;
}

// The seed's §八 and §十四 walkthrough, step by step, as a reader would type it.
TEST_F(WalkthroughTest, SeedWalkthroughScaleToThreeOnDistinctNodes) {
  Until({"get", "nodes", "--no-headers"}, "(?:\\bReady\\b[^\\n]*\\n[^\\n]*){2}\\bReady\\b");
  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1.27"}).exit_code, 0);

  // A second kubectl watches the Deployment while the first scales it. It scales only once the
  // watch has printed the Deployment's first line: kubectl lists, prints and then watches, and a
  // loaded machine can start it after the whole rollout (one line instead of a line per change).
  auto watch = kubectl_->Start({"get", "deployment", "web", "-w"});
  ASSERT_TRUE(watch->WaitFor("web ", std::chrono::seconds(30))) << watch->out_so_far();
  ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=3"}).exit_code, 0);
  CommandResult rollout = K({"rollout", "status", "deployment/web", "--timeout=90s"});
  ASSERT_EQ(rollout.exit_code, 0) << rollout.out << rollout.err;
  EXPECT_TRUE(watch->WaitFor("3/3", std::chrono::seconds(30))) << watch->out_so_far();
  CommandResult watched = watch->Stop();
  // The watch printed the header, then a line per change, ending at 3/3.
  EXPECT_NE(watched.out.find("READY"), std::string::npos) << watched.out;
  EXPECT_GE(CountLines(watched.out, "web "), 3) << watched.out;

  std::string all = K({"get", "deployment,rs,pods", "-o", "wide"}).out;
  EXPECT_NE(all.find("deployment.apps/web"), std::string::npos) << all;
  EXPECT_TRUE(std::regex_search(all, std::regex("deployment\\.apps/web\\s+3/3\\s+3\\s+3"))) << all;
  EXPECT_TRUE(std::regex_search(all, std::regex("replicaset\\.apps/web-[a-z0-9]+\\s+3\\s+3\\s+3")))
      << all;
  EXPECT_EQ(CountLines(all, "Running"), 3) << all;
  // Three pods on three distinct nodes: the scheduler spreads them.
  std::string nodes = K({"get", "pods", "-l", "app=web", "-o",
                         "jsonpath={range .items[*]}{.spec.nodeName}{\"\\n\"}{end}"})
                          .out;
  std::set<std::string> distinct;
  std::istringstream lines(nodes);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) distinct.insert(line);
  }
  EXPECT_EQ(distinct.size(), 3u) << nodes;

  std::string yaml = K({"get", "deployment", "web", "-o", "yaml"}).out;
  EXPECT_TRUE(std::regex_search(yaml, std::regex("spec:\\n(?:  .*\\n)*?  replicas: 3\\n"))) << yaml;
  EXPECT_TRUE(std::regex_search(yaml, std::regex("status:\\n(?:  .*\\n)*?  readyReplicas: 3\\n")))
      << yaml;

  // The chain of events: the Deployment scaled its ReplicaSet, which created pods, which were
  // scheduled, pulled and started.
  std::string describe = K({"describe", "deployment", "web"}).out;
  EXPECT_NE(describe.find("ScalingReplicaSet"), std::string::npos) << describe;
  EXPECT_NE(describe.find("Replicas:               3 desired | 3 updated | 3 total | 3 available"),
            std::string::npos)
      << describe;
  std::string pod =
      K({"get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}"}).out;
  ASSERT_FALSE(pod.empty());
  std::string describe_pod = K({"describe", "pod", pod}).out;
  for (const char* reason : {"Scheduled", "Pulling", "Pulled", "Created", "Started"}) {
    EXPECT_NE(describe_pod.find(reason), std::string::npos) << reason << " in:\n" << describe_pod;
  }
  EXPECT_NE(describe_pod.find("Controlled By:  ReplicaSet/web-"), std::string::npos)
      << describe_pod;
  std::string events = K({"get", "events", "--sort-by=.lastTimestamp"}).out;
  // (Timestamps have one-second resolution, as upstream's, so the order within a second is
  // arbitrary: check the chain is all there.)
  for (const char* reason : {"ScalingReplicaSet", "SuccessfulCreate", "Scheduled", "Started"}) {
    EXPECT_NE(events.find(reason), std::string::npos) << reason << " in:\n" << events;
  }
  CommandResult logs = K({"logs", pod});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_FALSE(logs.out.empty());
}

// A missing image stalls the rollout without extra pods; the deadline marks it; a good image
// converges.
TEST_F(WalkthroughTest, BrokenImageStallsRolloutThenRecovers) {
  Until({"get", "nodes", "--no-headers"}, "(?:\\bReady\\b[^\\n]*\\n[^\\n]*){2}\\bReady\\b");
  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1.27", "--replicas=3"}).exit_code, 0);
  ASSERT_EQ(K({"rollout", "status", "deployment/web", "--timeout=90s"}).exit_code, 0);
  ASSERT_EQ(K({"patch", "deployment", "web", "-p", R"({"spec":{"progressDeadlineSeconds":5}})"})
                .exit_code,
            0);

  ASSERT_EQ(K({"set", "image", "deployment/web", "nginx=nginx:doesnotexist"}).exit_code, 0);
  Until({"get", "pods", "-l", "app=web", "--no-headers"}, "ImagePullBackOff");
  // The rollout stalls: maxSurge 25% of 3 rounds up to 1 new pod, maxUnavailable rounds down to
  // 0, so exactly one broken pod and the three old ones, and no more are created.
  Until({"get", "deployment", "web", "-o",
         "jsonpath={.status.conditions[?(@.type==\"Progressing\")].reason}"},
        "^ProgressDeadlineExceeded$");
  std::string pods = K({"get", "pods", "-l", "app=web", "--no-headers"}).out;
  EXPECT_EQ(CountLines(pods, "\n"), 4) << pods;
  EXPECT_EQ(CountLines(pods, "Running"), 3) << pods;
  CommandResult stalled = K({"rollout", "status", "deployment/web", "--timeout=10s"});
  EXPECT_NE(stalled.exit_code, 0);
  EXPECT_NE((stalled.out + stalled.err).find("exceeded its progress deadline"), std::string::npos)
      << stalled.out << stalled.err;

  ASSERT_EQ(K({"set", "image", "deployment/web", "nginx=nginx:1.28"}).exit_code, 0);
  CommandResult fixed = K({"rollout", "status", "deployment/web", "--timeout=120s"});
  ASSERT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  Until({"get", "deployment", "web", "--no-headers"}, "web\\s+3/3\\s+3\\s+3");
  Until({"get", "pods", "-l", "app=web", "--no-headers"}, "^(?:[^\\n]*Running[^\\n]*\\n){3}$");
  std::string images = K({"get", "pods", "-l", "app=web", "-o",
                          "jsonpath={range .items[*]}{.spec.containers[0].image}{\"\\n\"}{end}"})
                           .out;
  EXPECT_EQ(images, "nginx:1.28\nnginx:1.28\nnginx:1.28\n");
}

}  // namespace
}  // namespace converge
