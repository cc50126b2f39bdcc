// A node that dies: `converge server --nodes 2` plus a third node carried by a separate
// `converge kubelet` process, which the test kills. The node lifecycle controller marks the
// silent node Unknown and taints it, the taint evicts its pods once their toleration runs out,
// the ReplicaSet replaces them and the scheduler puts the replacements on the live nodes. When
// the kubelet comes back, the node is untainted and the evicted pods finish terminating.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <thread>

#include "testing/kubectl.h"
#include "testing/process.h"
#include "testing/server.h"

namespace converge {
namespace {

using testing::CommandResult;
using testing::Kubectl;
using testing::Process;
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
      containers:
      - name: nginx
        image: nginx:1.27
      tolerations:
      - key: node.kubernetes.io/unreachable
        operator: Exists
        effect: NoExecute
        tolerationSeconds: 2
)";

class NodeFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available());
    // Node Leases of 4 s, renewed every second, against a grace period of 4 s: the dead node is
    // noticed quickly while the live ones renew four times in every grace period and stay Ready
    // (with upstream's 10 s renewals they would go Unknown between renewals). The node lifecycle
    // controller looks every second (upstream: 5 s), so the taint follows Unknown within one.
    ASSERT_TRUE(server_.Start(
        {.command = "server",
         .extra_args = {"--nodes", "2", "--node-lease-duration-seconds", "4",
                        "--node-monitor-grace-period", "4s", "--node-monitor-period", "1s"}}));
    kubectl_ = std::make_unique<Kubectl>(server_.kubeconfig_path(), cache_.path());
  }
  bool StartKubelet() {
    return kubelet_.Start(
        {CONVERGE_BINARY, "kubelet", "--kubeconfig", server_.kubeconfig_path(), "--nodes", "1",
         "--node-prefix", "flaky", "--node-lease-duration-seconds", "4"},
        server_.data_dir() + "/kubelet.log");
  }
  CommandResult K(const std::vector<std::string>& args, const std::string& in = "") {
    return kubectl_->Run(args, in);
  }
  // Runs `args` until its stdout matches `pattern` (up to ~90 s); returns the last output.
  std::string Until(const std::vector<std::string>& args, const std::string& pattern) {
    std::regex re(pattern);
    std::string out;
    for (int i = 0; i < 450; ++i) {
      CommandResult r = K(args);
      out = r.out + r.err;
      if (r.exit_code == 0 && std::regex_search(r.out, re)) return out;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "never matched /" << pattern << "/; last output:\n" << out;
    return out;
  }
  // "<pod> <node> <deleting?>" per line, for the app=web pods.
  std::string Placement() {
    return K({"get", "pods", "-l", "app=web", "-o",
              "jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName} "
              "{.metadata.deletionTimestamp}{\"\\n\"}{end}"})
        .out;
  }

  ServerProcess server_;
  Process kubelet_;
  TempDir cache_;
  std::unique_ptr<Kubectl> kubectl_;
};

TEST_F(NodeFailureTest, PodsOnADeadNodeAreEvictedAndReplacedElsewhere) {
  ASSERT_TRUE(StartKubelet());
  Until({"get", "node", "flaky-0", "--no-headers"}, "\\bReady\\b");
  Until({"get", "nodes", "--no-headers"}, "(?:\\bReady\\b[^\\n]*\\n[^\\n]*){2}\\bReady\\b");
  ASSERT_EQ(K({"apply", "-f", "-"}, kDeployment).exit_code, 0);
  CommandResult rollout = K({"rollout", "status", "deployment/web", "--timeout=90s"});
  ASSERT_EQ(rollout.exit_code, 0) << rollout.out << rollout.err;
  // The scheduler spreads three pods over three empty nodes: one is on the node that will die.
  std::string before = Placement();
  ASSERT_NE(before.find(" flaky-0 "), std::string::npos) << before;

  kubelet_.Kill();
  // Silent for the grace period: Ready=Unknown and the unreachable taints.
  Until({"get", "node", "flaky-0", "--no-headers"}, "\\bNotReady\\b");
  Until({"get", "node", "flaky-0", "-o", "jsonpath={.spec.taints[*].key}"},
        "node\\.kubernetes\\.io/unreachable");
  // Its pod is evicted after 2 s and replaced on a live node; the Deployment is whole again.
  Until({"get", "pods", "-l", "app=web", "-o",
         "jsonpath={range .items[?(@.metadata.deletionTimestamp)]}{.spec.nodeName}{end}"},
        "^flaky-0$");
  Until({"get", "deployment", "web", "--no-headers"}, "web\\s+3/3\\s+3\\s+3");
  std::string after = Placement();
  int live_elsewhere = 0;
  std::istringstream lines(after);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string name, node, deleting;
    fields >> name >> node >> deleting;
    if (deleting.empty()) {
      EXPECT_NE(node, "flaky-0") << after;
      ++live_elsewhere;
    }
  }
  EXPECT_EQ(live_elsewhere, 3) << after;
  // Only the dead node's pod was evicted: the pods on the live nodes are the same ones as before.
  std::istringstream before_lines(before);
  for (std::string line; std::getline(before_lines, line);) {
    std::istringstream fields(line);
    std::string name, node;
    fields >> name >> node;
    if (node == "flaky-0") continue;
    EXPECT_NE(after.find(name + " " + node + " \n"), std::string::npos)
        << name << " on the live node " << node << " is gone or terminating:\n"
        << after;
  }
  std::string events = K({"get", "events", "--field-selector", "reason=TaintManagerEviction"}).out;
  EXPECT_NE(events.find("TaintManagerEviction"), std::string::npos) << events;

  // The kubelet comes back: the node is untainted and the evicted pod finishes terminating.
  ASSERT_TRUE(StartKubelet());
  Until({"get", "node", "flaky-0", "--no-headers"}, "flaky-0\\s+Ready\\b");
  Until({"get", "node", "flaky-0", "-o", "jsonpath={.spec.taints}"}, "^$");
  Until({"get", "pods", "-l", "app=web", "--no-headers"}, "^(?:web-[^\\n]*Running[^\\n]*\\n){3}$");
}

}  // namespace
}  // namespace converge
