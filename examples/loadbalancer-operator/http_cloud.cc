#include "http_cloud.h"

#include <boost/json.hpp>

#include "client/http_transport.h"

namespace lboperator {

namespace json = boost::json;

namespace {

constexpr const char* kCollection = "/v1/loadbalancers";

json::array PortsJson(const std::vector<Port>& ports) {
  json::array out;
  for (const Port& p : ports)
    out.push_back(json::object{{"port", p.port}, {"protocol", p.protocol}});
  return out;
}

// A non-2xx answer as a Status (cloud.h's codes).
util::Status StatusFromCloud(const client::HttpResponse& r) {
  std::string message = "cloud answered " + std::to_string(r.status);
  boost::system::error_code ec;
  json::value body = json::parse(r.body, ec);
  if (!ec) {
    if (const json::value* m = body.is_object() ? body.as_object().if_contains("error") : nullptr;
        m != nullptr && m->is_object()) {
      message += ": " + std::string(api::FindString(m->as_object(), {"message"}));
    }
  }
  if (r.status == 404) return util::NotFound(message);
  if (r.status >= 500 || r.status == 429) return util::Unavailable(message);
  if (r.status >= 400) return util::InvalidArgument(message);
  return util::Status(util::Code::kUnknown, message);
}

util::StatusOr<json::value> ParseBody(const client::HttpResponse& r) {
  boost::system::error_code ec;
  json::value v = json::parse(r.body, ec);
  if (ec) return util::Status(util::Code::kUnknown, "cloud answered malformed JSON");
  return v;
}

}  // namespace

util::StatusOr<ExternalLoadBalancer> ParseExternalLoadBalancer(const json::value& v) {
  const json::object* o = v.if_object();
  if (o == nullptr) return util::Status(util::Code::kUnknown, "load balancer: not an object");
  ExternalLoadBalancer lb;
  lb.id = std::string(api::FindString(*o, {"id"}));
  if (lb.id.empty()) return util::Status(util::Code::kUnknown, "load balancer without an id");
  lb.name = std::string(api::FindString(*o, {"name"}));
  lb.address = std::string(api::FindString(*o, {"address"}));
  lb.state = std::string(api::FindString(*o, {"state"}));
  if (const json::object* tags = api::FindObject(*o, {"tags"})) {
    for (const auto& [k, val] : *tags) {
      if (val.is_string()) lb.tags[std::string(k)] = std::string(val.as_string());
    }
  }
  if (const json::array* ports = api::FindArray(*o, {"ports"})) {
    for (const json::value& p : *ports) {
      if (!p.is_object()) continue;
      lb.ports.push_back({.port = static_cast<int32_t>(api::FindInt(p.as_object(), {"port"})),
                          .protocol = std::string(api::FindString(p.as_object(), {"protocol"}))});
    }
  }
  return lb;
}

util::StatusOr<std::unique_ptr<HttpCloud>> HttpCloud::ForUrl(const std::string& url,
                                                             std::chrono::milliseconds timeout) {
  client::HttpTransportOptions o;
  o.config.server = url;
  o.config.timeout = timeout;
  o.config.user_agent = "loadbalancer-operator/0.1";
  o.connect_timeout = timeout;
  util::StatusOr<std::unique_ptr<client::HttpTransport>> t = client::HttpTransport::New(o);
  if (!t.ok()) return t.status();
  return std::make_unique<HttpCloud>(HttpCloudOptions{
      .transport = std::shared_ptr<client::Transport>(std::move(*t)), .timeout = timeout});
}

util::StatusOr<client::HttpResponse> HttpCloud::Call(client::HttpRequest request,
                                                     std::stop_token stop) {
  request.timeout = options_.timeout;
  request.stop = stop;
  request.headers.emplace_back("accept", "application/json");
  if (!request.body.empty()) request.headers.emplace_back("content-type", "application/json");
  util::StatusOr<client::HttpResponse> r = options_.transport->Do(std::move(request));
  if (!r.ok()) {
    // Connection-level failures: the transport's codes already match cloud.h (kUnavailable,
    // kDeadlineExceeded, kCancelled).
    return r.status().WithContext("cloud");
  }
  if (r->status < 200 || r->status >= 300) return StatusFromCloud(*r);
  return r;
}

util::StatusOr<ExternalLoadBalancer> HttpCloud::Create(const CreateRequest& req,
                                                       std::stop_token stop) {
  json::object tags;
  for (const auto& [k, v] : req.tags) tags[k] = v;
  client::HttpRequest r{.method = "POST", .path = kCollection};
  r.body = json::serialize(
      json::object{{"name", req.name}, {"tags", std::move(tags)}, {"ports", PortsJson(req.ports)}});
  if (!req.idempotency_key.empty()) r.headers.emplace_back("idempotency-key", req.idempotency_key);
  util::StatusOr<client::HttpResponse> resp = Call(std::move(r), stop);
  if (!resp.ok()) return resp.status();
  util::StatusOr<json::value> body = ParseBody(*resp);
  if (!body.ok()) return body.status();
  return ParseExternalLoadBalancer(*body);
}

util::StatusOr<std::vector<ExternalLoadBalancer>> HttpCloud::ListByTag(const std::string& key,
                                                                       const std::string& value,
                                                                       std::stop_token stop) {
  client::HttpRequest r{.method = "GET", .path = kCollection};
  r.query.emplace_back("tag", key + "=" + value);
  util::StatusOr<client::HttpResponse> resp = Call(std::move(r), stop);
  if (!resp.ok()) return resp.status();
  util::StatusOr<json::value> body = ParseBody(*resp);
  if (!body.ok()) return body.status();
  const json::array* items =
      body->is_object() ? api::FindArray(body->as_object(), {"items"}) : nullptr;
  if (items == nullptr) return util::Status(util::Code::kUnknown, "list without items");
  std::vector<ExternalLoadBalancer> out;
  for (const json::value& item : *items) {
    util::StatusOr<ExternalLoadBalancer> lb = ParseExternalLoadBalancer(item);
    if (!lb.ok()) return lb.status();
    out.push_back(std::move(*lb));
  }
  return out;
}

util::StatusOr<ExternalLoadBalancer> HttpCloud::UpdatePorts(const std::string& id,
                                                            const std::vector<Port>& ports,
                                                            std::stop_token stop) {
  client::HttpRequest r{.method = "PATCH", .path = std::string(kCollection) + "/" + id};
  r.body = json::serialize(json::object{{"ports", PortsJson(ports)}});
  util::StatusOr<client::HttpResponse> resp = Call(std::move(r), stop);
  if (!resp.ok()) return resp.status();
  util::StatusOr<json::value> body = ParseBody(*resp);
  if (!body.ok()) return body.status();
  return ParseExternalLoadBalancer(*body);
}

util::Status HttpCloud::Delete(const std::string& id, std::stop_token stop) {
  client::HttpRequest r{.method = "DELETE", .path = std::string(kCollection) + "/" + id};
  return Call(std::move(r), stop).status();
}

}  // namespace lboperator
