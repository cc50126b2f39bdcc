// `kubectl drain` against `converge server --nodes 3`: the real kubectl cordons the node and
// evicts its pods through pods/eviction; the Deployment's pods come back on the other nodes. A
// PodDisruptionBudget that allows no disruption makes the eviction answer 429, which kubectl
// retries until its --timeout; once the budget allows one, the same drain goes through.
#include <gtest/gtest.h>

#include <regex>
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

constexpr char kDeployment[] = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: nginx
        image: nginx:1.27
)";

constexpr char kBudget[] = R"(apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 3
  selector:
    matchLabels: {app: web}
)";

class DrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available());
    ASSERT_TRUE(server_.Start({.command = "server", .extra_args = {"--nodes", "3"}}));
    kubectl_ = std::make_unique<Kubectl>(server_.kubeconfig_path(), cache_.path());
    Until({"get", "nodes", "--no-headers"}, "(?:\\bReady\\b[^\\n]*\\n[^\\n]*){2}\\bReady\\b");
    ASSERT_EQ(K({"apply", "-f", "-"}, kDeployment).exit_code, 0);
    CommandResult rollout = K({"rollout", "status", "deployment/web", "--timeout=90s"});
    ASSERT_EQ(rollout.exit_code, 0) << rollout.out << rollout.err;
  }
  CommandResult K(const std::vector<std::string>& args, const std::string& in = "") {
    return kubectl_->Run(args, in);
  }
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
  // The node of the first app=web pod.
  std::string NodeOfAWebPod() {
    return K({"get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].spec.nodeName}"}).out;
  }
  // Live (not terminating) app=web pods on `node`.
  int LiveWebPodsOn(const std::string& node) {
    std::string out = K({"get", "pods", "-l", "app=web", "-o",
                         "jsonpath={range .items[*]}{.spec.nodeName} "
                         "{.metadata.deletionTimestamp}{\"\\n\"}{end}"})
                          .out;
    int n = 0;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string on, deleting;
      fields >> on >> deleting;
      if (on == node && deleting.empty()) ++n;
    }
    return n;
  }

  ServerProcess server_;
  TempDir cache_;
  std::unique_ptr<Kubectl> kubectl_;
};

TEST_F(DrainTest, DrainEvictsPodsAndTheDeploymentReplacesThemElsewhere) {
  const std::string node = NodeOfAWebPod();
  ASSERT_NE(node.find("converge-node-"), std::string::npos) << node;
  ASSERT_GT(LiveWebPodsOn(node), 0);

  CommandResult drain = K({"drain", node, "--ignore-daemonsets", "--timeout=90s"});
  ASSERT_EQ(drain.exit_code, 0) << drain.out << drain.err;
  EXPECT_NE(drain.out.find("evicted"), std::string::npos) << drain.out;
  EXPECT_NE(drain.out.find("node/" + node + " drained"), std::string::npos) << drain.out;
  EXPECT_EQ(K({"get", "node", node, "-o", "jsonpath={.spec.unschedulable}"}).out, "true");

  // Replaced on the nodes that are left; nothing new lands on the cordoned one.
  Until({"get", "deployment", "web", "--no-headers"}, "web\\s+3/3\\s+3\\s+3");
  EXPECT_EQ(LiveWebPodsOn(node), 0);

  ASSERT_EQ(K({"uncordon", node}).exit_code, 0);
}

TEST_F(DrainTest, ABudgetThatAllowsNoDisruptionRefusesTheDrainUntilItDoes) {
  ASSERT_EQ(K({"apply", "-f", "-"}, kBudget).exit_code, 0);
  // The disruption controller has counted the three ready pods: none may go.
  Until({"get", "pdb", "web", "-o",
         "jsonpath={.status.observedGeneration} {.status.currentHealthy} "
         "{.status.desiredHealthy} {.status.disruptionsAllowed}"},
        "^1 3 3 0$");
  Until({"get", "pdb", "web", "-o",
         "jsonpath={.status.conditions[?(@.type==\"DisruptionAllowed\")].reason}"},
        "^InsufficientPods$");
  const std::string node = NodeOfAWebPod();

  CommandResult refused = K({"drain", node, "--ignore-daemonsets", "--timeout=12s"});
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("Cannot evict pod as it would violate the pod's disruption budget."),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("will retry after 5s"), std::string::npos) << refused.err;
  // Nothing was evicted.
  EXPECT_GT(LiveWebPodsOn(node), 0);
  EXPECT_EQ(K({"get", "pdb", "web", "-o", "jsonpath={.status.disruptionsAllowed}"}).out, "0");

  // One disruption allowed: the drain takes it and the budget records it.
  ASSERT_EQ(
      K({"patch", "pdb", "web", "--type=merge", "-p", R"({"spec":{"minAvailable":2}})"}).exit_code,
      0);
  Until({"get", "pdb", "web", "-o",
         "jsonpath={.status.observedGeneration} {.status.disruptionsAllowed}"},
        "^2 1$");
  CommandResult drain = K({"drain", node, "--ignore-daemonsets", "--timeout=90s"});
  ASSERT_EQ(drain.exit_code, 0) << drain.out << drain.err;
  EXPECT_NE(drain.out.find("node/" + node + " drained"), std::string::npos) << drain.out;
  Until({"get", "deployment", "web", "--no-headers"}, "web\\s+3/3\\s+3\\s+3");
  EXPECT_EQ(LiveWebPodsOn(node), 0);
  // With all three ready again, the budget allows one disruption once more.
  Until(
      {"get", "pdb", "web", "-o", "jsonpath={.status.currentHealthy} {.status.disruptionsAllowed}"},
      "^3 1$");
}

}  // namespace
}  // namespace converge
