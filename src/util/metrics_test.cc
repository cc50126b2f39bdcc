#include "util/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace converge::util {
namespace {

TEST(MetricsTest, CounterWithLabelsRendersSortedChildren) {
  Registry r;
  CounterFamily& f = r.AddCounter(
      {.name = "http_requests_total", .help = "Requests.", .labels = {"verb", "code"}});
  f.WithLabelValues({"GET", "200"}).Inc();
  f.WithLabelValues({"GET", "200"}).Add(2);
  f.WithLabelValues({"DELETE", "404"}).Inc();
  EXPECT_EQ(r.Render(),
            "# HELP http_requests_total Requests.\n"
            "# TYPE http_requests_total counter\n"
            "http_requests_total{verb=\"DELETE\",code=\"404\"} 1\n"
            "http_requests_total{verb=\"GET\",code=\"200\"} 3\n");
}

TEST(MetricsTest, FamiliesRenderSortedByName) {
  Registry r;
  r.AddGauge({.name = "zeta", .help = "Z."}).WithLabelValues({}).Set(-2.5);
  r.AddCounter({.name = "alpha", .help = "A."});
  EXPECT_EQ(r.Render(),
            "# HELP alpha A.\n"
            "# TYPE alpha counter\n"
            "alpha 0\n"
            "# HELP zeta Z.\n"
            "# TYPE zeta gauge\n"
            "zeta -2.5\n");
}

TEST(MetricsTest, LabelledFamilyWithoutChildrenRendersNothing) {
  Registry r;
  r.AddGauge({.name = "workqueue_depth", .help = "Depth.", .labels = {"name"}});
  EXPECT_EQ(r.Render(), "");
}

TEST(MetricsTest, GaugeMovesBothWays) {
  Registry r;
  Gauge& g = r.AddGauge({.name = "g", .help = "G."}).WithLabelValues({});
  g.Inc();
  g.Inc();
  g.Dec();
  g.Add(0.25);
  g.Sub(2);
  EXPECT_DOUBLE_EQ(g.Value(), -0.75);
  g.Set(7);
  EXPECT_EQ(r.Render(), "# HELP g G.\n# TYPE g gauge\ng 7\n");
}

TEST(MetricsTest, HistogramRendersCumulativeBucketsSumAndCount) {
  Registry r;
  HistogramFamily& f = r.AddHistogram(
      {.name = "latency_seconds", .help = "Latency.", .labels = {"op"}, .buckets = {0.1, 1, 10}});
  Histogram& h = f.WithLabelValues({"read"});
  h.Observe(0.05);
  h.Observe(0.1);  // bounds are inclusive: lands in le="0.1"
  h.Observe(0.5);
  h.Observe(100);
  EXPECT_EQ(r.Render(),
            "# HELP latency_seconds Latency.\n"
            "# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{op=\"read\",le=\"0.1\"} 2\n"
            "latency_seconds_bucket{op=\"read\",le=\"1\"} 3\n"
            "latency_seconds_bucket{op=\"read\",le=\"10\"} 3\n"
            "latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 4\n"
            "latency_seconds_sum{op=\"read\"} 100.65\n"
            "latency_seconds_count{op=\"read\"} 4\n");
}

TEST(MetricsTest, HistogramWithoutLabels) {
  Registry r;
  Histogram& h = r.AddHistogram({.name = "h", .help = "H.", .buckets = {1, 2}}).WithLabelValues({});
  h.Observe(2);
  h.Observe(std::numeric_limits<double>::quiet_NaN());  // counted in +Inf
  EXPECT_EQ(h.CumulativeCounts(), (std::vector<uint64_t>{0, 1, 2}));
  h.Observe(-3);  // below every bound: first bucket
  EXPECT_EQ(h.Count(), 3u);
  Registry r2;
  Histogram& h2 =
      r2.AddHistogram({.name = "h", .help = "H.", .buckets = {1, 2}}).WithLabelValues({});
  h2.Observe(1.5);
  EXPECT_EQ(r2.Render(),
            "# HELP h H.\n"
            "# TYPE h histogram\n"
            "h_bucket{le=\"1\"} 0\n"
            "h_bucket{le=\"2\"} 1\n"
            "h_bucket{le=\"+Inf\"} 1\n"
            "h_sum 1.5\n"
            "h_count 1\n");
}

TEST(MetricsTest, DefaultBucketsAreLatencyBuckets) {
  Registry r;
  HistogramFamily& f = r.AddHistogram({.name = "d", .help = "D."});
  EXPECT_EQ(f.bounds(), DefaultLatencyBuckets());
  EXPECT_EQ(f.bounds().front(), 0.005);
  EXPECT_EQ(f.bounds().back(), 10);
}

TEST(MetricsTest, TrailingInfBoundIsImplicit) {
  Registry r;
  HistogramFamily& f = r.AddHistogram(
      {.name = "i", .help = "I.", .buckets = {1, std::numeric_limits<double>::infinity()}});
  EXPECT_EQ(f.bounds(), std::vector<double>{1});
}

// The `le` text of client-go's work queue buckets, as client_golang (and Python's repr) print
// ExponentialBuckets(1e-8, 10, 10): repeated multiplication makes two of them inexact.
TEST(MetricsTest, ExponentialBucketsRenderLikeClientGolang) {
  Registry r;
  r.AddHistogram({.name = "e", .help = "E.", .buckets = ExponentialBuckets(1e-8, 10, 10)})
      .WithLabelValues({})
      .Observe(0.5);
  EXPECT_EQ(r.Render(),
            "# HELP e E.\n"
            "# TYPE e histogram\n"
            "e_bucket{le=\"1e-08\"} 0\n"
            "e_bucket{le=\"1e-07\"} 0\n"
            "e_bucket{le=\"1e-06\"} 0\n"
            "e_bucket{le=\"9.999999999999999e-06\"} 0\n"
            "e_bucket{le=\"9.999999999999999e-05\"} 0\n"
            "e_bucket{le=\"0.001\"} 0\n"
            "e_bucket{le=\"0.01\"} 0\n"
            "e_bucket{le=\"0.1\"} 0\n"
            "e_bucket{le=\"1\"} 1\n"
            "e_bucket{le=\"10\"} 1\n"
            "e_bucket{le=\"+Inf\"} 1\n"
            "e_sum 0.5\n"
            "e_count 1\n");
}

TEST(MetricsTest, LinearBuckets) {
  EXPECT_EQ(LinearBuckets(1, 2, 3), (std::vector<double>{1, 3, 5}));
}

TEST(MetricsTest, EscapesLabelValuesAndHelp) {
  Registry r;
  r.AddCounter({.name = "c", .help = "a \\ b\nc \"q\"", .labels = {"path"}})
      .WithLabelValues({"C:\\x \"y\"\nz"})
      .Inc();
  EXPECT_EQ(r.Render(),
            "# HELP c a \\\\ b\\nc \"q\"\n"
            "# TYPE c counter\n"
            "c{path=\"C:\\\\x \\\"y\\\"\\nz\"} 1\n");
}

TEST(MetricsTest, FormatsSpecialAndFractionalValues) {
  struct Case {
    std::string name;
    double value;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"integer", 42, "42"},
      {"negative_integer", -7, "-7"},
      {"fraction", 0.30000000000000004, "0.30000000000000004"},
      {"small", 1e-9, "1e-09"},
      {"large_integral", 1e20, "1e+20"},
      {"two_pow_53", 9007199254740992.0, "9007199254740992"},
      {"pos_inf", std::numeric_limits<double>::infinity(), "+Inf"},
      {"neg_inf", -std::numeric_limits<double>::infinity(), "-Inf"},
      {"nan", std::numeric_limits<double>::quiet_NaN(), "NaN"},
  };
  for (const Case& c : cases) {
    Registry r;
    r.AddGauge({.name = "v", .help = "V."}).WithLabelValues({}).Set(c.value);
    EXPECT_EQ(r.Render(), "# HELP v V.\n# TYPE v gauge\nv " + c.text + "\n") << c.name;
  }
}

