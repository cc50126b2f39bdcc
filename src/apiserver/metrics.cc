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
  };
  return *m;
}

void ApiMetrics::Observe(const RequestInfo& ri, int code, std::chrono::nanoseconds took) {
  std::string verb = ri.is_resource_request ? ri.verb : ri.verb;
  for (auto& c : verb) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
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
