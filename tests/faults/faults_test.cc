// Convergence under faults (issue #8, the seed's §十一 and §十二): `converge server --nodes 3
// --enable-fault-injection`, each fault injected through the real kubectl during the Scenario
// (scale 0 → 50 → 5 with a rolling update in flight); the ConvergenceChecker's invariants must
// hold and the system must reach the desired state and go quiet. Then kill -9 of the whole
// server mid-scenario and a restart on the same data dir.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "faults/scenario.h"
#include "testing/server.h"

namespace converge {
namespace {

using testing::CommandResult;
using testing::Scenario;
using testing::ServerProcess;
using testing::TempDir;

class FaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(
        {.command = "server", .extra_args = {"--nodes", "3", "--enable-fault-injection"}}));
    scenario_ = std::make_unique<Scenario>(server_.kubeconfig_path(), cache_.path());
  }

  ServerProcess server_;
  TempDir cache_;
  std::unique_ptr<Scenario> scenario_;
};

// §十二.1: every watch ends, three times; informers resume from their resourceVersion.
TEST_F(FaultsTest, EveryWatchClosed) {
  auto close = [&] { scenario_->Fault("/converge/faults/close-watches"); };
  scenario_->Run({.scaling_up = close, .rolling = close, .scaling_down = close});
  EXPECT_NE(server_.log().find("faults: closing every watch"), std::string::npos);
}

// §四: the store is compacted and the watch caches forget their history; clients resuming from
// older resourceVersions get 410 Expired and relist (the checker is one of them).
TEST_F(FaultsTest, CompactionForcesRelists) {
  auto compact = [&] {
    CommandResult r = scenario_->Fault("/converge/faults/compact");
    EXPECT_NE(r.out.find("compactedRevision"), std::string::npos) << r.out;
  };
  scenario_->Run({.scaling_up = compact, .rolling = compact, .scaling_down = compact});
  EXPECT_GE(scenario_->checker().stats().relists, 1) << "no watch was answered 410";
  // A watch from before the compaction is refused: the client must relist.
  auto client = server_.Client();
  auto w = client->Watch("/api/v1/namespaces/default/pods?watch=true&resourceVersion=1");
  ASSERT_EQ(w->status(), 200);  // as upstream: the 410 comes as the stream's one ERROR event
  std::optional<boost::json::value> ev = w->Next(std::chrono::seconds(10));
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->at("type").as_string(), "ERROR") << boost::json::serialize(*ev);
  EXPECT_EQ(ev->at("object").at("code").to_number<int>(), 410) << boost::json::serialize(*ev);
}

// §十二.3: writes fail with 409 Conflict (a lost race) or 500 (a failing backend); controllers
// re-read and retry. Every armed failure must have been used.
void FailWrites(Scenario& s, int code) {
  const std::string c = std::to_string(code);
  // Pod creates only while scaling up (35 or more are still to come); the rest in both phases.
  auto arm_pods = [&s, c] {
    s.Fault("/converge/faults/fail-writes?resource=pods&verbs=create&count=5&code=" + c);
  };
  auto arm = [&s, c] {
    s.Fault("/converge/faults/fail-writes?resource=replicasets.apps&count=3&code=" + c);
    s.Fault(
        "/converge/faults/fail-writes?resource=deployments.apps&subresource=status&count=2"
        "&code=" +
        c);
  };
  s.Run({.scaling_up =
             [&] {
               arm_pods();
               arm();
             },
         .rolling = arm});
  boost::json::value faults = s.Faults();
  ASSERT_TRUE(faults.is_object()) << "GET /converge/faults";
  EXPECT_TRUE(faults.at("failWrites").as_array().empty())
      << "armed write failures were never hit: " << boost::json::serialize(faults);
}

TEST_F(FaultsTest, WritesFailWithConflict) {
  FailWrites(*scenario_, 409);
  EXPECT_NE(server_.log().find("with 409"), std::string::npos);
}

TEST_F(FaultsTest, WritesFailWithInternalError) {
  FailWrites(*scenario_, 500);
  EXPECT_NE(server_.log().find("with 500"), std::string::npos);
}

// §十二.4: the controller-manager's informers run 1.5 s behind the API server while it scales
// and rolls out: expectations and stable decisions must keep it from creating pods twice.
TEST_F(FaultsTest, StaleControllerCache) {
  bool seen_delay = false;
  scenario_->Run({
      .scaling_up =
          [&] {
            scenario_->Fault(
                "/converge/faults/watch-delay?component=controller-manager&seconds=1.5");
            boost::json::value f = scenario_->Faults();
            seen_delay =
                f.is_object() &&
                f.at("watchDelayMilliseconds").at("controller-manager").to_number<int>() == 1500;
          },
      .faults_stop =
          [&] {
            scenario_->Fault("/converge/faults/watch-delay?component=controller-manager&seconds=0");
          },
  });
  EXPECT_TRUE(seen_delay) << "the delay was not in force";
}

