#include "controllers/common/reconcile_metrics.h"

#include <gtest/gtest.h>

namespace converge::controllers {
namespace {

TEST(ReconcileMetricsTest, CountsEveryOutcomeAndTimesEachCall) {
  util::Registry registry;
  util::FakeClock clock;
  client::ReconcileResult next;
  client::ReconcileFunc f = InstrumentReconcile("replicaset", &registry, &clock,
                                                [&](const api::ObjectKey&, std::stop_token) {
                                                  clock.Step(std::chrono::milliseconds(250));
                                                  return next;
                                                });
  api::ObjectKey key{"default", "web"};
  for (client::ReconcileResult r :
       {client::ReconcileResult::Done(), client::ReconcileResult::Done(),
        client::ReconcileResult::Error(util::Unavailable("down")),
        client::ReconcileResult::Requeue(),
        client::ReconcileResult::RequeueAfter(std::chrono::seconds(3))}) {
    next = r;
    client::ReconcileResult got = f(key, {});
    EXPECT_EQ(got.error.ok(), r.error.ok()) << "the result passes through";
  }
  std::string text = registry.Render();
  for (const char* line :
       {"controller_runtime_reconcile_total{controller=\"replicaset\",result=\"success\"} 2",
        "controller_runtime_reconcile_total{controller=\"replicaset\",result=\"error\"} 1",
        "controller_runtime_reconcile_total{controller=\"replicaset\",result=\"requeue\"} 1",
        "controller_runtime_reconcile_total{controller=\"replicaset\",result=\"requeue_after\"} 1",
        "controller_runtime_reconcile_errors_total{controller=\"replicaset\"} 1",
        "controller_runtime_reconcile_time_seconds_count{controller=\"replicaset\"} 5",
        "controller_runtime_reconcile_time_seconds_sum{controller=\"replicaset\"} 1.25"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nin:\n" << text;
  }
}

}  // namespace
}  // namespace converge::controllers
