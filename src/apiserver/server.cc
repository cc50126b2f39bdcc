#include "apiserver/server.h"

#include <spdlog/spdlog.h>

#include <iterator>
#include <thread>
#include <vector>

#include "api/builtin_resources.h"
#include "api/custom_resource.h"
#include "api/schema_registry.h"
#include "apiserver/admission_node_restriction.h"
#include "apiserver/admission_pod_defaults.h"
#include "apiserver/admission_service_ip.h"
#include "apiserver/bootstrap_policy.h"
#include "apiserver/metrics.h"
#include "apiserver/node_authorizer.h"
#include "apiserver/rbac_escalation.h"
#include "apiserver/strategy.h"
#include "util/ids.h"
#include "util/thread_name.h"
#include "util/time_format.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

ServiceAccountTokenOptions TokenOptions(ServiceAccountTokenOptions o, const util::Clock* clock) {
  if (!o.clock) o.clock = clock;
  return o;
}

}  // namespace

APIServer::APIServer(APIServerOptions options)
    : options_(std::move(options)),
      sa_tokens_(TokenOptions(options_.service_account_tokens, options_.clock)),
      authenticator_([this] {
        AuthenticatorOptions o = options_.authentication;
        // ServiceAccount JWTs first, then whatever verifier the embedder gave.
        o.token_verifier = [this, next = o.token_verifier](
                               std::string_view token) -> std::optional<ApiOr<UserInfo>> {
          if (auto r = VerifyServiceAccountToken(token)) return r;
          if (next) return next(token);
          return std::nullopt;
        };
        return o;
      }()) {}

APIServer::~APIServer() {
  Stop();
}

std::shared_ptr<ResourceStorage> APIServer::MakeStorage(
    std::shared_ptr<const api::ResourceInfo> info) {
  WatchCache* cache = cacher_->ForPrefix(info->storage_prefix);
  if (!cache) cache = cacher_->AddResource(info);
  return std::make_shared<ResourceStorage>(info, MakeStrategy(info), options_.kv, cacher_.get(),
                                           cache, &admission_, options_.storage);
}

void APIServer::InstallResource(std::shared_ptr<const api::ResourceInfo> info) {
  if (info->storage_prefix.empty()) return;  // virtual resources (reviews) have no storage
  auto storage = MakeStorage(info);
  const api::GroupVersionResource gvr = info->gvr;
  std::unique_lock lock(resources_mu_);
  resources_[gvr] = ResourceEntry{std::move(info), std::move(storage)};
}

ResourceStorage* APIServer::Storage(const api::GroupVersionResource& gvr) const {
  std::shared_lock lock(resources_mu_);
  auto it = resources_.find(gvr);
  return it == resources_.end() ? nullptr : it->second.storage.get();
}

std::shared_ptr<ResourceStorage> APIServer::StorageFor(const api::GroupVersionResource& gvr) {
  std::shared_lock lock(resources_mu_);
  auto it = resources_.find(gvr);
  return it == resources_.end() ? nullptr : it->second.storage;
}

void APIServer::ServeCustomResource(
    const api::GroupResource& gr, std::vector<std::shared_ptr<const api::ResourceInfo>> versions) {
  std::vector<ResourceEntry> entries;
  for (const auto& info : versions) entries.push_back({info, MakeStorage(info)});
  auto drop_stale = [&] {
    std::unique_lock lock(resources_mu_);
    std::erase_if(resources_, [&](const auto& kv) {
      return kv.first.Gr() == gr && std::none_of(versions.begin(), versions.end(),
                                                 [&](const auto& v) { return v->gvr == kv.first; });
    });
  };
  if (versions.empty()) {
    // Unregister first, so nothing routes to a storage that is going away.
    registry_.Replace(gr, {});
    drop_stale();
    cacher_->RetireResource(api::CustomResourceStoragePrefix(gr.group, gr.resource));
    return;
  }
  {
    std::unique_lock lock(resources_mu_);
    for (ResourceEntry& e : entries) {
      const api::GroupVersionResource gvr = e.info->gvr;
      resources_[gvr] = std::move(e);
    }
  }
  registry_.Replace(gr, versions);
  drop_stale();
}

std::optional<NamespaceLifecycle::Phase> APIServer::NamespacePhase(const std::string& ns) {
  ResourceStorage* namespaces = Storage({"", "v1", "namespaces"});
  if (!namespaces) return NamespaceLifecycle::Phase::kActive;
  CachedObjectPtr obj = namespaces->cache()->Get(StorageKey(namespaces->info(), "", ns));
  if (!obj) {
    // The cache may lag a namespace created a moment ago: ask the store.
    auto fresh = namespaces->Get("", ns, "");
    if (!fresh.ok()) return std::nullopt;
    obj = *fresh;
  }
  // Every create in a namespace asks this, so the answer comes from what the cache entry keeps
  // (status.phase is one of its selectable fields; whether it has a deletionTimestamp is a flag)
  // without reading its JSON, which is held compressed.
  if (obj->being_deleted() ||
      obj->FieldValue(namespaces->info(), "status.phase") == "Terminating") {
    return NamespaceLifecycle::Phase::kTerminating;
  }
  return NamespaceLifecycle::Phase::kActive;
}

