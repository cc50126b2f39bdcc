// Dynamic admission webhooks: the admission plugin that calls MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration webhooks with AdmissionReview v1 over HTTPS.
//
// Where it sits (APIServer::Start adds it last, so):
//   built-in mutating plugins → mutating webhooks (Admit) → the storage defaults and validates
//   the object again if a webhook patched it → built-in validating plugins → validating webhooks
//   (Validate).
//
// Per webhook, in order: rules, then namespaceSelector, then objectSelector decide whether it is
// called (webhook_config.h). A dry-run request meeting a matching webhook whose sideEffects is
// neither None nor NoneOnDryRun is refused (400) like upstream. Then:
//   - the call fails, times out (timeoutSeconds, 1-30, default 10) or answers malformed:
//     failurePolicy Fail → 500 "failed calling webhook ..."; Ignore → the webhook is skipped;
//   - allowed: false → the request is refused with the webhook's status (admission_review.h);
//   - a mutating webhook's JSONPatch is applied to the object; response warnings become Warning
//     headers.
// Mutating webhooks run one after another (configurations by name, webhooks in order). Mutating
// webhooks with reinvocationPolicy IfNeeded are called once more when a later webhook changed the
// object after their call (upstream also re-runs built-in plugins then; we do not).
// Validating webhooks are called in parallel (up to max_parallel_calls at once, the rest on the
// calling thread); when several refuse, the first in order wins.
//
// Cost when no configuration exists: one poll of two watch-cache watchers under a mutex
// (WebhookConfigSource), no allocation.
//
// Threads: calls block the calling thread (an API server worker, never an I/O thread) for at most
// the webhook's timeout each.
//
// Thread-safety: every class here is safe for concurrent use.
#pragma once

#include <boost/json.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "apiserver/admission.h"
#include "apiserver/admission_review.h"
#include "apiserver/cache_change_detector.h"
#include "apiserver/watch_cache.h"
#include "apiserver/webhook_config.h"
#include "util/status.h"

namespace converge::client {
class HttpTransport;
}

namespace converge::apiserver {

// Sends one AdmissionReview to a webhook.
class WebhookClient {
 public:
  virtual ~WebhookClient() = default;
  struct Reply {
    int status = 0;
    std::string body;
  };
  // POSTs `body` to hook.url (with ?timeout=<n>s appended, as client-go does), verifying the
  // server against hook.ca_bundle_pem, within hook.timeout. Errors carry the text that follows
  // "failed calling webhook "<name>": " (e.g. `failed to call webhook: Post "https://...":
  // context deadline exceeded`).
  virtual util::StatusOr<Reply> Post(const Webhook& hook, const std::string& body) = 0;
};

// WebhookClient over HTTPS (client::HttpTransport): one keep-alive connection pool per webhook
// origin and CA bundle.
class HttpsWebhookClient final : public WebhookClient {
 public:
  HttpsWebhookClient();
  ~HttpsWebhookClient() override;
  util::StatusOr<Reply> Post(const Webhook& hook, const std::string& body) override;

 private:
  util::StatusOr<std::shared_ptr<client::HttpTransport>> TransportFor(const std::string& origin,
                                                                      const Webhook& hook);

  std::mutex mu_;
  // origin + "\n" + CA bundle → transport. Guarded by mu_; dropped whole when it grows past a
  // bound (configurations come and go; in-flight calls hold their own reference).
  std::map<std::string, std::shared_ptr<client::HttpTransport>> transports_;
};

// Keeps a WebhookSet current from the watch caches of the two configuration kinds: Current()
// polls (without blocking) a watch on each and rebuilds the set only when one changed.
class WebhookConfigSource {
 public:
  WebhookConfigSource(WatchCache* mutating, WatchCache* validating)
      : caches_{mutating, validating},
        changes_{CacheChangeDetector(mutating, 1 << 12), CacheChangeDetector(validating, 1 << 12)} {
  }
  std::shared_ptr<const WebhookSet> Current() const;

 private:
  WatchCache* const caches_[2];
  mutable std::mutex mu_;
  mutable CacheChangeDetector changes_[2];         // guarded by mu_
  mutable std::shared_ptr<const WebhookSet> set_;  // guarded by mu_
};

struct WebhookAdmissionOptions {
  // The current webhooks (WebhookConfigSource::Current).
  std::function<std::shared_ptr<const WebhookSet>()> webhooks;
  // The labels of a namespace ({} when it has none); nullopt when the namespace does not exist.
  std::function<std::optional<boost::json::object>(const std::string& ns)> namespace_labels;
  WebhookClient* client = nullptr;  // not owned; must outlive the plugin
  // Validating webhooks called at once on extra threads, across all requests.
  int max_parallel_calls = 16;
};

class WebhookAdmission final : public AdmissionPlugin {
 public:
  explicit WebhookAdmission(WebhookAdmissionOptions options);
  std::string_view name() const override { return "WebhookAdmission"; }
  std::optional<ApiError> Admit(AdmissionAttributes& attrs) override;
  std::optional<ApiError> Validate(const AdmissionAttributes& attrs) override;

 private:
  class NamespaceLabels;
  // Whether `hook` intercepts the request; an error when the request must fail instead (the
  // namespace is gone, or a dry run meets a webhook with side effects).
  ApiOr<bool> ShouldCall(const Webhook& hook, const AdmissionAttributes& attrs,
                         NamespaceLabels& ns) const;
  // Calls a mutating webhook and applies its patch; returns whether the object changed.
  ApiOr<bool> CallMutating(const Webhook& hook, AdmissionAttributes& attrs);
  // Calls a validating webhook; warnings go to *warnings.
  std::optional<ApiError> CallValidating(const Webhook& hook, const AdmissionAttributes& attrs,
                                         std::vector<std::string>* warnings);
  // One round trip: the verdict, or the call-failure detail.
  util::StatusOr<AdmissionVerdict> Call(const Webhook& hook, const AdmissionAttributes& attrs);

  const WebhookAdmissionOptions options_;
  std::atomic<int> spare_calls_;  // extra threads still available for validating calls
};

}  // namespace converge::apiserver
