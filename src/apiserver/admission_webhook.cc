#include "apiserver/admission_webhook.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/url/parse.hpp>
#include <future>

#include "api/json_patch.h"
#include "client/http_transport.h"
#include "util/ids.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

// Transports kept for reuse before the cache is dropped and rebuilt.
constexpr size_t kMaxCachedTransports = 64;

std::string TimeoutParam(const Webhook& hook) {
  return std::to_string(hook.timeout.count()) + "s";
}

// The URL as client-go reports it in errors: with the timeout parameter it adds.
std::string DisplayUrl(const Webhook& hook) {
  return hook.url + (hook.url.find('?') == std::string::npos ? "?" : "&") +
         "timeout=" + TimeoutParam(hook);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// HttpsWebhookClient

HttpsWebhookClient::HttpsWebhookClient() = default;
HttpsWebhookClient::~HttpsWebhookClient() = default;

util::StatusOr<std::shared_ptr<client::HttpTransport>> HttpsWebhookClient::TransportFor(
    const std::string& origin, const Webhook& hook) {
  std::string key = origin + "\n" + hook.ca_bundle_pem;
  std::lock_guard lock(mu_);
  if (auto it = transports_.find(key); it != transports_.end()) return it->second;
  client::HttpTransportOptions o;
  o.config.server = origin;
  o.config.tls.ca_pem = hook.ca_bundle_pem;
  o.config.user_agent = "kube-apiserver-admission";
  o.max_idle_connections = 8;
  // Each request carries its own deadline (the webhook's timeout), connecting included.
  o.connect_timeout = std::chrono::seconds(30);
  auto t = client::HttpTransport::New(std::move(o));
  if (!t.ok()) return t.status();
  if (transports_.size() >= kMaxCachedTransports) transports_.clear();
  std::shared_ptr<client::HttpTransport> shared(std::move(*t));
  transports_.emplace(std::move(key), shared);
  return shared;
}

util::StatusOr<WebhookClient::Reply> HttpsWebhookClient::Post(const Webhook& hook,
                                                              const std::string& body) {
  const std::string failed = "failed to call webhook: Post \"" + DisplayUrl(hook) + "\": ";
  auto url = boost::urls::parse_uri(hook.url);
  if (!url || url->scheme() != "https" || url->host().empty()) {
    return util::InvalidArgument(failed + "unsupported webhook URL");
  }
  std::string origin = "https://" + std::string(url->encoded_host_and_port());
  auto transport = TransportFor(origin, hook);
  if (!transport.ok()) return util::InvalidArgument(failed + transport.status().message());
  client::HttpRequest req;
  req.method = "POST";
  req.path = url->path();
  if (req.path.empty()) req.path = "/";
  for (const auto& param : url->params()) {
    req.query.emplace_back(std::string(param.key), std::string(param.value));
  }
  req.query.emplace_back("timeout", TimeoutParam(hook));
  req.headers = {{"content-type", "application/json"}, {"accept", "application/json"}};
  req.body = body;
  req.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(hook.timeout);
  const std::string described = "POST " + origin + req.path + ": ";
  auto resp = (*transport)->Do(std::move(req));
  if (!resp.ok()) {
    if (resp.status().code() == util::Code::kDeadlineExceeded) {
      return util::DeadlineExceeded(failed + "context deadline exceeded");
    }
    std::string detail(resp.status().message());
    if (detail.rfind(described, 0) == 0) detail = detail.substr(described.size());
    return util::Unavailable(failed + detail);
  }
  return Reply{resp->status, std::move(resp->body)};
}

// ---------------------------------------------------------------------------------------------
// WebhookConfigSource

std::shared_ptr<const WebhookSet> WebhookConfigSource::Current() const {
  std::lock_guard lock(mu_);
  // Every detector is asked (each restarts its own ended watch).
  bool changed = false;
  for (CacheChangeDetector& c : changes_) changed = c.Changed() || changed;
  if (!changed && set_) return set_;
  auto set = std::make_shared<WebhookSet>();
  for (int i = 0; i < 2; ++i) {
    if (!caches_[i]) continue;
    std::vector<Webhook>& out = i == 0 ? set->mutating : set->validating;
    // List is in storage-key order, which for cluster-scoped objects is name order.
    for (const CachedObjectPtr& o : caches_[i]->List(WatchFilter{}).items) {
      boost::system::error_code ec;
      json::value v = json::parse(*o->json(), ec);
      if (ec || !v.is_object()) continue;
      for (Webhook& w : WebhooksFromConfiguration(v.get_object(), i == 0)) {
        out.push_back(std::move(w));
      }
    }
  }
  set_ = std::move(set);
  return set_;
}

// ---------------------------------------------------------------------------------------------
// WebhookAdmission

// The labels of the request's namespace, looked up at most once per request.
class WebhookAdmission::NamespaceLabels {
 public:
  NamespaceLabels(const WebhookAdmissionOptions& options, const AdmissionAttributes& attrs)
      : options_(options) {
    ns_ = NamespaceForSelector(attrs, &own_);
    is_namespace_ =
        attrs.resource->gvr.group.empty() && attrs.resource->gvr.resource == "namespaces";
  }
  // nullopt: the selector does not apply (cluster-scoped request). Error: no such namespace.
  ApiOr<std::optional<const json::object*>> Get() {
    if (is_namespace_) return std::optional<const json::object*>(own_);
    if (ns_.empty()) return std::optional<const json::object*>();
    if (!looked_up_) {
      looked_up_ = true;
      if (options_.namespace_labels) labels_ = options_.namespace_labels(ns_);
    }
    if (!labels_) return NotFound({"", "namespaces"}, ns_);
    return std::optional<const json::object*>(&*labels_);
  }

 private:
  const WebhookAdmissionOptions& options_;
  std::string ns_;
  const json::object* own_ = nullptr;
  bool is_namespace_ = false;
  bool looked_up_ = false;
  std::optional<json::object> labels_;
};

WebhookAdmission::WebhookAdmission(WebhookAdmissionOptions options)
    : options_(std::move(options)), spare_calls_(std::max(0, options_.max_parallel_calls)) {}

ApiOr<bool> WebhookAdmission::ShouldCall(const Webhook& hook, const AdmissionAttributes& attrs,
                                         NamespaceLabels& ns) const {
  if (!RulesMatch(hook, attrs)) return false;
  if (!hook.namespace_selector.Empty()) {
    auto labels = ns.Get();
    if (!labels.ok()) return labels.error();
    if (labels->has_value() && !NamespaceSelectorMatches(hook, **labels)) return false;
  }
  if (!ObjectSelectorMatches(hook, attrs)) return false;
  if (attrs.dry_run && hook.side_effects != "None" && hook.side_effects != "NoneOnDryRun") {
    return WebhookNoDryRun(hook.name);
  }
  return true;
}

util::StatusOr<AdmissionVerdict> WebhookAdmission::Call(const Webhook& hook,
                                                        const AdmissionAttributes& attrs) {
  const std::string uid = util::NewUuid();
  auto reply = options_.client->Post(hook, BuildAdmissionReview(attrs, uid));
  if (!reply.ok()) return reply.status();
  return ParseAdmissionResponse(reply->status, reply->body, uid, hook.mutating);
}

ApiOr<bool> WebhookAdmission::CallMutating(const Webhook& hook, AdmissionAttributes& attrs) {
  auto verdict = Call(hook, attrs);
  if (!verdict.ok()) {
    if (hook.fail_open) {
      spdlog::warn("admission: failed calling webhook, failing open {}: {}", hook.name,
                   verdict.status().message());
      return false;
    }
    return WebhookCallFailed(hook.name, std::string(verdict.status().message()));
  }
  if (attrs.warnings) {
    for (std::string& w : verdict->warnings) attrs.warnings->push_back(std::move(w));
  }
  if (!verdict->allowed) return WebhookDenied(hook.name, verdict->status);
  if (!verdict->patch || !attrs.object) return false;
  json::value doc(attrs.object->doc());
  auto patched = api::ApplyJsonPatch(doc, *verdict->patch);
  if (!patched.ok()) return InternalError(std::string(patched.status().message()));
  if (!patched->is_object()) return InternalError("the patched object is not a JSON object");
  if (*patched == doc) return false;
  *attrs.object = api::Object(std::move(patched->get_object()));
  attrs.needs_revalidation = true;
  return true;
}

std::optional<ApiError> WebhookAdmission::CallValidating(const Webhook& hook,
                                                         const AdmissionAttributes& attrs,
                                                         std::vector<std::string>* warnings) {
  auto verdict = Call(hook, attrs);
  if (!verdict.ok()) {
    if (hook.fail_open) {
      spdlog::warn("admission: failed calling webhook, failing open {}: {}", hook.name,
                   verdict.status().message());
      return std::nullopt;
    }
    return WebhookCallFailed(hook.name, std::string(verdict.status().message()));
  }
  for (std::string& w : verdict->warnings) warnings->push_back(std::move(w));
  if (!verdict->allowed) return WebhookDenied(hook.name, verdict->status);
  return std::nullopt;
}

std::optional<ApiError> WebhookAdmission::Admit(AdmissionAttributes& attrs) {
  if (!attrs.resource || !options_.webhooks || !options_.client) return std::nullopt;
  std::shared_ptr<const WebhookSet> set = options_.webhooks();
  if (!set || set->mutating.empty() || IsExemptFromWebhooks(attrs)) return std::nullopt;
  NamespaceLabels ns(options_, attrs);
  const std::vector<Webhook>& hooks = set->mutating;
  // changes_seen[i]: how many changes the object had undergone when hook i last saw it (-1: not
  // called). A hook with reinvocationPolicy IfNeeded is called again when later hooks changed
  // the object after it.
  std::vector<int> changes_seen(hooks.size(), -1);
  int changes = 0;
  for (size_t i = 0; i < hooks.size(); ++i) {
    auto call = ShouldCall(hooks[i], attrs, ns);
    if (!call.ok()) return call.error();
    if (!*call) continue;
    changes_seen[i] = changes;
    auto changed = CallMutating(hooks[i], attrs);
    if (!changed.ok()) return changed.error();
    if (*changed) changes_seen[i] = ++changes;
  }
  for (size_t i = 0; i < hooks.size(); ++i) {
    if (!hooks[i].reinvoke_if_needed || changes_seen[i] < 0 || changes_seen[i] == changes) {
      continue;
    }
    auto changed = CallMutating(hooks[i], attrs);
    if (!changed.ok()) return changed.error();
  }
  return std::nullopt;
}

std::optional<ApiError> WebhookAdmission::Validate(const AdmissionAttributes& attrs) {
  if (!attrs.resource || !options_.webhooks || !options_.client) return std::nullopt;
  std::shared_ptr<const WebhookSet> set = options_.webhooks();
  if (!set || set->validating.empty() || IsExemptFromWebhooks(attrs)) return std::nullopt;
  NamespaceLabels ns(options_, attrs);
  std::vector<const Webhook*> selected;
  for (const Webhook& hook : set->validating) {
    auto call = ShouldCall(hook, attrs, ns);
    if (!call.ok()) return call.error();
    if (*call) selected.push_back(&hook);
  }
  if (selected.empty()) return std::nullopt;

  struct Outcome {
    std::optional<ApiError> error;
    std::vector<std::string> warnings;
  };
  std::vector<Outcome> outcomes(selected.size());
  std::vector<std::future<void>> pending;
  std::vector<size_t> inline_calls;
  // All but the first go to extra threads while spare ones remain; the rest run here.
  for (size_t i = 0; i < selected.size(); ++i) {
    if (i > 0 && spare_calls_.fetch_sub(1) > 0) {
      pending.push_back(std::async(std::launch::async, [this, &selected, &outcomes, &attrs, i] {
        outcomes[i].error = CallValidating(*selected[i], attrs, &outcomes[i].warnings);
        spare_calls_.fetch_add(1);
      }));
      continue;
    }
    if (i > 0) spare_calls_.fetch_add(1);  // none spare: undo the reservation
    inline_calls.push_back(i);
  }
  for (size_t i : inline_calls) {
    outcomes[i].error = CallValidating(*selected[i], attrs, &outcomes[i].warnings);
  }
  for (auto& f : pending) f.wait();
  std::optional<ApiError> first;
  for (Outcome& o : outcomes) {
    if (attrs.warnings) {
      for (std::string& w : o.warnings) attrs.warnings->push_back(std::move(w));
    }
    if (o.error && !first) first = std::move(o.error);
  }
  return first;
}

}  // namespace converge::apiserver