TEST(MetricsTest, IdenticalRedeclarationReturnsTheSameFamily) {
  Registry r;
  CounterFamily& a = r.AddCounter({.name = "x_total", .help = "X.", .labels = {"name"}});
  CounterFamily& b = r.AddCounter({.name = "x_total", .help = "X.", .labels = {"name"}});
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(&a.WithLabelValues({"q"}), &b.WithLabelValues({"q"}));
  HistogramFamily& h1 = r.AddHistogram({.name = "h", .help = "H.", .buckets = {1}});
  HistogramFamily& h2 = r.AddHistogram({.name = "h", .help = "H.", .buckets = {1}});
  EXPECT_EQ(&h1, &h2);
}

TEST(MetricsDeathTest, ProgrammingErrorsAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Registry r;
  r.AddCounter({.name = "x_total", .help = "X.", .labels = {"name"}});
  EXPECT_DEATH(r.AddGauge({.name = "x_total", .help = "X.", .labels = {"name"}}), "conflicting");
  EXPECT_DEATH(r.AddCounter({.name = "x_total", .help = "X.", .labels = {"other"}}), "conflicting");
  r.AddHistogram({.name = "h", .help = "H.", .buckets = {1}});
  EXPECT_DEATH(r.AddHistogram({.name = "h", .help = "H.", .buckets = {2}}), "conflicting");
  EXPECT_DEATH(r.AddCounter({.name = "1bad", .help = ""}), "invalid metric name");
  EXPECT_DEATH(r.AddCounter({.name = "ok", .help = "", .labels = {"__reserved"}}),
               "invalid label name");
  EXPECT_DEATH(r.AddCounter({.name = "ok", .help = "", .labels = {"a", "a"}}), "duplicate");
  EXPECT_DEATH(r.AddHistogram({.name = "ok", .help = "", .labels = {"le"}}), "le");
  EXPECT_DEATH(r.AddHistogram({.name = "ok", .help = "", .buckets = {2, 1}}), "increase");
  EXPECT_DEATH(r.AddCounter({.name = "c", .help = "", .labels = {"a"}}).WithLabelValues({}),
               "wrong number of label values");
  EXPECT_DEATH(r.AddCounter({.name = "d", .help = ""}).WithLabelValues({}).Add(-1), "decreased");
}

