#include "scheduler/metrics.h"

namespace converge::scheduler {

SchedulerMetrics::SchedulerMetrics(util::Registry& r, const std::string& profile) {
  util::CounterFamily& attempts = r.AddCounter(
      {.name = "scheduler_schedule_attempts_total",
       .help = "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
               "could not be scheduled, while 'error' means an internal scheduler problem.",
       .labels = {"result", "profile"}});
  attempts_scheduled = &attempts.WithLabelValues({"scheduled", profile});
  attempts_unschedulable = &attempts.WithLabelValues({"unschedulable", profile});
  attempts_error = &attempts.WithLabelValues({"error", profile});

  util::HistogramFamily& attempt_duration = r.AddHistogram(
      {.name = "scheduler_scheduling_attempt_duration_seconds",
       .help = "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
       .labels = {"result", "profile"},
       .buckets = util::ExponentialBuckets(0.001, 2, 15)});
  attempt_duration_scheduled = &attempt_duration.WithLabelValues({"scheduled", profile});
  attempt_duration_unschedulable = &attempt_duration.WithLabelValues({"unschedulable", profile});
  attempt_duration_error = &attempt_duration.WithLabelValues({"error", profile});

  algorithm_duration = &r.AddHistogram({.name = "scheduler_scheduling_algorithm_duration_seconds",
                                        .help = "Scheduling algorithm latency in seconds",
                                        .buckets = util::ExponentialBuckets(0.001, 2, 15)})
                            .WithLabelValues({});
  sli_duration = &r.AddHistogram(
      {.name = "scheduler_pod_scheduling_sli_duration_seconds",
       .help = "E2e latency for a pod being scheduled, from the time the pod enters the "
               "scheduling queue and might involve multiple scheduling attempts.",
       .labels = {"attempts"},
       .buckets = util::ExponentialBuckets(0.01, 2, 20)});
  pod_scheduling_attempts =
      &r.AddHistogram({.name = "scheduler_pod_scheduling_attempts",
                       .help = "Number of attempts to successfully schedule a pod.",
                       .buckets = util::ExponentialBuckets(1, 2, 5)})
           .WithLabelValues({});
  util::HistogramFamily& ext =
      r.AddHistogram({.name = "scheduler_framework_extension_point_duration_seconds",
                      .help = "Latency for running all plugins of a specific extension point.",
                      .labels = {"extension_point", "status", "profile"},
                      .buckets = util::ExponentialBuckets(0.0001, 2, 12)});
  bind_duration_success = &ext.WithLabelValues({"Bind", "Success", profile});
  bind_duration_error = &ext.WithLabelValues({"Bind", "Error", profile});
  preemption_attempts = &r.AddCounter({.name = "scheduler_preemption_attempts_total",
                                       .help = "Total preemption attempts in the cluster till now"})
                             .WithLabelValues({});
  preemption_victims = &r.AddHistogram({.name = "scheduler_preemption_victims",
                                        .help = "Number of selected preemption victims",
                                        .buckets = util::ExponentialBuckets(1, 2, 7)})
                            .WithLabelValues({});
  util::GaugeFamily& pending = r.AddGauge(
      {.name = "scheduler_pending_pods",
       .help = "Number of pending pods, by the queue type. 'active' means number of pods in "
               "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
               "number of pods in unschedulablePods that the scheduler attempted to schedule "
               "and failed; 'gated' is the number of unschedulable pods that the scheduler never "
               "attempted to schedule because they are gated.",
       .labels = {"queue"}});
  pending_active = &pending.WithLabelValues({"active"});
  pending_backoff = &pending.WithLabelValues({"backoff"});
  pending_unschedulable = &pending.WithLabelValues({"unschedulable"});
  pending_gated = &pending.WithLabelValues({"gated"});
}

}  // namespace converge::scheduler