std::optional<json::object> APIServer::NamespaceLabels(const std::string& ns) {
  ResourceStorage* namespaces = Storage({"", "v1", "namespaces"});
  if (!namespaces) return std::nullopt;
  CachedObjectPtr obj = namespaces->cache()->Get(StorageKey(namespaces->info(), "", ns));
  if (!obj) {
    auto fresh = namespaces->Get("", ns, "");  // the cache may lag a namespace just created
    if (!fresh.ok()) return std::nullopt;
    obj = *fresh;
  }
  return obj->LabelsObject();
}

void APIServer::InstallWebhookAdmission() {
  auto cache = [&](const char* resource) {
    ResourceStorage* s = Storage({"admissionregistration.k8s.io", "v1", resource});
    return s ? s->cache() : nullptr;
  };
  webhook_source_ = std::make_unique<WebhookConfigSource>(cache("mutatingwebhookconfigurations"),
                                                          cache("validatingwebhookconfigurations"));
  WebhookClient* client = options_.webhook_client;
  if (!client) {
    webhook_client_ = std::make_unique<HttpsWebhookClient>();
    client = webhook_client_.get();
  }
  admission_.Add(std::make_shared<WebhookAdmission>(WebhookAdmissionOptions{
      .webhooks = [source = webhook_source_.get()] { return source->Current(); },
      .namespace_labels = [this](const std::string& ns) { return NamespaceLabels(ns); },
      .client = client,
  }));
}

bool APIServer::CallsAdmissionWebhooks() const {
  return webhook_source_ && !webhook_source_->Current()->empty();
}

