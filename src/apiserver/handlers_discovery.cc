// Discovery (/api, /apis, ...) and OpenAPI (/openapi/v3...).
#include "api/schema_registry.h"
#include "apiserver/discovery.h"
#include "apiserver/handler_util.h"
#include "apiserver/openapi.h"
#include "apiserver/server.h"

namespace converge::apiserver {

namespace {

Response DocumentResponse(const Request& req, const std::shared_ptr<const std::string>& body,
                          std::string_view content_type, const std::string& etag) {
  Response r;
  r.content_type = std::string(content_type);
  if (!etag.empty()) {
    r.headers.emplace_back("ETag", etag);
    if (req.Header("if-none-match") == etag) {
      r.status = 304;
      return r;
    }
  }
  r.status = 200;
  r.body = *body;
  return r;
}

}  // namespace

std::optional<Response> APIServer::HandleDiscovery(Request& req, const RequestInfo& ri) {
  const std::string& path = req.path;
  if (path == "/openapi/v3" || path == "/openapi/v3/") {
    OpenApiDocument doc = openapi_->Index();
    return DocumentResponse(req, doc.body, "application/json", doc.etag);
  }
  if (path.starts_with("/openapi/v3/")) {
    auto doc = openapi_->GroupVersion(std::string_view(path).substr(12));
    if (!doc) return ErrorResponse(NotFoundPath());
    return DocumentResponse(req, doc->body, "application/json", doc->etag);
  }
  if (ri.api_prefix.empty()) return std::nullopt;
  const std::vector<std::string>& parts = ri.parts;
  std::string_view accept = req.Header("accept");
  if (ri.api_prefix == "api") {
    if (parts.empty()) {
      DiscoveryDocument d = discovery_->Root(DiscoveryRoot::kCore, accept);
      return DocumentResponse(req, d.body, d.content_type, d.etag);
    }
    if (parts.size() == 1) {
      auto d = discovery_->ResourceList({"", parts[0]});
      if (!d) return ErrorResponse(NotFoundPath());
      return DocumentResponse(req, d->body, d->content_type, d->etag);
    }
    return std::nullopt;
  }
  if (parts.empty()) {
    DiscoveryDocument d = discovery_->Root(DiscoveryRoot::kGroups, accept);
    return DocumentResponse(req, d.body, d.content_type, d.etag);
  }
  if (parts.size() == 1) {
    auto d = discovery_->Group(parts[0]);
    if (!d) return ErrorResponse(NotFoundPath());
    return DocumentResponse(req, d->body, d->content_type, d->etag);
  }
  if (parts.size() == 2) {
    auto d = discovery_->ResourceList({parts[0], parts[1]});
    if (!d) return ErrorResponse(NotFoundPath());
    return DocumentResponse(req, d->body, d->content_type, d->etag);
  }
  return std::nullopt;
}

}  // namespace converge::apiserver
