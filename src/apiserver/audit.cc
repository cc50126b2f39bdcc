#include "apiserver/audit.h"

#include <fcntl.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

#include "util/metrics.h"

namespace converge::apiserver {

namespace {

namespace json = boost::json;

util::Counter& EventsWritten() {
  static util::Counter& c =
      util::DefaultRegistry()
          .AddCounter({"apiserver_audit_event_total", "Audit events generated and queued.", {}})
          .WithLabelValues({});
  return c;
}

util::Counter& EventsDropped() {
  static util::Counter& c =
      util::DefaultRegistry()
          .AddCounter({"apiserver_audit_error_total",
                       "Audit events that could not be written (queue full or write failed).",
                       {"plugin"}})
          .WithLabelValues({"log"});
  return c;
}

json::object UserJson(const UserInfo& u) {
  json::object o;
  o["username"] = u.name;
  if (!u.uid.empty()) o["uid"] = u.uid;
  if (!u.groups.empty()) {
    json::array groups;
    for (const auto& g : u.groups) groups.emplace_back(g);
    o["groups"] = std::move(groups);
  }
  return o;
}

// The request URI as the client sent it: path and query, re-encoded where needed.
std::string RequestUri(const Request& req) {
  auto encode = [](std::string_view s) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' || c == ':' ||
          c == ',' || c == '=' || c == '!') {
        out += static_cast<char>(c);
      } else {
        out += '%';
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
    return out;
  };
  std::string uri = encode(req.path);
  char sep = '?';
  for (const auto& [k, v] : req.query) {
    uri += sep;
    uri += encode(k);
    uri += '=';
    std::string ev = encode(v);
    // '=' is safe in paths but not inside a query value.
    for (size_t i = 0; (i = ev.find('=', i)) != std::string::npos; i += 3) ev.replace(i, 1, "%3D");
    uri += ev;
    sep = '&';
  }
  return uri;
}

// "10.0.0.1:5555" → "10.0.0.1"; "[::1]:5555" → "::1".
std::string HostOf(std::string_view remote) {
  if (remote.empty()) return "";
  if (remote.front() == '[') {
    size_t close = remote.find(']');
    return std::string(remote.substr(1, close == std::string_view::npos ? remote.npos : close - 1));
  }
  size_t colon = remote.rfind(':');
  if (colon != std::string_view::npos && remote.find(':') == colon) {
    return std::string(remote.substr(0, colon));
  }
  return std::string(remote);
}

}  // namespace

std::string BuildAuditEvent(const AuditRecord& r) {
  json::object ev;
  ev["kind"] = "Event";
  ev["apiVersion"] = "audit.k8s.io/v1";
  ev["level"] = "Metadata";
  ev["auditID"] = r.audit_id;
  ev["stage"] = r.stage;
  if (r.request) ev["requestURI"] = RequestUri(*r.request);
  if (r.info) ev["verb"] = r.info->verb;
  ev["user"] = UserJson(r.user);
  if (r.impersonated) ev["impersonatedUser"] = UserJson(*r.impersonated);
  if (r.request) {
    json::array ips;
    if (std::string ip = HostOf(r.request->remote_address); !ip.empty()) ips.emplace_back(ip);
    ev["sourceIPs"] = std::move(ips);
    if (auto ua = r.request->Header("user-agent"); !ua.empty()) ev["userAgent"] = ua;
  }
  if (r.info && r.info->is_resource_request) {
    json::object ref;
    if (!r.info->resource.empty()) ref["resource"] = r.info->resource;
    if (!r.info->ns.empty()) ref["namespace"] = r.info->ns;
    if (!r.info->name.empty()) ref["name"] = r.info->name;
    if (!r.info->group.empty()) ref["apiGroup"] = r.info->group;
    if (!r.info->version.empty()) ref["apiVersion"] = r.info->version;
    if (!r.info->subresource.empty()) ref["subresource"] = r.info->subresource;
    ev["objectRef"] = std::move(ref);
  }
  json::object status;
  status["metadata"] = json::object();
  status["code"] = r.code;
  if (r.code >= 300 && !r.response_body.empty()) {
    boost::system::error_code ec;
    json::value body = json::parse(r.response_body, ec);
    if (!ec && body.is_object() && body.as_object().contains("kind") &&
        body.as_object().at("kind") == "Status") {
      for (const char* field : {"status", "reason", "message"}) {
        if (const json::value* v = body.as_object().if_contains(field); v && v->is_string()) {
          status[field] = *v;
        }
      }
    }
  }
  ev["responseStatus"] = std::move(status);
  ev["requestReceivedTimestamp"] = util::FormatRfc3339Micro(r.received);
  ev["stageTimestamp"] = util::FormatRfc3339Micro(r.stage_time);
  return json::serialize(ev);
}

AuditLogFile::AuditLogFile(AuditLogFileOptions options) : options_(std::move(options)) {}

AuditLogFile::~AuditLogFile() {
  Stop();
}

util::Status AuditLogFile::Start() {
  fd_ = ::open(options_.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    return util::Unavailable("cannot open audit log " + options_.path + ": " +
                             std::strerror(errno));
  }
  EventsWritten();
  EventsDropped();
  {
    std::lock_guard lock(mu_);
    accepting_ = true;
  }
  writer_ = std::thread([this] { Run(); });
  return util::Status();
}

void AuditLogFile::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    accepting_ = false;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void AuditLogFile::Write(std::string line) {
  {
    std::lock_guard lock(mu_);
    if (!accepting_ || queue_.size() >= options_.queue_capacity) {
      EventsDropped().Inc();
      return;
    }
    queue_.push_back(std::move(line));
  }
  EventsWritten().Inc();
  cv_.notify_one();
}

void AuditLogFile::Run() {
  std::deque<std::string> batch;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      batch.swap(queue_);
    }
    std::string out;
    for (auto& line : batch) {
      out += line;
      out += '\n';
    }
    const size_t lines = batch.size();
    batch.clear();
    size_t off = 0;
    while (off < out.size()) {
      ssize_t n = ::write(fd_, out.data() + off, out.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        EventsDropped().Add(static_cast<double>(lines));
        break;
      }
      off += static_cast<size_t>(n);
    }
  }
}

}  // namespace converge::apiserver