TEST(MetricsTest, CollectHooksRunBeforeRenderingUntilReset) {
  Registry r;
  Gauge& g = r.AddGauge({.name = "g", .help = "G."}).WithLabelValues({});
  int calls = 0;
  CollectHook hook = r.AddCollectHook([&] { g.Set(++calls); });
  EXPECT_EQ(r.Render(), "# HELP g G.\n# TYPE g gauge\ng 1\n");
  EXPECT_EQ(r.Render(), "# HELP g G.\n# TYPE g gauge\ng 2\n");
  hook.Reset();
  EXPECT_EQ(r.Render(), "# HELP g G.\n# TYPE g gauge\ng 2\n");
  EXPECT_EQ(calls, 2);
}

TEST(MetricsTest, MovedHookStaysRegisteredAndOverwrittenHookIsReset) {
  Registry r;
  int a = 0;
  int b = 0;
  CollectHook h1 = r.AddCollectHook([&] { ++a; });
  CollectHook h2 = std::move(h1);
  (void)r.Render();
  EXPECT_EQ(a, 1);
  h2 = r.AddCollectHook([&] { ++b; });  // resets the first hook
  (void)r.Render();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
}

TEST(MetricsTest, HookMayOutliveItsRegistry) {
  CollectHook hook;
  {
    Registry r;
    hook = r.AddCollectHook([] {});
  }
  hook.Reset();  // must not touch the destroyed registry (ASan would report it)
}

TEST(MetricsTest, RenderAppends) {
  Registry r;
  r.AddCounter({.name = "c", .help = "C."});
  std::string out = "prefix\n";
  r.RenderTo(&out);
  EXPECT_EQ(out, "prefix\n# HELP c C.\n# TYPE c counter\nc 0\n");
}

TEST(MetricsTest, DefaultRegistryIsOneInstance) {
  EXPECT_EQ(&DefaultRegistry(), &DefaultRegistry());
}

// Increments from many threads, creating children concurrently and rendering meanwhile: the final
// values are exact and (under TSan) race-free.
TEST(MetricsTest, ConcurrentUpdatesAreExact) {
  Registry r;
  CounterFamily& c = r.AddCounter({.name = "c", .help = "C.", .labels = {"k"}});
  HistogramFamily& h = r.AddHistogram({.name = "h", .help = "H.", .labels = {"k"}, .buckets = {1}});
  Gauge& g = r.AddGauge({.name = "g", .help = "G."}).WithLabelValues({});
  constexpr int kThreads = 8;
  constexpr int kIters = 2000;
  std::vector<std::thread> threads;
  std::atomic<bool> done{false};
  std::thread renderer([&] {
    while (!done) (void)r.Render();
  });
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        const std::string k = std::to_string(i % 10);
        c.WithLabelValues({k}).Inc();
        h.WithLabelValues({k}).Observe(t % 2 == 0 ? 0.5 : 2);
        g.Inc();
        g.Dec();
        g.Inc();
      }
    });
  }
  for (auto& t : threads) t.join();
  done = true;
  renderer.join();
  for (int k = 0; k < 10; ++k) {
    const std::string key = std::to_string(k);
    EXPECT_EQ(c.WithLabelValues({key}).Value(), kThreads * kIters / 10);
    EXPECT_EQ(h.WithLabelValues({key}).CumulativeCounts(),
              (std::vector<uint64_t>{kThreads * kIters / 20, kThreads * kIters / 10}));
  }
  EXPECT_EQ(g.Value(), kThreads * kIters);
}

}  // namespace
}  // namespace converge::util
