#include "server/control_plane.h"

#include <arpa/inet.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <sstream>

#include "apiserver/flow_control.h"
#include "apiserver/kubeconfig.h"
#include "apiserver/kubernetes_service.h"
#include "kubelet/log_proxy.h"
#include "server/inprocess_transport.h"
#include "store/embedded_store.h"
#include "store/etcd/etcd_store.h"

namespace converge::server {

ControlPlane::ControlPlane(ControlPlaneOptions options) : options_(std::move(options)) {}

ControlPlane::~ControlPlane() {
  Stop();
}

util::Status ControlPlane::Start() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options_.data_dir, ec);
  if (ec) return util::Unavailable("cannot create " + options_.data_dir + ": " + ec.message());

  std::string host = options_.listen.substr(0, options_.listen.rfind(':'));
  if (options_.insecure_http && host != "127.0.0.1" && host != "localhost" && host != "[::1]" &&
      host != "::1") {
    return util::InvalidArgument("--insecure-http serves only on a loopback address, not " + host);
  }
  // The PKI (which also holds the ServiceAccount signing key, so it exists even without TLS) is
  // loaded or created while the store opens: on a first start both wait on fsyncs, and the PKI
  // was the largest part of the time to /readyz.
  std::future<util::StatusOr<apiserver::Pki>> pki_future = std::async(std::launch::async, [&] {
    apiserver::PkiOptions po;
    po.dir = (fs::path(options_.data_dir) / "pki").string();
    po.extra_sans = options_.advertise_names;
    if (!host.empty() && host != "0.0.0.0" && host != "::" && host != "[::]") {
      po.extra_sans.push_back(host);
    }
    return apiserver::LoadOrCreatePki(po);
  });

  if (options_.store == "etcd") {
    store::etcd::EtcdStoreOptions eo;
    eo.endpoints = options_.etcd_endpoints;
    auto kv = store::etcd::OpenEtcdStore(eo);
    if (!kv.ok()) return kv.status().WithContext("opening the etcd store");
    kv_ = std::move(*kv);
  } else if (options_.store == "embedded") {
    store::EmbeddedStoreOptions so;
    so.dir = (fs::path(options_.data_dir) / "store").string();
    so.fsync = options_.fsync;
    if (options_.store_map_size != 0) so.map_size = options_.store_map_size;
    auto kv = store::OpenEmbeddedStore(so);
    if (!kv.ok()) return kv.status().WithContext("opening the store in " + so.dir);
    kv_ = std::move(*kv);
  } else {
    return util::InvalidArgument("unknown --store \"" + options_.store + "\" (embedded or etcd)");
  }

  apiserver::APIServerOptions ao;
  if (!options_.token_auth_file.empty()) {
    std::ifstream in(options_.token_auth_file);
    if (!in) return util::InvalidArgument("cannot read " + options_.token_auth_file);
    std::stringstream ss;
    ss << in.rdbuf();
    auto tokens = apiserver::ParseTokenFile(ss.str());
    if (!tokens.ok()) return tokens.status();
    ao.authentication.static_tokens = std::move(*tokens);
  }
  {
    util::StatusOr<apiserver::Pki> pki = pki_future.get();
    if (!pki.ok()) return pki.status().WithContext("setting up the PKI");
    pki_ = std::move(*pki);
  }
  ao.service_account_tokens.private_key_pem = pki_.service_account_key.key_pem;
  ao.service_account_tokens.public_key_pem = pki_.service_account_key.cert_pem;
  if (!options_.audit_log_path.empty()) {
    audit_ = std::make_unique<apiserver::AuditLogFile>(
        apiserver::AuditLogFileOptions{.path = options_.audit_log_path});
    CONVERGE_RETURN_IF_ERROR(audit_->Start());
    ao.audit = audit_.get();
  }
  ao.kv = kv_.get();
  ao.advertise_address = options_.listen;
  ao.cacher.cache.history_capacity = options_.watch_cache_size;
  ao.compaction_interval = options_.compaction_interval;
  ao.event_ttl = options_.event_ttl;
  api_ = std::make_unique<apiserver::APIServer>(ao);
  // kubectl logs: proxied to the kubelet serving the pod's node (its daemonEndpoints port).
  api_->SetLogProvider(kubelet::NewKubeletLogProxy(api_.get()));
  if (options_.enable_fault_injection) {
    faults_ = std::make_unique<FaultInjector>(FaultInjectorOptions{kv_.get(), api_.get()});
    api_->SetRequestInterceptor(
        [f = faults_.get()](apiserver::Request& req, const apiserver::RequestInfo& ri) {
          return f->Intercept(req, ri);
        });
    spdlog::warn("apiserver: fault injection enabled (POST /converge/faults/..., docs/FAULTS.md)");
  }
  CONVERGE_RETURN_IF_ERROR(api_->Start());

  apiserver::HttpServerOptions ho;
  ho.listen = options_.listen;
  ho.worker_threads = options_.workers;
  ho.io_threads = options_.io_threads;
  ho.handler = [api = api_.get()](apiserver::Request& req) { return api->Handle(req); };
  if (options_.insecure_http) {
    // Upstream's old insecure port: whoever reaches the loopback listener is an administrator.
    ho.handler = [api = api_.get()](apiserver::Request& req) {
      req.user = {"system:admin", "", {"system:masters", "system:authenticated"}, true};
      req.preauthenticated = true;
      return api->Handle(req);
    };
  } else {
    ho.cert_file = pki_.serving_cert_file();
    ho.key_file = pki_.serving_key_file();
    ho.client_ca_file = pki_.ca_file();
  }
  // Admission needs the user before the handler runs: classify with an authenticator of the same
  // configuration (client certificates and tokens are checked again by the handler; both are
  // cheap).
  auto authn = std::make_shared<apiserver::Authenticator>(ao.authentication);
  const bool insecure = options_.insecure_http;
  ho.classify = [authn, insecure, api = api_.get()](const apiserver::Request& req) {
    apiserver::UserInfo user{"system:anonymous", "", {"system:unauthenticated"}, false};
    if (insecure) {
      user = {"system:admin", "", {"system:masters", "system:authenticated"}, true};
    } else if (auto u = authn->Authenticate(req); u.ok()) {
      user = std::move(*u);
    }
    apiserver::RequestClass c =
        apiserver::ClassifyRequest(req, apiserver::ParseRequestInfo(req), user);
    // A create with webhooks to call waits on them: it runs on a worker like every other write.
    if (c.nonblocking && api->CallsAdmissionWebhooks()) c.nonblocking = false;
    // ServiceAccount JWTs are verified inside the API server only; until the classifier can ask
    // it (TODO(#11)), each distinct bearer token is a flow of its own rather than "anonymous".
    if (!user.authenticated) {
      std::string_view auth = req.Header("authorization");
      if (auth.starts_with("Bearer ")) {
        c.flow = "bearer:" + std::to_string(std::hash<std::string_view>{}(auth.substr(7)));
      }
    }
    return c;
  };
  ho.flow_control.max_requests_inflight = options_.max_requests_inflight;
  ho.flow_control.max_mutating_requests_inflight = options_.max_mutating_requests_inflight;
  ho.flow_control.concurrency = options_.workers;
  // An eighth of the seats (at least one) for leases and node heartbeats.
  ho.flow_control.system_seats = std::max(1, options_.workers / 8);
  ho.request_timeout = options_.request_timeout;
  http_ = std::make_unique<apiserver::HttpServer>(ho);
  CONVERGE_RETURN_IF_ERROR(http_->Start());

  std::string url_host = host.empty() || host == "0.0.0.0" ? "127.0.0.1" : host;
  {
    // The Service default/kubernetes points at this address (an IP: a host name is not one).
    in_addr v4{};
    std::string ip = inet_pton(AF_INET, url_host.c_str(), &v4) == 1 ? url_host : "127.0.0.1";
    if (util::Status s = apiserver::ReconcileKubernetesService(*api_, ip, http_->port()); !s.ok()) {
      spdlog::warn("apiserver: {}", s.ToString());
    }
  }
  url_ = (options_.insecure_http ? "http://" : "https://") + url_host + ":" +
         std::to_string(http_->port());
  kubeconfig_path_ = (fs::path(options_.data_dir) / "kubeconfig").string();
  apiserver::KubeconfigOptions kc;
  kc.server = url_;
  if (!options_.insecure_http) {
    kc.ca_pem = pki_.ca.cert_pem;
    kc.client_cert_pem = pki_.admin.cert_pem;
    kc.client_key_pem = pki_.admin.key_pem;
  }
  CONVERGE_RETURN_IF_ERROR(apiserver::WriteKubeconfig(kubeconfig_path_, kc));
  spdlog::info("apiserver: serving on {} (kubeconfig: {})", url_, kubeconfig_path_);
  return util::Status();
}

