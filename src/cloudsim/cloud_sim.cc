#include "cloudsim/cloud_sim.h"

#include <spdlog/spdlog.h>

#include <boost/json.hpp>

#include "apiserver/http_server.h"

namespace converge::cloudsim {

namespace json = boost::json;
using apiserver::Request;
using apiserver::Response;

namespace {

constexpr std::string_view kCollection = "/v1/loadbalancers";

Response JsonResponse(int status, const json::value& body) {
  Response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = json::serialize(body);
  return r;
}

Response Error(int status, std::string_view code, std::string_view message) {
  return JsonResponse(status,
                      json::object{{"error", json::object{{"code", code}, {"message", message}}}});
}

std::string_view ErrorCode(int status) {
  switch (status) {
    case 500: return "InternalError";
    case 502: return "BadGateway";
    case 503: return "ServiceUnavailable";
    default: return "Error";
  }
}

// The `tag` query parameters ("k=v") as a filter.
util::StatusOr<Tags> TagFilter(const Request& req) {
  Tags tags;
  for (const auto& [k, v] : req.query) {
    if (k != "tag") continue;
    size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0) {
      return util::InvalidArgument("tag: want key=value, got \"" + v + "\"");
    }
    tags[v.substr(0, eq)] = v.substr(eq + 1);
  }
  return tags;
}

util::StatusOr<json::object> ParseObject(const std::string& body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return util::InvalidArgument("body: want a JSON object");
  return std::move(v.as_object());
}

Response List(const LoadBalancerStore& store, const Request& req) {
  util::StatusOr<Tags> filter = TagFilter(req);
  if (!filter.ok()) return Error(400, "InvalidArgument", filter.status().message());
  json::array items;
  for (const LoadBalancer& lb : store.List(*filter)) items.push_back(ToJson(lb));
  return JsonResponse(200, json::object{{"items", std::move(items)}});
}

}  // namespace

CloudSim::CloudSim(CloudSimOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()),
      store_({.provisioning_delay = options_.provisioning_delay, .clock = clock_}),
      faults_({.config = options_.faults, .seed = options_.seed, .clock = clock_}) {}

CloudSim::~CloudSim() {
  Stop();
}

util::Status CloudSim::Start() {
  apiserver::HttpServerOptions ho;
  ho.listen = options_.listen;
  ho.io_threads = 1;
  ho.worker_threads = options_.worker_threads;
  ho.enable_http2 = false;
  ho.handler = [this](Request& r) { return Handle(r); };
  http_ = std::make_unique<apiserver::HttpServer>(std::move(ho));
  return http_->Start();
}

void CloudSim::Stop() {
  {
    std::lock_guard lock(wait_mu_);
    stopping_ = true;
  }
  wait_cv_.notify_all();
  if (http_ != nullptr) http_->Stop();
}

uint16_t CloudSim::port() const {
  return http_ != nullptr ? http_->port() : 0;
}

void CloudSim::Wait(std::chrono::milliseconds d) {
  if (d <= std::chrono::milliseconds::zero()) return;
  const util::Clock::TimePoint deadline = clock_->Now() + d;
  std::unique_lock lock(wait_mu_);
  while (!stopping_ && clock_->Now() < deadline) clock_->WaitUntil(wait_cv_, lock, deadline);
}

json::object CloudSim::CountersJson() const {
  const LoadBalancerStore::Counters s = store_.counters();
  const FaultInjector::Counters f = faults_.counters();
  return json::object{
      {"calls", calls_.load()},
      {"createCalls", create_calls_.load()},
      {"creates", s.creates},
      {"idempotentReplays", s.idempotent_replays},
      {"deletes", s.deletes},
      {"liveLoadBalancers", s.live},
      {"injectedErrors", f.injected_errors},
      {"injectedTimeouts", f.injected_timeouts},
      {"outageRejections", f.outage_rejections},
  };
}

