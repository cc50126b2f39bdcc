// APIServer: the single entry point of every API call, whatever the transport.
//
// Handle() runs the whole chain for one Request — routing, authentication, authorization,
// decoding, admission, validation, storage, encoding — and returns the Response (a streamed one
// for watches and followed logs). HTTP/1.1, HTTP/2 and the in-process transport all call it, so
// behaviour is identical across them.
//
// Lifecycle: construct, Start() (bootstraps the registry, the watch caches and the system
// namespaces), serve, Stop(). Thread-safety: Handle may be called from many threads at once; it
// blocks while the store commits, so transports call it from worker threads.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <thread>

#include "api/resource.h"
#include "apiserver/admission.h"
#include "apiserver/admission_namespace_lifecycle.h"
#include "apiserver/admission_webhook.h"
#include "apiserver/audit.h"
#include "apiserver/authn.h"
#include "apiserver/authz.h"
#include "apiserver/crd_controller.h"
#include "apiserver/discovery.h"
#include "apiserver/errors.h"
#include "apiserver/event_expiry.h"
#include "apiserver/fieldmanager.h"
#include "apiserver/handler_util.h"
#include "apiserver/openapi.h"
#include "apiserver/rbac_authorizer.h"
#include "apiserver/request.h"
#include "apiserver/request_info.h"
#include "apiserver/serviceaccount_token.h"
#include "apiserver/storage.h"
#include "apiserver/watch_cache.h"
#include "store/kv.h"
#include "util/clock.h"

namespace converge::apiserver {

struct APIServerOptions {
  store::KV* kv = nullptr;  // not owned; must outlive the server
  util::Clock* clock = &util::RealClock();
  CacherOptions cacher;
  StorageOptions storage;
  // Reported in discovery (serverAddressByClientCIDRs) and written into kubeconfigs.
  std::string advertise_address = "127.0.0.1:6443";
  size_t max_body_bytes = 3 * 1024 * 1024;
  // The store is compacted every interval to the revision seen one interval earlier (upstream's
  // --etcd-compaction-interval, 5 minutes). Zero disables compaction.
  std::chrono::milliseconds compaction_interval{std::chrono::minutes(5)};
  // Events are deleted this long after their last write (upstream's --event-ttl, one hour;
  // apiserver/event_expiry.h). Zero keeps them.
  std::chrono::milliseconds event_ttl{std::chrono::hours(1)};
  // How requests from outside the process are authenticated.
  AuthenticatorOptions authentication;
  // Authorization: system:masters, always-allowed paths, the node authorizer, then RBAC (with
  // upstream's bootstrap policy reconciled at start). false = every authenticated request is
  // allowed (upstream's AlwaysAllow), for tests of other layers.
  bool authorization = true;
  // Signing and verification of ServiceAccount tokens (the TokenRequest API); without keys,
  // serviceaccounts/token is 404 and no JWT authenticates.
  ServiceAccountTokenOptions service_account_tokens;
  // Longest watch when the client gives no timeoutSeconds (upstream: 30-60 min, randomized).
  std::chrono::seconds max_watch_timeout{1800};
  // Receives one audit event per request (level Metadata); null = no audit log. Not owned; must
  // outlive the server and must not block.
  AuditSink* audit = nullptr;
  // Calls admission webhooks; null = HTTPS (HttpsWebhookClient). Not owned; must outlive the
  // server.
  WebhookClient* webhook_client = nullptr;
};

class APIServer : public CustomResourceHost {
 public:
  explicit APIServer(APIServerOptions options);
  ~APIServer();
  APIServer(const APIServer&) = delete;
  APIServer& operator=(const APIServer&) = delete;

  util::Status Start();
  void Stop();
  bool ready() const { return ready_.load(); }

  Response Handle(Request& req);

