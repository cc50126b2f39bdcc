#include "client/workqueue_metrics.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "client/rate_limiting_queue.h"
#include "client/workqueue.h"
#include "client/workqueue_test_util.h"

namespace converge::client {
namespace {

using namespace std::chrono_literals;

// The exposition lines of `registry` that start with `prefix` (a series name plus `{`).
std::string Lines(const util::Registry& registry, std::string_view prefix) {
  std::istringstream in(registry.Render());
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) out += line + "\n";
  }
  return out;
}

TEST(WorkQueueMetricsTest, NamedQueueRecordsClientGoMetrics) {
  util::FakeClock clock;
  util::Registry registry;
  WorkQueue<std::string> q({.name = "deployment", .clock = &clock, .registry = &registry});
  q.Add("a");
  q.Add("b");
  q.Add("a");  // deduplicated: not an add
  clock.Step(2s);
  ASSERT_EQ(q.Get(), "a");  // queued for 2 s
  clock.Step(3s);
  ASSERT_EQ(q.Get(), "b");  // queued for 5 s
  clock.Step(1s);

  EXPECT_EQ(Lines(registry, "workqueue_depth{"), "workqueue_depth{name=\"deployment\"} 0\n");
  EXPECT_EQ(Lines(registry, "workqueue_adds_total{"),
            "workqueue_adds_total{name=\"deployment\"} 2\n");
  EXPECT_EQ(Lines(registry, "workqueue_queue_duration_seconds_"),
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\",le=\"1e-08\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\",le=\"1e-07\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\",le=\"1e-06\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\","
            "le=\"9.999999999999999e-06\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\","
            "le=\"9.999999999999999e-05\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\",le=\"0.001\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\",le=\"0.01\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\",le=\"0.1\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\",le=\"1\"} 0\n"
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\",le=\"10\"} 2\n"
            "workqueue_queue_duration_seconds_bucket{name=\"deployment\",le=\"+Inf\"} 2\n"
            "workqueue_queue_duration_seconds_sum{name=\"deployment\"} 7\n"
            "workqueue_queue_duration_seconds_count{name=\"deployment\"} 2\n");
  // "a" has been processed for 4 s and "b" for 1 s, neither is Done.
  EXPECT_EQ(Lines(registry, "workqueue_unfinished_work_seconds{"),
            "workqueue_unfinished_work_seconds{name=\"deployment\"} 5\n");
  EXPECT_EQ(Lines(registry, "workqueue_longest_running_processor_seconds{"),
            "workqueue_longest_running_processor_seconds{name=\"deployment\"} 4\n");
  EXPECT_EQ(Lines(registry, "workqueue_work_duration_seconds_count{"),
            "workqueue_work_duration_seconds_count{name=\"deployment\"} 0\n");

  q.Done("a");
  clock.Step(500ms);
  EXPECT_EQ(Lines(registry, "workqueue_work_duration_seconds_sum{"),
            "workqueue_work_duration_seconds_sum{name=\"deployment\"} 4\n");
  EXPECT_EQ(Lines(registry, "workqueue_unfinished_work_seconds{"),
            "workqueue_unfinished_work_seconds{name=\"deployment\"} 1.5\n");
  q.Done("b");
  EXPECT_EQ(Lines(registry, "workqueue_unfinished_work_seconds{"),
            "workqueue_unfinished_work_seconds{name=\"deployment\"} 0\n");
  EXPECT_EQ(Lines(registry, "workqueue_longest_running_processor_seconds{"),
            "workqueue_longest_running_processor_seconds{name=\"deployment\"} 0\n");
  EXPECT_EQ(Lines(registry, "workqueue_work_duration_seconds_count{"),
            "workqueue_work_duration_seconds_count{name=\"deployment\"} 2\n");
  EXPECT_EQ(Lines(registry, "workqueue_retries_total{"),
            "workqueue_retries_total{name=\"deployment\"} 0\n");
}