Response CloudSim::Handle(const Request& req) {
  const std::string& path = req.path;
  if (path == "/healthz") {
    Response r;
    r.content_type = "text/plain";
    r.body = "ok";
    return r;
  }
  if (path == "/admin/faults") {
    if (req.method == "GET") return JsonResponse(200, faults_.ToJson());
    if (req.method != "PUT" && req.method != "PATCH") {
      return Error(405, "MethodNotAllowed", "GET, PUT or PATCH");
    }
    util::StatusOr<json::object> body = ParseObject(req.body);
    util::Status s = body.ok() ? faults_.Patch(*body) : body.status();
    if (!s.ok()) return Error(400, "InvalidArgument", s.message());
    spdlog::info("cloud-sim: faults now {}", json::serialize(faults_.ToJson()));
    return JsonResponse(200, faults_.ToJson());
  }
  if (path == "/admin/counters" && req.method == "GET") return JsonResponse(200, CountersJson());
  if (path == "/admin/loadbalancers" && req.method == "GET") return List(store_, req);
  if (path == kCollection || path.starts_with(std::string(kCollection) + "/")) {
    return HandleCloud(req);
  }
  return Error(404, "NotFound", "no such path: " + path);
}

Response CloudSim::HandleCloud(const Request& req) {
  ++calls_;
  std::string id;
  if (req.path.size() > kCollection.size()) {
    id = req.path.substr(kCollection.size() + 1);
    if (id.empty() || id.find('/') != std::string::npos) {
      return Error(404, "NotFound", "no such path: " + req.path);
    }
  }
  const bool is_create = id.empty() && req.method == "POST";
  if (is_create) ++create_calls_;
  const CallFaults f = faults_.Next(is_create);
  Wait(f.latency);
  if (f.fail_status != 0) {
    return Error(f.fail_status, ErrorCode(f.fail_status), "injected fault");
  }
  Response r = Perform(req, id);
  if (f.hang_after > std::chrono::milliseconds::zero()) {
    // The call is done; the client is left waiting past its timeout.
    spdlog::debug("cloud-sim: {} {} performed ({}), stalling {} ms", req.method, req.path, r.status,
                  f.hang_after.count());
    Wait(f.hang_after);
  }
  return r;
}

Response CloudSim::Perform(const Request& req, const std::string& id) {
  if (id.empty()) {
    if (req.method == "GET") return List(store_, req);
    if (req.method != "POST") return Error(405, "MethodNotAllowed", "GET or POST");
    util::StatusOr<json::object> body = ParseObject(req.body);
    if (!body.ok()) return Error(400, "InvalidArgument", body.status().message());
    util::StatusOr<LoadBalancer> spec = ParseCreateBody(*body);
    if (!spec.ok()) return Error(400, "InvalidArgument", spec.status().message());
    LoadBalancerStore::CreateResult c =
        store_.Create(*spec, std::string(req.Header("idempotency-key")));
    if (c.created) {
      spdlog::info("cloud-sim: created {} ({}) at {}", c.lb.id, c.lb.name, c.lb.address);
    }
    Response r = JsonResponse(c.created ? 201 : 200, ToJson(c.lb));
    if (!c.created) r.headers.emplace_back("Idempotent-Replayed", "true");
    return r;
  }
  if (req.method == "GET") {
    std::optional<LoadBalancer> lb = store_.Get(id);
    if (!lb) return Error(404, "NotFound", "load balancer " + id + " not found");
    return JsonResponse(200, ToJson(*lb));
  }
  if (req.method == "PATCH") {
    util::StatusOr<json::object> body = ParseObject(req.body);
    if (!body.ok()) return Error(400, "InvalidArgument", body.status().message());
    const json::value* ports_json = body->if_contains("ports");
    if (ports_json == nullptr) return Error(400, "InvalidArgument", "ports: required");
    util::StatusOr<std::vector<Port>> ports = ParsePorts(*ports_json);
    if (!ports.ok()) return Error(400, "InvalidArgument", ports.status().message());
    std::optional<LoadBalancer> lb = store_.UpdatePorts(id, std::move(*ports));
    if (!lb) return Error(404, "NotFound", "load balancer " + id + " not found");
    return JsonResponse(200, ToJson(*lb));
  }
  if (req.method == "DELETE") {
    std::optional<LoadBalancer> lb = store_.Get(id);
    if (!lb || !store_.Delete(id)) {
      return Error(404, "NotFound", "load balancer " + id + " not found");
    }
    spdlog::info("cloud-sim: deleted {} ({})", id, lb->name);
    lb->state = "deleted";
    return JsonResponse(200, ToJson(*lb));
  }
  return Error(405, "MethodNotAllowed", "GET, PATCH or DELETE");
}

}  // namespace converge::cloudsim