  api::ResourceRegistry& registry() { return registry_; }
  // Serves pods/log (the simulated kubelets install one); without it logs are empty.
  using LogProvider = std::function<Response(const Request& req, const CachedObject& pod)>;
  void SetLogProvider(LogProvider provider) { log_provider_ = std::move(provider); }
  AdmissionChain& admission() { return admission_; }
  // Whether any admission webhook is configured: a write may then wait on a network call. A
  // configuration created a moment ago may not be seen yet (the watch cache's lag).
  bool CallsAdmissionWebhooks() const;
  // Sees every authenticated and authorized request before it is served; a returned Response is
  // served instead (fault injection, server/fault_injector.h). Set before Start; null = none.
  using RequestInterceptor = std::function<std::optional<Response>(Request&, const RequestInfo&)>;
  void SetRequestInterceptor(RequestInterceptor interceptor) {
    interceptor_ = std::move(interceptor);
  }
  // The watch caches (null before Start).
  Cacher* cacher() const { return cacher_.get(); }
  // The authorizer chain (null when authorization is off). Set by Start.
  const Authorizer* authorizer() const { return authorizer_.get(); }
  // The storage of a resource (null when unknown). For in-process bootstrap code and tests;
  // built-in storages live as long as the server, custom resources' only while served (hold
  // StorageFor's reference across a request).
  ResourceStorage* Storage(const api::GroupVersionResource& gvr) const;

  // CustomResourceHost (crd_controller.h): the CRD controller registers custom resources here.
  void ServeCustomResource(const api::GroupResource& gr,
                           std::vector<std::shared_ptr<const api::ResourceInfo>> versions) override;
  std::shared_ptr<ResourceStorage> StorageFor(const api::GroupVersionResource& gvr) override;

 private:
  struct ResourceEntry {
    std::shared_ptr<const api::ResourceInfo> info;
    std::shared_ptr<ResourceStorage> storage;
  };

  void InstallResource(std::shared_ptr<const api::ResourceInfo> info);
  std::shared_ptr<ResourceStorage> MakeStorage(std::shared_ptr<const api::ResourceInfo> info);
  util::Status BootstrapNamespaces();
  std::optional<NamespaceLifecycle::Phase> NamespacePhase(const std::string& ns);
  // The labels of a namespace (webhook namespaceSelectors); nullopt when it does not exist.
  std::optional<boost::json::object> NamespaceLabels(const std::string& ns);
  // Adds the admission webhook plugin (after every built-in plugin).
  void InstallWebhookAdmission();

  Response HandleNonResource(Request& req, const RequestInfo& ri);
  Response HandleResource(Request& req, const RequestInfo& ri);
  // Discovery (/api, /apis, ...) and OpenAPI; nullopt when the path is neither.
  std::optional<Response> HandleDiscovery(Request& req, const RequestInfo& ri);
  // Resources without storage (access reviews, token reviews; handlers_authz.cc).
  Response HandleVirtual(Request& req, const RequestInfo& ri, const api::ResourceInfo& info);
  // Builds the authorizer chain and the RBAC admission plugins (before the caches start).
  void InstallAuthorization();
  // Applies Impersonate-* headers: checks the `impersonate` verb and replaces req.user (the
  // authenticated user moves to *impersonator, for the audit log).
  std::optional<ApiError> Impersonate(Request& req, std::optional<UserInfo>* impersonator);
  // Asks the authorizer chain; on a denial fills *denied with the 403 and returns false.
  bool Authorize(const AuthzAttributes& attrs, Response* denied);
  // Writes the audit event of a served request to options_.audit and sets its Audit-Id header.
  void Audit(const Request& req, const RequestInfo& ri, const std::optional<UserInfo>& impersonator,
             util::WallTime received, Response* resp);
  // The spec.nodeName of a pod (node authorizer); nullopt when there is no such pod.
  std::optional<std::string> PodNode(std::string_view ns, std::string_view name);
  // ServiceAccount tokens (handlers_token.cc): serviceaccounts/token, tokenreviews, and the check
  // that a token's ServiceAccount (and bound object) still exists.
  Response HandleTokenRequest(RequestContext& ctx);
  Response HandleTokenReview(Request& req);
  std::optional<ApiOr<UserInfo>> VerifyServiceAccountToken(std::string_view token) const;
  ApiOr<UserInfo> AuthenticateServiceAccountClaims(const ServiceAccountClaims& claims) const;

