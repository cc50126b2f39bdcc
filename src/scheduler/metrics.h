// The scheduler's Prometheus metrics, under upstream's names:
//
//   scheduler_schedule_attempts_total{result,profile}             counter
//   scheduler_scheduling_attempt_duration_seconds{result,profile} histogram (filter+score+assume)
//   scheduler_scheduling_algorithm_duration_seconds               histogram (filter+score)
//   scheduler_pod_scheduling_sli_duration_seconds{attempts}       histogram (first pop → bound)
//   scheduler_pod_scheduling_attempts                             histogram (attempts per pod)
//   scheduler_framework_extension_point_duration_seconds{extension_point="Bind",status,profile}
//   scheduler_preemption_attempts_total, scheduler_preemption_victims
//   scheduler_pending_pods{queue}                                 gauge: active, backoff,
//                                                                 unschedulable, gated
//
// result is "scheduled", "unschedulable" or "error".
//
// Thread-safety: the metrics are lock-free to update.
#pragma once

#include <string>

#include "util/metrics.h"

namespace converge::scheduler {

struct SchedulerMetrics {
  SchedulerMetrics(util::Registry& registry, const std::string& profile);

  util::Counter* attempts_scheduled;
  util::Counter* attempts_unschedulable;
  util::Counter* attempts_error;
  util::Histogram* attempt_duration_scheduled;
  util::Histogram* attempt_duration_unschedulable;
  util::Histogram* attempt_duration_error;
  util::Histogram* algorithm_duration;
  util::HistogramFamily* sli_duration;  // {attempts}
  util::Histogram* pod_scheduling_attempts;
  util::Histogram* bind_duration_success;
  util::Histogram* bind_duration_error;
  util::Counter* preemption_attempts;
  util::Histogram* preemption_victims;
  util::Gauge* pending_active;
  util::Gauge* pending_backoff;
  util::Gauge* pending_unschedulable;
  util::Gauge* pending_gated;
};

}  // namespace converge::scheduler