// A node stops heartbeating long enough to be marked unreachable, then comes back. Upstream's
// timings scaled down ten-fold: node Leases of 4 s renewed every second (upstream: 40 s, every
// 10 s) and a grace period of 5 s (upstream: 50 s), so a healthy node still has five renewals in
// every grace period; the node lifecycle controller looks every second (upstream: 5 s).
TEST_F(FaultsTest, NodeHeartbeatsPauseAndResume) {
  server_.Stop();
  ASSERT_TRUE(server_.Start(
      {.command = "server",
       .extra_args = {"--nodes", "3", "--enable-fault-injection", "--node-lease-duration-seconds",
                      "4", "--node-monitor-grace-period", "5s", "--node-monitor-period", "1s"},
       .data_dir = server_.data_dir()}));
  {
    // The node's Lease carries the flag's duration once the restarted kubelet has renewed it (the
    // Lease of the server run before this one said 40).
    auto client = server_.Client();
    int64_t duration = -1;
    std::string body;
    for (int i = 0; i < 300 && duration != 4; ++i) {
      testing::HttpResponse lease = client->Get(
          "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/converge-node-1");
      body = lease.body;
      if (lease.status == 200) {
        duration = lease.Json().at("spec").at("leaseDurationSeconds").as_int64();
      }
      if (duration != 4) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(duration, 4) << body;
  }
  auto node_ready = [](testing::TestClient& c) {
    testing::HttpResponse r = c.Get("/api/v1/nodes/converge-node-1");
    if (r.status != 200) return -1;
    const boost::json::value node = r.Json();
    for (const auto& cond : node.at("status").at("conditions").as_array()) {
      if (cond.at("type").as_string() == "Ready")
        return cond.at("status").as_string() == "True" ? 1 : 0;
    }
    return -1;
  };
  scenario_->Run({
      .scaling_up =
          [&] { scenario_->Fault("/converge/faults/heartbeats?node=converge-node-1&paused=true"); },
      .rolling =
          [&] {
            // Not Ready (Unknown) once the grace period passes without a heartbeat.
            scenario_->WaitFor(
                "converge-node-1 marked not ready",
                [&](testing::TestClient& c) { return node_ready(c) == 0 ? 1 : 0; }, 1);
          },
      .faults_stop =
          [&] {
            scenario_->Fault("/converge/faults/heartbeats?node=converge-node-1&paused=false");
          },
  });
}

// kill -9 of the whole server mid-scenario (acknowledged writes in flight), then a restart on
// the same data dir: everything acknowledged is still there, and the system converges.
TEST_F(FaultsTest, KilledServerRestartsOnSameDataDir) {
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::string> acknowledged;
  std::thread writer([&] {
    // Config maps written one after another until the server dies; each 201 is acknowledged.
    auto client = server_.Client();
    for (int i = 0; !stop && i < 3000; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::string name = "ack-" + std::to_string(i);
      testing::HttpResponse r =
          client->Post("/api/v1/namespaces/default/configmaps",
                       R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                           R"("},"data":{"i":")" + std::to_string(i) + R"("}})");
      if (r.status == 201) {
        std::lock_guard lock(mu);
        acknowledged.push_back(name);
      } else if (r.status == 0) {
        break;  // the server is gone
      }
    }
  });
  scenario_->Run({
      .rolling =
          [&] {
            server_.Kill();
            stop = true;
            writer.join();
            ASSERT_TRUE(server_.Start({.command = "server",
                                       .extra_args = {"--nodes", "3", "--enable-fault-injection"},
                                       .data_dir = server_.data_dir()}));
          },
  });
  if (writer.joinable()) {
    stop = true;
    writer.join();
  }
  ASSERT_FALSE(acknowledged.empty()) << "no write was acknowledged before the kill";
  auto client = server_.Client();
  std::set<std::string> present;
  testing::HttpResponse list = client->Get("/api/v1/namespaces/default/configmaps");
  ASSERT_EQ(list.status, 200);
  boost::json::value parsed = list.Json();
  ASSERT_TRUE(parsed.is_object()) << list.body.size() << " bytes: " << list.body.substr(0, 300);
  for (const auto& cm : parsed.at("items").as_array()) {
    present.insert(std::string(cm.at("metadata").at("name").as_string()));
  }
  for (const auto& name : acknowledged) {
    EXPECT_TRUE(present.count(name)) << name << " was acknowledged but is gone after the crash";
  }
  std::cout << acknowledged.size() << " acknowledged config maps survived kill -9\n";
}

}  // namespace
}  // namespace converge
