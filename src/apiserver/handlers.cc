// APIServer's request handlers: non-resource paths and the resource verbs.
#include <spdlog/spdlog.h>

#include <charconv>

#include "api/labels.h"
#include "apiserver/codec.h"
#include "apiserver/handler_util.h"
#include "apiserver/metrics.h"
#include "apiserver/server.h"
#include "apiserver/table.h"
#include "util/metrics.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

Response TextResponse(int status, std::string body) {
  Response r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

}  // namespace

Response ErrorResponse(const ApiError& e) {
  Response r;
  r.status = e.code;
  r.body = e.ToJson();
  if (e.retry_after_seconds > 0)
    r.headers.emplace_back("Retry-After", std::to_string(e.retry_after_seconds));
  return r;
}

Response JsonResponse(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Non-resource requests

Response APIServer::HandleNonResource(Request& req, const RequestInfo& ri) {
  const std::string& path = req.path;
  if (req.method != "GET" && req.method != "HEAD") {
    if (ri.api_prefix.empty()) return ErrorResponse(NotFoundPath());
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  if (path == "/healthz" || path == "/livez" || path == "/readyz" ||
      path.starts_with("/healthz/") || path.starts_with("/livez/") ||
      path.starts_with("/readyz/")) {
    bool ok = !path.starts_with("/readyz") || ready();
    if (req.HasQuery("verbose")) {
      std::string body = ok ? "[+]ping ok\n[+]etcd ok\n" : "[-]informer-sync failed: not ready\n";
      body += ok ? path.substr(1, path.find('/', 1) - 1) + " check passed\n"
                 : path.substr(1) + " check failed\n";
      return TextResponse(ok ? 200 : 500, body);
    }
    return TextResponse(ok ? 200 : 500, ok ? "ok" : "[-]not ready\nreadyz check failed");
  }
  if (path == "/version" || path == "/version/") {
    json::object v;
    v["major"] = "1";
    v["minor"] = "32";
    v["gitVersion"] = "v1.32.0-converge";
    v["gitCommit"] = "converge";
    v["gitTreeState"] = "clean";
    v["buildDate"] = "2026-01-01T00:00:00Z";
    v["goVersion"] = "go1.23.4";
    v["compiler"] = "gc";
    v["platform"] = "linux/amd64";
    return JsonResponse(200, json::serialize(v));
  }
  if (path == "/metrics") {
    Response r = TextResponse(200, util::DefaultRegistry().Render());
    r.content_type = std::string(util::kPrometheusContentType);
    return r;
  }
  if (auto r = HandleDiscovery(req, ri)) return std::move(*r);
  return ErrorResponse(NotFoundPath());
}

// ---------------------------------------------------------------------------------------------
// Resource requests

Response APIServer::HandleResource(Request& req, const RequestInfo& ri) {
  auto info = registry_.Find({ri.group, ri.version, ri.resource});
  if (!info) return ErrorResponse(NotFoundPath());
  if (!info->HasVerb(ri.verb) && ri.subresource.empty()) {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  // A namespaced resource needs a namespace unless it is a list/watch across all of them; a
  // cluster-scoped one must not have one.
  if (info->namespaced && ri.ns.empty() && ri.verb != "list" && ri.verb != "watch") {
    return ErrorResponse(NotFoundPath());
  }
  if (!info->namespaced && !ri.ns.empty() && !(info->gvr.resource == "namespaces")) {
    return ErrorResponse(NotFoundPath());
  }
  // Held for the whole request: a custom resource's storage may be unregistered meanwhile.
  std::shared_ptr<ResourceStorage> storage = StorageFor(info->gvr);
  if (!storage) return HandleVirtual(req, ri, *info);
  if (!ri.subresource.empty() && !info->Subresource(ri.subresource)) {
    return ErrorResponse(NotFoundPath());
  }
  // Namespaces are cluster-scoped; their own name lives in ri.ns for /namespaces/<name>.
  std::string ns = info->namespaced ? ri.ns : "";
  RequestContext ctx{req, ri, *info, *storage, ns};
  if (ri.verb == "get") return HandleGet(ctx);
  if (ri.verb == "list") return HandleList(ctx);
  if (ri.verb == "watch") return HandleWatch(ctx);
  Response resp;
  if (ri.verb == "create") {
    resp = HandleCreate(ctx);
  } else if (ri.verb == "update") {
    resp = HandleUpdate(ctx);
  } else if (ri.verb == "patch") {
    resp = HandlePatch(ctx);
  } else if (ri.verb == "delete") {
    resp = HandleDelete(ctx);
  } else if (ri.verb == "deletecollection") {
    resp = HandleDeleteCollection(ctx);
  } else {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  // Admission warnings reach the client whether the write succeeded or not (upstream too). A
  // pending create uses `info` and `storage` until it is answered: the continuation holds them.
  return Then(std::move(resp), [info, storage, warnings = std::move(ctx.admission_warnings)](
                                   Response& r) { AddWarnings(r, warnings); });
}

}  // namespace converge::apiserver
