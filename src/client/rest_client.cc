#include "client/rest_client.h"

#include <charconv>

#include "api/builtin_resources.h"
#include "client/api_errors.h"
#include "client/http_transport.h"
#include "client/rate_limited_transport.h"
#include "client/wait.h"

namespace converge::client {
namespace json = boost::json;

namespace {

constexpr std::string_view kJson = "application/json";

// The longest Retry-After we honour; a server asking for more is treated as asking for this
// (client-go trusts the header as is; a bound keeps a confused proxy from parking us for hours).
constexpr std::chrono::seconds kMaxRetryAfter{60};

std::string_view PatchContentType(PatchType t) {
  switch (t) {
    case PatchType::kJson: return "application/json-patch+json";
    case PatchType::kMerge: return "application/merge-patch+json";
    case PatchType::kStrategicMerge: return "application/strategic-merge-patch+json";
    case PatchType::kApply: return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

void AddWriteQuery(HttpRequest& r, bool dry_run, const std::string& field_manager,
                   const std::string& field_validation = {}) {
  if (dry_run) r.query.emplace_back("dryRun", "All");
  if (!field_manager.empty()) r.query.emplace_back("fieldManager", field_manager);
  if (!field_validation.empty()) r.query.emplace_back("fieldValidation", field_validation);
}

void AddListQuery(HttpRequest& r, const ListOptions& o) {
  if (!o.label_selector.empty()) r.query.emplace_back("labelSelector", o.label_selector);
  if (!o.field_selector.empty()) r.query.emplace_back("fieldSelector", o.field_selector);
  if (!o.resource_version.empty()) r.query.emplace_back("resourceVersion", o.resource_version);
  if (!o.resource_version_match.empty()) {
    r.query.emplace_back("resourceVersionMatch", o.resource_version_match);
  }
  if (o.limit > 0) r.query.emplace_back("limit", std::to_string(o.limit));
  if (!o.continue_token.empty()) r.query.emplace_back("continue", o.continue_token);
}

std::string DeleteBody(const DeleteOptions& o) {
  json::object body{{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (o.grace_period_seconds) body["gracePeriodSeconds"] = *o.grace_period_seconds;
  if (!o.propagation_policy.empty()) body["propagationPolicy"] = o.propagation_policy;
  if (!o.precondition_uid.empty() || !o.precondition_resource_version.empty()) {
    json::object pre;
    if (!o.precondition_uid.empty()) pre["uid"] = o.precondition_uid;
    if (!o.precondition_resource_version.empty()) {
      pre["resourceVersion"] = o.precondition_resource_version;
    }
    body["preconditions"] = std::move(pre);
  }
  if (o.dry_run) body["dryRun"] = json::array{"All"};
  return json::serialize(body);
}

template <typename Options>
HttpRequest NewRequest(std::string method, std::string path, const Options& options) {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.headers.emplace_back("accept", kJson);
  r.stop = options.stop;
  r.timeout = options.timeout;
  return r;
}

void SetBody(HttpRequest& r, std::string body, std::string_view content_type = kJson) {
  r.body = std::move(body);
  r.headers.emplace_back("content-type", content_type);
}

util::StatusOr<json::object> ParseObject(std::string_view body) {
  json::error_code ec;
  json::value v = json::parse(body, ec, json::storage_ptr(), ObjectParseOptions());
  if (ec) return util::DataLoss("response is not JSON: " + ec.message());
  if (!v.is_object()) return util::DataLoss("response is not a JSON object");
  return std::move(v.as_object());
}

bool Is2xx(int status) {
  return status >= 200 && status < 300;
}

// The delay a 429/5xx response asks for, or nullopt when it does not ask to be retried.
std::optional<std::chrono::seconds> RetryAfter(const HttpResponse& r) {
  if (r.status != 429 && r.status < 500) return std::nullopt;
  std::string_view v = r.Header("retry-after");
  if (v.empty()) return std::nullopt;
  int64_t seconds = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
  if (ec != std::errc() || p != v.data() + v.size() || seconds < 0) return std::nullopt;
  return std::min(std::chrono::seconds(seconds), kMaxRetryAfter);
}

}  // namespace

std::string ResourcePath(const api::GroupVersionResource& gvr, std::string_view ns,
                         std::string_view name, std::string_view subresource) {
  std::string p =
      gvr.group.empty() ? "/api/" + gvr.version : "/apis/" + gvr.group + "/" + gvr.version;
  if (!ns.empty()) {
    p += "/namespaces/";
    p += ns;
  }
  p += "/";
  p += gvr.resource;
  if (!name.empty()) {
    p += "/";
    p += name;
    if (!subresource.empty()) {
      p += "/";
      p += subresource;
    }
  }
  return p;
}

util::StatusOr<api::GroupVersionResource> ResourceForKind(const api::GroupVersionKind& gvk) {
  for (const api::ResourceInfo& info : api::BuiltinResources()) {
    if (info.kind == gvk.kind && info.gvr.group == gvk.group && info.gvr.version == gvk.version) {
      return info.gvr;
    }
  }
  return util::NotFound("no built-in resource serves kind " + gvk.ApiVersion() + " " + gvk.kind);
}

util::StatusOr<std::shared_ptr<Transport>> NewTransportForConfig(const RestConfig& config) {
  CONVERGE_ASSIGN_OR_RETURN(std::unique_ptr<HttpTransport> http,
                            HttpTransport::New({.config = config}));
  if (config.qps > 0) {
    return std::shared_ptr<Transport>(std::make_shared<RateLimitedTransport>(
        std::move(http), TokenBucketOptions{.qps = config.qps, .burst = config.burst}));
  }
  return std::shared_ptr<Transport>(std::move(http));
}

RestClient::RestClient(RestClientOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()) {}

util::StatusOr<std::unique_ptr<RestClient>> RestClient::ForConfig(const RestConfig& config) {
  CONVERGE_ASSIGN_OR_RETURN(std::shared_ptr<Transport> transport, NewTransportForConfig(config));
  return std::make_unique<RestClient>(RestClientOptions{.transport = std::move(transport)});
}

util::StatusOr<HttpResponse> RestClient::Do(HttpRequest request) {
  for (int attempt = 0;; ++attempt) {
    CONVERGE_ASSIGN_OR_RETURN(HttpResponse resp, options_.transport->Do(request));
    if (Is2xx(resp.status)) return resp;
    if (std::optional<std::chrono::seconds> delay = RetryAfter(resp);
        delay && attempt < options_.max_retries) {
      if (!SleepFor(*clock_, *delay, request.stop)) {
        return util::Cancelled(request.method + " " + request.path + ": cancelled");
      }
      continue;
    }
    return StatusFromResponse(resp.status, resp.body);
  }
}

util::StatusOr<std::unique_ptr<ResponseStream>> RestClient::Stream(HttpRequest request) {
  for (int attempt = 0;; ++attempt) {
    CONVERGE_ASSIGN_OR_RETURN(StreamedResponse resp, options_.transport->Stream(request));
    if (Is2xx(resp.status)) return std::move(resp.body);
    CONVERGE_ASSIGN_OR_RETURN(std::string body, ReadAll(*resp.body));
    HttpResponse whole{resp.status, std::move(resp.headers), std::move(body)};
    if (std::optional<std::chrono::seconds> delay = RetryAfter(whole);
        delay && attempt < options_.max_retries) {
      if (!SleepFor(*clock_, *delay, request.stop)) {
        return util::Cancelled(request.method + " " + request.path + ": cancelled");
      }
      continue;
    }
    return StatusFromResponse(whole.status, whole.body);
  }
}

util::StatusOr<api::Object> RestClient::DoObject(HttpRequest request) {
  CONVERGE_ASSIGN_OR_RETURN(HttpResponse resp, Do(std::move(request)));
  CONVERGE_ASSIGN_OR_RETURN(json::object doc, ParseObject(resp.body));
  return api::Object(std::move(doc));
}

util::StatusOr<api::Object> RestClient::Get(const api::GroupVersionResource& gvr,
                                            const api::ObjectKey& key, const GetOptions& options) {
  HttpRequest r =
      NewRequest("GET", ResourcePath(gvr, key.ns, key.name, options.subresource), options);
  if (!options.resource_version.empty()) {
    r.query.emplace_back("resourceVersion", options.resource_version);
  }
  return DoObject(std::move(r));
}

util::StatusOr<ObjectList> RestClient::List(const api::GroupVersionResource& gvr,
                                            std::string_view ns, const ListOptions& options) {
  HttpRequest r = NewRequest("GET", ResourcePath(gvr, ns), options);
  AddListQuery(r, options);
  CONVERGE_ASSIGN_OR_RETURN(HttpResponse resp, Do(std::move(r)));
  CONVERGE_ASSIGN_OR_RETURN(json::object doc, ParseObject(resp.body));
  ObjectList list;
  list.api_version = std::string(api::Object::GetString(doc, "apiVersion"));
  list.kind = std::string(api::Object::GetString(doc, "kind"));
  if (const json::value* meta = doc.if_contains("metadata"); meta != nullptr && meta->is_object()) {
    const json::object& m = meta->as_object();
    list.resource_version = std::string(api::Object::GetString(m, "resourceVersion"));
    list.continue_token = std::string(api::Object::GetString(m, "continue"));
    if (const json::value* rem = m.if_contains("remainingItemCount");
        rem != nullptr && rem->is_int64()) {
      list.remaining_item_count = rem->get_int64();
    }
  }
  std::string item_kind = list.kind;
  if (item_kind.size() > 4 && item_kind.ends_with("List")) item_kind.resize(item_kind.size() - 4);
  if (json::value* items = doc.if_contains("items"); items != nullptr && items->is_array()) {
    list.items.reserve(items->as_array().size());
    for (json::value& item : items->as_array()) {
      if (!item.is_object()) return util::DataLoss("list item is not an object");
      json::object& o = item.as_object();
      if (!o.contains("apiVersion") && !list.api_version.empty()) {
        o["apiVersion"] = list.api_version;
      }
      if (!o.contains("kind") && !item_kind.empty()) o["kind"] = item_kind;
      list.items.emplace_back(std::move(o));
    }
  }
  return list;
}

util::StatusOr<std::unique_ptr<Watcher>> RestClient::Watch(const api::GroupVersionResource& gvr,
                                                           std::string_view ns,
                                                           const ListOptions& options) {
  HttpRequest r = NewRequest("GET", ResourcePath(gvr, ns), options);
  r.query.emplace_back("watch", "true");
  AddListQuery(r, options);
  if (options.timeout_seconds) {
    r.query.emplace_back("timeoutSeconds", std::to_string(*options.timeout_seconds));
    r.timeout = std::chrono::seconds(*options.timeout_seconds) + options_.watch_deadline_slack;
  }
  if (options.allow_watch_bookmarks) r.query.emplace_back("allowWatchBookmarks", "true");
  if (options.send_initial_events) r.query.emplace_back("sendInitialEvents", "true");
  CONVERGE_ASSIGN_OR_RETURN(std::unique_ptr<ResponseStream> body, Stream(std::move(r)));
  return std::unique_ptr<Watcher>(std::make_unique<StreamWatcher>(std::move(body)));
}

util::StatusOr<api::Object> RestClient::Create(const api::GroupVersionResource& gvr,
                                               std::string_view ns, const api::Object& object,
                                               const WriteOptions& options) {
  std::string_view target_ns = ns.empty() ? object.namespace_() : ns;
  HttpRequest r = NewRequest("POST", ResourcePath(gvr, target_ns), options);
  AddWriteQuery(r, options.dry_run, options.field_manager, options.field_validation);
  SetBody(r, object.Serialize());
  return DoObject(std::move(r));
}

util::StatusOr<api::Object> RestClient::Update(const api::GroupVersionResource& gvr,
                                               const api::Object& object,
                                               const WriteOptions& options) {
  if (object.name().empty()) return util::InvalidArgument("update: object has no name");
  HttpRequest r = NewRequest("PUT", ResourcePath(gvr, object.namespace_(), object.name()), options);
  AddWriteQuery(r, options.dry_run, options.field_manager, options.field_validation);
  SetBody(r, object.Serialize());
  return DoObject(std::move(r));
}

util::StatusOr<api::Object> RestClient::UpdateStatus(const api::GroupVersionResource& gvr,
                                                     const api::Object& object,
                                                     const WriteOptions& options) {
  if (object.name().empty()) return util::InvalidArgument("update status: object has no name");
  HttpRequest r =
      NewRequest("PUT", ResourcePath(gvr, object.namespace_(), object.name(), "status"), options);
  AddWriteQuery(r, options.dry_run, options.field_manager, options.field_validation);
  SetBody(r, object.Serialize());
  return DoObject(std::move(r));
}

util::StatusOr<api::Object> RestClient::Patch(const api::GroupVersionResource& gvr,
                                              const api::ObjectKey& key, PatchType type,
                                              std::string_view patch, const PatchOptions& options) {
  if (type == PatchType::kApply && options.field_manager.empty()) {
    return util::InvalidArgument("apply: a field manager is required");
  }
  HttpRequest r =
      NewRequest("PATCH", ResourcePath(gvr, key.ns, key.name, options.subresource), options);
  AddWriteQuery(r, options.dry_run, options.field_manager);
  if (type == PatchType::kApply && options.force) r.query.emplace_back("force", "true");
  SetBody(r, std::string(patch), PatchContentType(type));
  return DoObject(std::move(r));
}

util::StatusOr<api::Object> RestClient::Apply(const api::GroupVersionResource& gvr,
                                              const api::Object& object,
                                              const PatchOptions& options) {
  if (object.name().empty()) return util::InvalidArgument("apply: object has no name");
  return Patch(gvr, object.key(), PatchType::kApply, object.Serialize(), options);
}

util::Status RestClient::Delete(const api::GroupVersionResource& gvr, const api::ObjectKey& key,
                                const DeleteOptions& options) {
  HttpRequest r = NewRequest("DELETE", ResourcePath(gvr, key.ns, key.name), options);
  SetBody(r, DeleteBody(options));
  return Do(std::move(r)).status();
}

util::Status RestClient::DeleteCollection(const api::GroupVersionResource& gvr, std::string_view ns,
                                          const ListOptions& list_options,
                                          const DeleteOptions& options) {
  HttpRequest r = NewRequest("DELETE", ResourcePath(gvr, ns), options);
  AddListQuery(r, list_options);
  SetBody(r, DeleteBody(options));
  return Do(std::move(r)).status();
}

}  // namespace converge::client
