#include "server/fault_injector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <sstream>

#include "apiserver/errors.h"
#include "apiserver/handler_util.h"

namespace converge::server {

namespace json = boost::json;

namespace {

constexpr std::string_view kPrefix = "/converge/faults";

bool IsWrite(std::string_view verb) {
  return verb == "create" || verb == "update" || verb == "patch" || verb == "delete" ||
         verb == "deletecollection";
}

std::vector<std::string> SplitCommas(std::string_view s) {
  std::vector<std::string> out;
  std::stringstream ss{std::string(s)};
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::optional<double> ParseNumber(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

apiserver::Response Bad(std::string message) {
  return apiserver::ErrorResponse(apiserver::BadRequest(std::move(message)));
}

apiserver::Response Ok(json::object body) {
  return apiserver::JsonResponse(200, json::serialize(body));
}

}  // namespace

bool WriteFault::Matches(const apiserver::RequestInfo& ri) const {
  if (!ri.is_resource_request || !IsWrite(ri.verb)) return false;
  if (ri.group != group || ri.resource != resource) return false;
  if (!subresource.empty() && ri.subresource != subresource) return false;
  if (!ns.empty() && ri.ns != ns) return false;
  return verbs.empty() || std::find(verbs.begin(), verbs.end(), ri.verb) != verbs.end();
}

FaultInjector::FaultInjector(FaultInjectorOptions options) : options_(options) {}

std::optional<apiserver::Response> FaultInjector::Intercept(apiserver::Request& req,
                                                            const apiserver::RequestInfo& ri) {
  if (!ri.is_resource_request) {
    std::string_view path = req.path;
    if (path.starts_with(kPrefix) &&
        (path.size() == kPrefix.size() || path[kPrefix.size()] == '/')) {
      return Serve(req);
    }
    return std::nullopt;
  }
  if (!IsWrite(ri.verb)) return std::nullopt;
  int code = 0;
  {
    std::lock_guard lock(mu_);
    for (auto it = write_faults_.begin(); it != write_faults_.end(); ++it) {
      if (!it->Matches(ri)) continue;
      code = it->code;
      if (--it->remaining <= 0) write_faults_.erase(it);
      break;
    }
  }
  if (code == 0) return std::nullopt;
  api::GroupResource gr{ri.group, ri.resource};
  spdlog::info("faults: failing {} {} {}/{} with {}", ri.verb, gr.ToString(), ri.ns, ri.name, code);
  if (code == 409) {
    apiserver::ApiError e = apiserver::ConflictModified(gr, ri.name);
    e.message += " (injected fault)";
    return apiserver::ErrorResponse(e);
  }
  return apiserver::ErrorResponse(
      apiserver::InternalError("injected fault: " + ri.verb + " " + gr.ToString() + " failed"));
}

void FaultInjector::CloseWatches() {
  spdlog::info("faults: closing every watch");
  options_.api->cacher()->TerminateWatchers();
}

util::StatusOr<store::Revision> FaultInjector::CompactNow() {
  store::Revision rev = options_.kv->CurrentRevision();
  if (rev > options_.kv->CompactRevision()) {
    auto r = options_.kv->Compact(rev);
    if (!r.ok() && !store::IsCompacted(r.status())) return r.status();
  }
  // After the store: a client that relists at once reads at a revision the store still has.
  options_.api->cacher()->ForgetHistory();
  spdlog::info("faults: compacted to revision {}; watch history dropped, every watch closed", rev);
  return rev;
}

util::Status FaultInjector::FailWrites(WriteFault fault) {
  if (fault.resource.empty()) return util::InvalidArgument("resource is required");
  if (fault.code != 409 && fault.code != 500) {
    return util::InvalidArgument("code must be 409 or 500");
  }
  for (const auto& v : fault.verbs) {
    if (!IsWrite(v)) return util::InvalidArgument("not a write verb: " + v);
  }
  std::lock_guard lock(mu_);
  std::erase_if(write_faults_, [&](const WriteFault& f) {
    return f.group == fault.group && f.resource == fault.resource &&
           f.subresource == fault.subresource && f.ns == fault.ns && f.verbs == fault.verbs;
  });
  if (fault.remaining > 0) {
    spdlog::info("faults: the next {} writes to {}{} fail with {}", fault.remaining, fault.resource,
                 fault.group.empty() ? "" : "." + fault.group, fault.code);
    write_faults_.push_back(std::move(fault));
  }
  return util::Status();
}

std::shared_ptr<WatchDelay> FaultInjector::ComponentWatchDelay(const std::string& component) {
  std::lock_guard lock(mu_);
  auto& d = delays_[component];
  if (!d) d = std::make_shared<WatchDelay>();
  return d;
}

void FaultInjector::SetHeartbeatControl(HeartbeatControl control) {
  std::lock_guard lock(mu_);
  heartbeats_ = std::move(control);
}

std::string FaultInjector::Describe() const {
  std::lock_guard lock(mu_);
  json::array writes;
  for (const auto& f : write_faults_) {
    json::array verbs;
    for (const auto& v : f.verbs) verbs.emplace_back(v);
    writes.push_back(json::object{{"group", f.group},
                                  {"resource", f.resource},
                                  {"subresource", f.subresource},
                                  {"namespace", f.ns},
                                  {"verbs", verbs},
                                  {"code", f.code},
                                  {"remaining", f.remaining}});
  }
  json::object delays;  // milliseconds: integers read better than Boost.JSON's doubles (1E0)
  for (const auto& [c, d] : delays_) delays[c] = d->Get().count();
  json::array paused;
  for (const auto& [node, p] : paused_nodes_) {
    if (p) paused.emplace_back(node);
  }
  return json::serialize(json::object{
      {"failWrites", writes}, {"watchDelayMilliseconds", delays}, {"pausedHeartbeats", paused}});
}

apiserver::Response FaultInjector::Serve(apiserver::Request& req) {
  std::string_view action = std::string_view(req.path).substr(kPrefix.size());
  if (action.empty() || action == "/") {
    if (req.method != "GET") return Bad("GET " + std::string(kPrefix) + " describes the faults");
    return apiserver::JsonResponse(200, Describe());
  }
  if (req.method != "POST") {
    return apiserver::ErrorResponse(
        apiserver::MethodNotAllowed("faults are injected with POST " + req.path));
  }
  if (action == "/close-watches") {
    CloseWatches();
    return Ok({{"closed", true}});
  }
  if (action == "/compact") {
    auto rev = CompactNow();
    if (!rev.ok())
      return apiserver::ErrorResponse(apiserver::InternalError(rev.status().ToString()));
    return Ok({{"compactedRevision", std::to_string(*rev)}});
  }
  if (action == "/fail-writes") {
    WriteFault f;
    std::string resource(req.Query("resource"));
    if (size_t dot = resource.find('.'); dot != std::string::npos) {
      f.group = resource.substr(dot + 1);
      resource.resize(dot);
    }
    f.resource = resource;
    f.subresource = std::string(req.Query("subresource"));
    f.ns = std::string(req.Query("namespace"));
    f.verbs = SplitCommas(req.Query("verbs"));
    std::optional<double> count = ParseNumber(req.Query("count"));
    std::optional<double> code =
        req.HasQuery("code") ? ParseNumber(req.Query("code")) : std::optional<double>(409);
    if (!count || *count < 0 || !code) return Bad("count (>= 0) and code (409 or 500) expected");
    f.remaining = static_cast<int>(*count);
    f.code = static_cast<int>(*code);
    if (util::Status s = FailWrites(f); !s.ok()) return Bad(s.message());
    return Ok({{"resource", f.resource},
               {"group", f.group},
               {"code", f.code},
               {"remaining", f.remaining}});
  }
  if (action == "/watch-delay") {
    std::string component(req.Query("component"));
    std::optional<double> seconds = ParseNumber(req.Query("seconds"));
    if (!seconds || *seconds < 0) return Bad("seconds (>= 0) expected");
    std::shared_ptr<WatchDelay> d;
    {
      std::lock_guard lock(mu_);
      auto it = delays_.find(component);
      if (it == delays_.end()) {
        std::string known;
        for (const auto& [c, unused] : delays_) known += (known.empty() ? "" : ", ") + c;
        return Bad("no in-process component \"" + component + "\" (known: " + known + ")");
      }
      d = it->second;
    }
    const auto ms = std::chrono::milliseconds(static_cast<int64_t>(*seconds * 1000));
    d->Set(ms);
    spdlog::info("faults: {}'s watch events now arrive {}s late", component, *seconds);
    return Ok({{"component", component}, {"milliseconds", ms.count()}});
  }
  if (action == "/heartbeats") {
    std::string node(req.Query("node"));
    std::string_view paused_text = req.Query("paused");
    if (node.empty() || (paused_text != "true" && paused_text != "false")) {
      return Bad("node and paused=true|false expected");
    }
    const bool paused = paused_text == "true";
    HeartbeatControl control;
    {
      std::lock_guard lock(mu_);
      control = heartbeats_;
    }
    if (!control) return Bad("no simulated nodes run in this process");
    if (util::Status s = control(node, paused); !s.ok()) {
      apiserver::ApiError e;
      e.code = 404;
      e.reason = "NotFound";
      e.message = s.message();
      return apiserver::ErrorResponse(e);
    }
    {
      std::lock_guard lock(mu_);
      paused_nodes_[node] = paused;
    }
    spdlog::info("faults: node {} heartbeats {}", node, paused ? "paused" : "resumed");
    return Ok({{"node", node}, {"paused", paused}});
  }
  return apiserver::ErrorResponse(apiserver::NotFoundPath());
}

}  // namespace converge::server
