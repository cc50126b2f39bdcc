// The API server's metrics, declared once (names follow upstream's apiserver_* metrics).
#pragma once

#include <chrono>

#include "apiserver/request.h"
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
  // etcd_request_duration_seconds{operation, type}: the time of each store request a resource
  // storage makes (operation get, listWithCount, create, update or delete; type the resource's
  // storage prefix, "/registry/configmaps/"), as upstream's etcd3 storage records it. Writes
  // are acknowledged once durable, so create/update/delete are the store's commit latency.
  util::HistogramFamily& store_requests;

  // Records one finished request. The verb label is upstream's (CleanVerb): the HTTP method,
  // with GET split into GET, LIST and WATCH, and APPLY for apply patches.
  void Observe(const Request& req, const RequestInfo& ri, int code, std::chrono::nanoseconds took);
};

}  // namespace converge::apiserver
