// The API server's metrics, declared once (names follow upstream's apiserver_* metrics).
#pragma once

#include <chrono>

#include "apiserver/request_info.h"
#include "util/metrics.h"

namespace converge::apiserver {

struct ApiMetrics {
  static ApiMetrics& Get();

  util::CounterFamily& requests;   // apiserver_request_total
  util::HistogramFamily& latency;  // apiserver_request_duration_seconds
  util::Gauge& inflight_readonly;  // apiserver_current_inflight_requests{readOnly}
  util::Gauge& inflight_mutating;  // apiserver_current_inflight_requests{mutating}
  util::GaugeFamily& longrunning;  // apiserver_longrunning_requests (open watches)

  // Records one finished request.
  void Observe(const RequestInfo& ri, int code, std::chrono::nanoseconds took);
};

}  // namespace converge::apiserver