  // Resource verbs (handlers_read.cc, handlers_write.cc, handlers_patch.cc).
  Response HandleGet(RequestContext& ctx);
  Response HandleList(RequestContext& ctx);
  Response HandleWatch(RequestContext& ctx);
  Response HandleCreate(RequestContext& ctx);
  Response HandleUpdate(RequestContext& ctx);
  Response HandlePatch(RequestContext& ctx);
  Response HandleApply(RequestContext& ctx);
  Response HandleDelete(RequestContext& ctx);
  Response HandleDeleteCollection(RequestContext& ctx);
  // Subresources (handlers_subresource.cc).
  Response HandleScale(RequestContext& ctx);
  // A write through /scale (upstream's scaleUpdatedObjectInfo): `change` receives the current
  // autoscaling/v1 Scale, carrying as managedFields the parent's owners of its replicas field
  // (ScaleManagedFieldsFromParent), and returns the desired Scale. kUpdate (PUT, patches) records
  // the change on the Scale as an Update; kApply (apply patches) means `change` ran
  // ServerSideApply with the context it is given. The Scale is validated, a uid in it must be the
  // parent's, its spec.replicas goes to the parent and its managedFields back onto the parent's.
  // Answers with the new Scale and `warnings`.
  enum class ScaleWrite { kUpdate, kApply };
  using ScaleChange =
      std::function<ApiOr<api::Object>(api::Object scale, const ManagedFieldsContext& mctx)>;
  Response UpdateScale(RequestContext& ctx, ScaleWrite kind, const ScaleChange& change,
                       const std::vector<std::string>& warnings = {});
  Response HandleBinding(RequestContext& ctx);
  Response HandleLog(RequestContext& ctx);
  Response HandleFinalize(RequestContext& ctx);
  // pods/eviction (handlers_eviction.cc); EvictPod marks the pod and deletes it.
  Response HandleEviction(RequestContext& ctx);
  ApiOr<DeleteResult> EvictPod(RequestContext& ctx, DeleteOptions opts);

  const APIServerOptions options_;
  api::ResourceRegistry registry_;
  AdmissionChain admission_;
  std::unique_ptr<Cacher> cacher_;
  ServiceAccountTokens sa_tokens_;
  Authenticator authenticator_;  // after sa_tokens_: its token verifier uses them
  std::unique_ptr<DiscoveryService> discovery_;
  std::unique_ptr<OpenApiService> openapi_;
  std::unique_ptr<RbacPolicySource> rbac_policy_;        // set by Start
  std::shared_ptr<const Authorizer> authorizer_;         // set by Start; null = allow all
  std::unique_ptr<WebhookConfigSource> webhook_source_;  // set by Start
  std::unique_ptr<WebhookClient> webhook_client_;        // set by Start unless given

  mutable std::shared_mutex resources_mu_;
  std::map<api::GroupVersionResource, ResourceEntry> resources_;  // guarded by resources_mu_

  void RunCompaction(std::stop_token stop);

  LogProvider log_provider_;                       // set before serving
  std::unique_ptr<CrdController> crd_controller_;  // set by Start
  std::jthread crd_thread_;
  RequestInterceptor interceptor_;  // set before serving
  std::jthread compactor_;
  std::unique_ptr<EventExpiry> event_expiry_;  // set by Start when options_.event_ttl > 0
  std::jthread event_expiry_thread_;
  std::atomic<bool> ready_{false};
};

}  // namespace converge::apiserver