void ControlPlane::Stop() {
  // Reverse of Start: stop taking requests, stop the API server (its watch caches end every
  // watch), flush the audit log, then close the store (it syncs what is queued).
  if (http_) http_->Stop();
  if (api_) api_->Stop();
  http_.reset();
  faults_.reset();
  api_.reset();
  if (audit_) audit_->Stop();
  audit_.reset();
  kv_.reset();
}

util::Status ControlPlane::WriteUserKubeconfig(const std::string& path, const std::string& user,
                                               const std::vector<std::string>& groups) const {
  apiserver::KubeconfigOptions kc;
  kc.server = url_;
  kc.user_name = user;
  if (!options_.insecure_http) {
    auto cert = pki_.ClientCertificate(user, groups);
    if (!cert.ok()) return cert.status();
    kc.ca_pem = pki_.ca.cert_pem;
    kc.client_cert_pem = cert->cert_pem;
    kc.client_key_pem = cert->key_pem;
  }
  return apiserver::WriteKubeconfig(path, kc);
}

std::unique_ptr<client::RestClient> ControlPlane::InProcessClient(
    const std::string& user, std::vector<std::string> groups, const std::string& component) const {
  InProcessTransportOptions to;
  to.user.name = user;
  to.user.groups = std::move(groups);
  to.user.groups.push_back("system:authenticated");
  to.user.authenticated = true;
  // Upstream's components' User-Agents, whose prefixes become the field managers of their
  // writes (kube-controller-manager, kube-scheduler, kubelet).
  static const std::map<std::string, std::string, std::less<>> kAgents = {
      {"controller-manager", "kube-controller-manager"},
      {"scheduler", "kube-scheduler"},
      {"kubelet", "kubelet"}};
  if (auto it = kAgents.find(component); it != kAgents.end()) {
    to.user_agent = it->second + "/v1.32.0 (linux/amd64) kubernetes/converge";
    // Their informers drop managedFields (the controller manager's and the scheduler's) or keep
    // a projection without them (the kubelet's): the watch hands over the shared objects
    // without them, a third less per object held.
    to.watch_without_managed_fields = true;
  }
  std::shared_ptr<client::Transport> transport = std::make_shared<InProcessTransport>(
      [api = api_.get()](apiserver::Request& req) { return api->Handle(req); }, to);
  if (faults_ && !component.empty()) {
    transport = std::make_shared<DelayedWatchTransport>(std::move(transport),
                                                        faults_->ComponentWatchDelay(component));
  }
  client::RestClientOptions ro;
  ro.transport = std::move(transport);
  return std::make_unique<client::RestClient>(ro);
}

}  // namespace converge::server
