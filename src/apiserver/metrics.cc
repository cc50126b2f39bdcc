#include "apiserver/metrics.h"

#include <string>

namespace converge::apiserver {

namespace {

util::GaugeFamily& Inflight() {
  return util::DefaultRegistry().AddGauge({"apiserver_current_inflight_requests",
                                           "Requests being served, by kind (readOnly or mutating).",
                                           {"request_kind"}});
}

}  // namespace

ApiMetrics& ApiMetrics::Get() {
  static ApiMetrics* m = new ApiMetrics{
      util::DefaultRegistry().AddCounter(
          {"apiserver_request_total",
           "Requests served, by verb, group, version, resource, subresource, scope and code.",
           {"verb", "group", "version", "resource", "subresource", "scope", "code"}}),
      util::DefaultRegistry().AddHistogram(
          {"apiserver_request_duration_seconds",
           "Time to serve a request (for watches: until the stream was set up).",
           {"verb", "group", "version", "resource", "subresource", "scope"},
           {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60}}),
      Inflight().WithLabelValues({"readOnly"}),
      Inflight().WithLabelValues({"mutating"}),
      util::DefaultRegistry().AddGauge({"apiserver_longrunning_requests",
                                        "Open long-running requests (watches, followed logs).",
                                        {"verb", "group", "version", "resource"}}),
      // Upstream's buckets for this metric.
      util::DefaultRegistry().AddHistogram(
          {"etcd_request_duration_seconds",
           "Store request latency in seconds, by operation and object type (storage prefix).",
           {"operation", "type"},
           {0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2,
            3,     4,     5,    6,   8,   10,  15,  20,  30,  45,   60}}),
  };
  return *m;
}

namespace {

// Upstream's metrics.CleanVerb.
std::string MetricVerb(const Request& req, const RequestInfo& ri) {
  if (ri.verb == "watch" || ri.verb == "watchlist") return "WATCH";
  if (ri.verb == "list") return "LIST";
  std::string verb = req.method;
  for (auto& c : verb) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (verb == "PATCH") {
    std::string_view type = req.Header("content-type");
    type = type.substr(0, type.find(';'));
    if (type == "application/apply-patch+yaml") return "APPLY";
  }
  return verb;
}

}  // namespace

void ApiMetrics::Observe(const Request& req, const RequestInfo& ri, int code,
                         std::chrono::nanoseconds took) {
  const std::string verb = MetricVerb(req, ri);
  std::string scope = !ri.is_resource_request ? ""
                      : !ri.name.empty()      ? "resource"
                      : !ri.ns.empty()        ? "namespace"
                                              : "cluster";
  std::string code_text = std::to_string(code);
  // Non-resource paths are not labelled by path: unbounded label values would grow forever.
  std::string_view resource = ri.is_resource_request ? std::string_view(ri.resource) : "";
  requests.WithLabelValues({verb, ri.group, ri.version, resource, ri.subresource, scope, code_text})
      .Inc();
  latency.WithLabelValues({verb, ri.group, ri.version, resource, ri.subresource, scope})
      .Observe(std::chrono::duration<double>(took).count());
}

}  // namespace converge::apiserver