TEST(WorkQueueMetricsTest, AddWhileProcessingCountsInDepthAndQueueTime) {
  util::FakeClock clock;
  util::Registry registry;
  WorkQueue<std::string> q({.name = "q", .clock = &clock, .registry = &registry});
  q.Add("a");
  ASSERT_EQ(q.Get(), "a");
  q.Add("a");  // dirty while processing: waiting for Done, counted in depth
  EXPECT_EQ(Lines(registry, "workqueue_depth{"), "workqueue_depth{name=\"q\"} 1\n");
  clock.Step(3s);
  q.Done("a");
  ASSERT_EQ(q.Get(), "a");
  EXPECT_EQ(Lines(registry, "workqueue_depth{"), "workqueue_depth{name=\"q\"} 0\n");
  EXPECT_EQ(Lines(registry, "workqueue_adds_total{"), "workqueue_adds_total{name=\"q\"} 2\n");
  EXPECT_EQ(Lines(registry, "workqueue_queue_duration_seconds_sum{"),
            "workqueue_queue_duration_seconds_sum{name=\"q\"} 3\n");
}

TEST(WorkQueueMetricsTest, RetriesCountEveryAddAfterAndAddRateLimited) {
  util::FakeClock clock;
  util::Registry registry;
  RateLimitingQueue<std::string> q({.name = "rs", .clock = &clock, .registry = &registry});
  q.AddAfter("a", 0s);
  q.AddAfter("b", 1s);
  q.AddRateLimited("c");
  EXPECT_EQ(Lines(registry, "workqueue_retries_total{"),
            "workqueue_retries_total{name=\"rs\"} 3\n");
  EXPECT_EQ(Lines(registry, "workqueue_adds_total{"), "workqueue_adds_total{name=\"rs\"} 1\n");
}

TEST(WorkQueueMetricsTest, QueuesAreLabelledByName) {
  util::Registry registry;
  WorkQueue<std::string> a({.name = "alpha", .registry = &registry});
  WorkQueue<std::string> b({.name = "beta", .registry = &registry});
  a.Add("x");
  b.Add("x");
  b.Add("y");
  EXPECT_EQ(Lines(registry, "workqueue_depth{"),
            "workqueue_depth{name=\"alpha\"} 1\n"
            "workqueue_depth{name=\"beta\"} 2\n");
}

TEST(WorkQueueMetricsTest, UnnamedQueuesRecordNothing) {
  util::Registry registry;
  RateLimitingQueue<std::string> q({.registry = &registry});
  q.Add("a");
  q.AddRateLimited("b");
  ASSERT_EQ(q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(registry.Render(), "");
}

TEST(WorkQueueMetricsTest, DestroyedQueueLeavesItsHookBehindSafely) {
  util::Registry registry;
  {
    WorkQueue<std::string> q({.name = "gone", .registry = &registry});
    q.Add("a");
    ASSERT_EQ(q.Get(), "a");
  }
  // The hook of the destroyed queue must not run (ASan would catch a use after free).
  EXPECT_EQ(Lines(registry, "workqueue_depth{"), "workqueue_depth{name=\"gone\"} 0\n");
}

TEST(WorkQueueMetricsTest, ScrapingWhileWorkersRunIsSafe) {
  util::Registry registry;
  WorkQueue<int> q({.name = "busy", .registry = &registry});
  std::atomic<bool> done{false};
  std::thread scraper([&] {
    while (!done) (void)registry.Render();
  });
  std::thread worker([&] {
    while (std::optional<int> item = q.Get()) q.Done(*item);
  });
  for (int i = 0; i < 5000; ++i) q.Add(i % 50);
  q.ShutDownWithDrain();
  worker.join();
  done = true;
  scraper.join();
  EXPECT_EQ(Lines(registry, "workqueue_depth{"), "workqueue_depth{name=\"busy\"} 0\n");
  EXPECT_EQ(Lines(registry, "workqueue_unfinished_work_seconds{"),
            "workqueue_unfinished_work_seconds{name=\"busy\"} 0\n");
}

}  // namespace
}  // namespace converge::client
