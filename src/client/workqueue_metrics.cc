#include "client/workqueue_metrics.h"

namespace converge::client {

namespace {

// client-go's buckets for both durations: 10 ns to 10 s, one per decade, because queue waits span
// from nanoseconds (an idle worker picks the item up at once) to seconds (a backlog).
std::vector<double> DurationBuckets() {
  return util::ExponentialBuckets(10e-9, 10, 10);
}

}  // namespace

WorkQueueMetricSet WorkQueueMetricSet::Declare(util::Registry& registry,
                                               std::string_view queue_name) {
  const std::initializer_list<std::string_view> name = {queue_name};
  return WorkQueueMetricSet{
      .depth = &registry
                    .AddGauge({.name = "workqueue_depth",
                               .help = "Current depth of workqueue",
                               .labels = {"name"}})
                    .WithLabelValues(name),
      .adds = &registry
                   .AddCounter({.name = "workqueue_adds_total",
                                .help = "Total number of adds handled by workqueue",
                                .labels = {"name"}})
                   .WithLabelValues(name),
      .queue_duration =
          &registry
               .AddHistogram({.name = "workqueue_queue_duration_seconds",
                              .help = "How long in seconds an item stays in workqueue before "
                                      "being requested.",
                              .labels = {"name"},
                              .buckets = DurationBuckets()})
               .WithLabelValues(name),
      .work_duration =
          &registry
               .AddHistogram({.name = "workqueue_work_duration_seconds",
                              .help = "How long in seconds processing an item from workqueue "
                                      "takes.",
                              .labels = {"name"},
                              .buckets = DurationBuckets()})
               .WithLabelValues(name),
      .unfinished_work =
          &registry
               .AddGauge({.name = "workqueue_unfinished_work_seconds",
                          .help = "How many seconds of work has done that is in progress and "
                                  "hasn't been observed by work_duration. Large values indicate "
                                  "stuck threads. One can deduce the number of stuck threads by "
                                  "observing the rate at which this increases.",
                          .labels = {"name"}})
               .WithLabelValues(name),
      .longest_running_processor =
          &registry
               .AddGauge({.name = "workqueue_longest_running_processor_seconds",
                          .help = "How many seconds has the longest running processor for "
                                  "workqueue been running.",
                          .labels = {"name"}})
               .WithLabelValues(name),
      .retries = &registry
                      .AddCounter({.name = "workqueue_retries_total",
                                   .help = "Total number of retries handled by workqueue",
                                   .labels = {"name"}})
                      .WithLabelValues(name),
  };
}

}  // namespace converge::client