util::Status APIServer::BootstrapNamespaces() {
  ResourceStorage* namespaces = Storage({"", "v1", "namespaces"});
  if (!namespaces) return util::Internal("namespaces are not registered");
  UserInfo system{"system:apiserver", "", {"system:masters"}, true};
  WriteContext ctx;
  ctx.user = &system;
  // Concurrently: the store's group commit makes one durable commit of the four creates.
  constexpr const char* kNames[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
  util::Status errors[std::size(kNames)];
  {
    std::vector<std::jthread> creates;
    for (size_t i = 0; i < std::size(kNames); ++i) {
      creates.emplace_back([&, i] {
        api::Object ns;
        ns.SetGvk({"", "v1", "Namespace"});
        ns.set_name(kNames[i]);
        auto created = namespaces->Create("", std::move(ns), ctx);
        if (!created.ok() && created.error().reason != "AlreadyExists") {
          errors[i] = util::Internal("creating namespace " + std::string(kNames[i]) + ": " +
                                     created.error().message);
        }
      });
    }
  }
  for (const util::Status& e : errors) CONVERGE_RETURN_IF_ERROR(e);
  return util::Status();
}

util::Status APIServer::Start() {
  if (!options_.kv) return util::InvalidArgument("APIServer needs a store");
  api::LoadBuiltins(&registry_);
  discovery_ = std::make_unique<DiscoveryService>(
      &registry_, DiscoveryServiceOptions{.server_address = options_.advertise_address});
  openapi_ = std::make_unique<OpenApiService>(&registry_, &api::BuiltinSchemas());
  cacher_ = std::make_unique<Cacher>(options_.kv, options_.cacher);
  admission_.Add(std::make_shared<NamespaceLifecycle>(
      [this](const std::string& ns) { return NamespacePhase(ns); }));
  admission_.Add(std::make_shared<ServiceAccountAdmission>(
      [this](const std::string& ns, const std::string& name) -> std::optional<bool> {
        ResourceStorage* sas = Storage({"", "v1", "serviceaccounts"});
        if (!sas) return std::nullopt;
        auto sa = sas->Get(ns, name, "0");  // the watch cache is fresh enough
        if (!sa.ok()) return std::nullopt;
        // Most ServiceAccounts do not say: then there is nothing to parse (every pod create
        // asks).
        if ((*sa)->json()->find("\"automountServiceAccountToken\"") == std::string::npos) {
          return std::nullopt;
        }
        auto parsed = (*sa)->Parse();
        if (!parsed.ok()) return std::nullopt;
        auto it = parsed->doc().find("automountServiceAccountToken");
        if (it == parsed->doc().end() || !it->value().is_bool()) return std::nullopt;
        return it->value().get_bool();
      }));
  admission_.Add(std::make_shared<DefaultTolerationSeconds>());
  admission_.Add(std::make_shared<ServiceClusterIpAllocator>([this] {
    std::set<std::string> used;
    if (ResourceStorage* services = Storage({"", "v1", "services"})) {
      for (const auto& svc : services->cache()->List({}).items) {
        auto parsed = svc->Parse();
        if (!parsed.ok()) continue;
        if (const auto* ips = api::FindArray(parsed->doc(), {"spec", "clusterIPs"})) {
          for (const auto& ip : *ips) {
            if (ip.is_string()) used.emplace(ip.get_string());
          }
        }
        std::string_view ip = api::FindString(parsed->doc(), {"spec", "clusterIP"});
        if (!ip.empty() && ip != "None") used.emplace(ip);
      }
    }
    return used;
  }));
  for (const auto& info : registry_.Snapshot()->resources) InstallResource(info);
  if (options_.authorization) InstallAuthorization();
  InstallWebhookAdmission();
  CONVERGE_RETURN_IF_ERROR(cacher_->Start());
  CONVERGE_RETURN_IF_ERROR(BootstrapNamespaces());
  if (options_.authorization) CONVERGE_RETURN_IF_ERROR(ReconcileBootstrapPolicy(*this));
  // Custom resources stored before a restart are served before the server says it is ready.
  crd_controller_ =
      std::make_unique<CrdController>(this, CrdControllerOptions{.clock = options_.clock});
  crd_controller_->Sync();
  crd_thread_ = std::jthread([this](std::stop_token st) {
    util::SetThreadName("crd-controller");
    crd_controller_->Run(st);
  });
  if (options_.compaction_interval.count() > 0) {
    compactor_ = std::jthread([this](std::stop_token st) {
      util::SetThreadName("compaction");
      RunCompaction(st);
    });
  }
  if (options_.event_ttl.count() > 0) {
    event_expiry_ = std::make_unique<EventExpiry>(
        EventExpiryOptions{.kv = options_.kv, .clock = options_.clock, .ttl = options_.event_ttl});
    event_expiry_->Start();
    event_expiry_thread_ = std::jthread([this](std::stop_token st) {
      util::SetThreadName("event-expiry");
      event_expiry_->Run(st);
    });
  }
  ready_ = true;
  return util::Status();
}

void APIServer::Stop() {
  ready_ = false;
  if (crd_thread_.joinable()) {
    crd_thread_.request_stop();
    crd_thread_.join();
  }
  if (compactor_.joinable()) {
    compactor_.request_stop();
    compactor_.join();
  }
  if (event_expiry_thread_.joinable()) {
    event_expiry_thread_.request_stop();
    event_expiry_thread_.join();
  }
  if (cacher_) cacher_->Stop();
}

void APIServer::RunCompaction(std::stop_token stop) {
  // Compacting to the revision of one interval ago keeps at least one interval of history for
  // watchers and paginated lists to resume from.
  store::Revision previous = options_.kv->CurrentRevision();
  std::mutex mu;
  std::condition_variable_any cv;
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(mu);
      cv.wait_for(lock, stop, options_.compaction_interval, [] { return false; });
    }
    if (stop.stop_requested()) return;
    store::Revision now = options_.kv->CurrentRevision();
    if (previous > options_.kv->CompactRevision()) {
      auto r = options_.kv->Compact(previous);
      if (!r.ok() && !store::IsCompacted(r.status())) {
        spdlog::warn("compaction to revision {} failed: {}", previous, r.status().ToString());
      }
    }
    previous = now;
  }
}

void APIServer::InstallAuthorization() {
  const std::string g = "rbac.authorization.k8s.io";
  auto cache = [&](const char* resource) {
    ResourceStorage* s = Storage({g, "v1", resource});
    return s ? s->cache() : nullptr;
  };
  rbac_policy_ = std::make_unique<RbacPolicySource>(RbacPolicySource::Caches{
      .cluster_roles = cache("clusterroles"),
      .roles = cache("roles"),
      .cluster_role_bindings = cache("clusterrolebindings"),
      .role_bindings = cache("rolebindings"),
  });
  auto policy = [source = rbac_policy_.get()] { return source->Current(); };
  auto chain = std::make_shared<AuthorizerChain>();
  chain->Add(std::make_shared<PrivilegedGroupAuthorizer>());
  chain->Add(std::make_shared<AlwaysAllowPathsAuthorizer>());
  chain->Add(std::make_shared<NodeAuthorizer>(NodeAuthorizerOptions{
      .pod_node = [this](std::string_view ns, std::string_view name) { return PodNode(ns, name); },
      .node_rules = NodeRules(),
  }));
  // A denied request waits (briefly) for the caches to catch up with every committed write and is
  // evaluated once more, so a binding created just before is honoured.
  chain->Add(std::make_shared<RbacAuthorizer>(
      policy, [this] { cacher_->WaitFresh(std::chrono::seconds(1)); }));
  authorizer_ = chain;
  admission_.Add(std::make_shared<NodeRestriction>());
  admission_.Add(std::make_shared<RbacEscalationAdmission>(authorizer_, policy));
}

