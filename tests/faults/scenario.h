// The scenario issue #8 runs every fault against: a Deployment scaled 0 → 50 → 5 with a rolling
// update in flight, watched from start to end by the ConvergenceChecker. Hooks inject (and stop)
// a fault at each phase; afterwards the checker's invariants must hold, the system must reach
// the desired state (5 ready pods of the new image) and then go quiet.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <thread>

#include "testing/convergence_checker.h"
#include "testing/http_client.h"
#include "testing/kubectl.h"

namespace converge::testing {

class Scenario {
 public:
  struct Hooks {
    std::function<void()> scaling_up;    // pods are being created towards 50
    std::function<void()> rolling;       // the update to nginx:1.28 is in flight
    std::function<void()> scaling_down;  // just scaled to 5, rollout still in flight
    std::function<void()> faults_stop;   // before waiting for convergence
  };

  Scenario(std::string kubeconfig, const std::string& kubectl_cache)
      : kubeconfig_(std::move(kubeconfig)),
        kubectl_(kubeconfig_, kubectl_cache),
        checker_({.kubeconfig_path = kubeconfig_, .ns = "default"}) {}

  Kubectl& kubectl() { return kubectl_; }
  ConvergenceChecker& checker() { return checker_; }

  CommandResult K(const std::vector<std::string>& args) { return kubectl_.Run(args); }

  // Injects a fault the way a person would: `kubectl create --raw <path> -f -` (a POST).
  CommandResult Fault(const std::string& path) {
    CommandResult r = kubectl_.Run({"create", "--raw", path, "-f", "-"}, "{}");
    EXPECT_EQ(r.exit_code, 0) << path << ": " << r.out << r.err;
    return r;
  }
  // GET /converge/faults as JSON.
  boost::json::value Faults() {
    CommandResult r = K({"get", "--raw", "/converge/faults"});
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(r.out, ec);
    return ec ? boost::json::value() : v;
  }

  // Polls `count` (through a fresh client each time: the server may be restarting) until it
  // reaches `at_least` (up to ~3 minutes). Returns whether it did.
  bool WaitFor(const std::string& what, const std::function<int(TestClient&)>& count,
               int at_least) {
    int last = -1;
    for (int i = 0; i < 900; ++i) {
      auto cfg = Kubeconfig::Load(kubeconfig_);
      if (cfg.ok()) {
        TestClient c(*cfg);
        last = count(c);
        if (last >= at_least) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << what << ": only " << last << ", wanted " << at_least;
    return false;
  }
  static int Count(TestClient& c, const std::string& path) {
    HttpResponse r = c.Get(path);
    if (r.status != 200) return -1;
    const boost::json::value list = r.Json();
    const auto* items = list.is_object() ? list.get_object().if_contains("items") : nullptr;
    return items && items->is_array() ? static_cast<int>(items->get_array().size()) : -1;
  }
  static int Pods(TestClient& c) { return Count(c, "/api/v1/namespaces/default/pods"); }
  static int ReplicaSets(TestClient& c) {
    return Count(c, "/apis/apps/v1/namespaces/default/replicasets");
  }

  void Run(const Hooks& hooks) {
    ASSERT_TRUE(Kubectl::Available());
    CommandResult created =
        K({"create", "deployment", "web", "--image=nginx:1.27", "--replicas=0"});
    ASSERT_EQ(created.exit_code, 0) << created.err;
    ASSERT_TRUE(checker_.Start()) << "the checker could not list";

    ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=50"}).exit_code, 0);
    WaitFor("pods created while scaling to 50", Pods, 10);
    if (hooks.scaling_up) hooks.scaling_up();

    CommandResult image = K({"set", "image", "deployment/web", "nginx=nginx:1.28"});
    ASSERT_EQ(image.exit_code, 0) << image.err;
    WaitFor("replicasets once the rollout started", ReplicaSets, 2);
    if (hooks.rolling) hooks.rolling();

    ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=5"}).exit_code, 0);
    if (hooks.scaling_down) hooks.scaling_down();
    if (hooks.faults_stop) hooks.faults_stop();

    std::string why;
    EXPECT_TRUE(checker_.WaitConverged(std::chrono::seconds(240), &why)) << why;
    for (const std::string& v : checker_.Violations()) ADD_FAILURE() << v;
    for (const std::string& w : checker_.CheckQuiet(std::chrono::seconds(3))) {
      ADD_FAILURE() << "written after convergence: " << w;
    }
    CommandResult ready = K({"get", "deployment", "web", "--no-headers"});
    EXPECT_TRUE(std::regex_search(ready.out, std::regex("web\\s+5/5\\s+5\\s+5"))) << ready.out;
    CommandResult img =
        K({"get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"});
    EXPECT_EQ(img.out, "nginx:1.28");
    checker_.Stop();
    ConvergenceChecker::Stats s = checker_.stats();
    std::cout << "checker: " << s.events << " events, " << s.resumes << " watch resumes, "
              << s.relists << " relists\n";
  }

 private:
  const std::string kubeconfig_;
  Kubectl kubectl_;
  ConvergenceChecker checker_;
};

}  // namespace converge::testing