std::optional<std::string> APIServer::PodNode(std::string_view ns, std::string_view name) {
  ResourceStorage* pods = Storage({"", "v1", "pods"});
  if (!pods) return std::nullopt;
  std::string key = StorageKey(pods->info(), ns, name);
  // spec.nodeName is a selectable field: the cache entry holds it, no parse needed.
  auto node_of = [pods](const CachedObject& pod) {
    return pod.FieldValue(pods->info(), "spec.nodeName");
  };
  if (CachedObjectPtr cached = pods->cache()->Get(key)) {
    std::string node = node_of(*cached);
    if (!node.empty()) return node;  // a pod is bound once; only "" may be stale
  }
  // The cache may lag a pod created or bound a moment ago: ask the store.
  auto fresh = pods->Get(std::string(ns), std::string(name), "");
  if (!fresh.ok()) return std::nullopt;
  return node_of(**fresh);
}

bool APIServer::Authorize(const AuthzAttributes& attrs, Response* denied) {
  if (!authorizer_) return true;
  AuthzResult r = authorizer_->Authorize(attrs);
  if (r.allowed()) return true;
  *denied = ErrorResponse(ForbiddenFor(attrs, r.reason));
  return false;
}

Response APIServer::Handle(Request& req) {
  const auto start = std::chrono::steady_clock::now();
  const util::WallTime received = options_.audit ? options_.clock->WallNow() : util::WallTime();
  RequestInfo ri = ParseRequestInfo(req);
  const bool mutating = ri.verb == "create" || ri.verb == "update" || ri.verb == "patch" ||
                        ri.verb == "delete" || ri.verb == "deletecollection";
  ApiMetrics& m = ApiMetrics::Get();
  util::Gauge& inflight = mutating ? m.inflight_mutating : m.inflight_readonly;
  inflight.Inc();
  Response resp;
  std::optional<UserInfo> impersonator;  // set when Impersonate-* headers applied
  if (auto user = authenticator_.Authenticate(req); !user.ok()) {
    resp = ErrorResponse(user.error());
  } else if (req.user = std::move(*user); !req.user.authenticated && !IsPublicPath(req.path)) {
    // Anonymous users reach health, version and discovery only.
    resp = ErrorResponse(Unauthorized("Unauthorized"));
  } else if (auto denied = Impersonate(req, &impersonator)) {
    resp = ErrorResponse(*denied);
  } else if (AuthzAttributes attrs = AttributesFor(ri, req, req.user); !Authorize(attrs, &resp)) {
    // resp holds the 403
  } else if (std::optional<Response> r = interceptor_ ? interceptor_(req, ri) : std::nullopt) {
    resp = std::move(*r);
  } else if (!ri.is_resource_request) {
    resp = HandleNonResource(req, ri);
  } else {
    resp = HandleResource(req, ri);
  }
  // Once answered (a pending create: once its commit is durable).
  return Then(std::move(resp),
              [this, &req, &inflight, &m, ri = std::move(ri),
               impersonator = std::move(impersonator), start, received](Response& r) {
                inflight.Dec();
                m.Observe(req, ri, r.status, std::chrono::steady_clock::now() - start);
                if (options_.audit) Audit(req, ri, impersonator, received, &r);
              });
}

void APIServer::Audit(const Request& req, const RequestInfo& ri,
                      const std::optional<UserInfo>& impersonator, util::WallTime received,
                      Response* resp) {
  AuditRecord r;
  r.audit_id = util::NewUuid();
  // Long-running requests are logged when their stream starts (upstream logs ResponseStarted
  // at once and ResponseComplete when the watch ends; we keep the first).
  if (resp->stream) r.stage = "ResponseStarted";
  r.request = &req;
  r.info = &ri;
  if (impersonator) {
    r.user = *impersonator;
    r.impersonated = req.user;
  } else {
    r.user = req.user;
  }
  r.code = resp->status;
  if (resp->status >= 300) r.response_body = resp->body;
  r.received = received;
  r.stage_time = options_.clock->WallNow();
  options_.audit->Write(BuildAuditEvent(r));
  resp->headers.emplace_back("Audit-Id", std::move(r.audit_id));
}

}  // namespace converge::apiserver
