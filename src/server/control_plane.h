// ControlPlane: the API server as a running service — store, API server, HTTP listener and the
// kubeconfig it hands out. `converge apiserver` runs one alone; `converge server` runs one with
// every other component attached in-process.
//
// Start order: open the store (recovering and verifying it), start the API server (watch caches,
// bootstrap namespaces), start listening, write DIR/kubeconfig (last: its existence tells users
// and tests that the server is reachable). Stop runs in reverse.
//
// Thread-safety: Start/Stop from one thread; the accessors are safe once Start returned.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "apiserver/http_server.h"
#include "apiserver/pki.h"
#include "apiserver/server.h"
#include "client/rest_client.h"
#include "server/fault_injector.h"
#include "store/kv.h"

namespace converge::server {

struct ControlPlaneOptions {
  // Where the store, PKI and kubeconfig live ("store" is unused with the etcd store).
  std::string data_dir = "./data";
  // "embedded" (LMDB in DATA_DIR/store) or "etcd" (a cluster at etcd_endpoints, shared with other
  // API servers; store/etcd/etcd_store.h).
  std::string store = "embedded";
  std::vector<std::string> etcd_endpoints;
  std::string listen = "127.0.0.1:6443";
  bool fsync = true;
  // The embedded store's map size (EmbeddedStoreOptions::map_size); 0: the store's default.
  size_t store_map_size = 0;
  int workers = 64;
  int io_threads = 2;
  size_t watch_cache_size = 10000;
  std::chrono::seconds compaction_interval{300};
  // Events are deleted this long after their last write (upstream's --event-ttl).
  std::chrono::milliseconds event_ttl{std::chrono::hours(1)};
  // Plain HTTP instead of TLS (loopback addresses only): for debugging with curl.
  bool insecure_http = false;
  // Upstream's --token-auth-file: token,user,uid[,"groups"] per line.
  std::string token_auth_file;
  // Extra names or addresses clients use to reach the server (serving certificate SANs).
  std::vector<std::string> advertise_names;
  // Upstream's --audit-log-path: one audit.k8s.io/v1 Event per line (level Metadata); empty = off.
  std::string audit_log_path;
  // Overload protection (apiserver/flow_control.h): upstream's flags and defaults.
  int max_requests_inflight = 400;
  int max_mutating_requests_inflight = 200;
  std::chrono::seconds request_timeout{60};
  // Serves /converge/faults/... to administrators (fault_injector.h, docs/FAULTS.md).
  bool enable_fault_injection = false;
};

class ControlPlane {
 public:
  explicit ControlPlane(ControlPlaneOptions options);
  ~ControlPlane();

  util::Status Start();
  void Stop();

  apiserver::APIServer& api() { return *api_; }
  store::KV& kv() { return *kv_; }
  const std::string& kubeconfig_path() const { return kubeconfig_path_; }
  // The cluster PKI (its CA and certificates go unused when serving plain HTTP).
  const apiserver::Pki& pki() const { return pki_; }
  // Writes a kubeconfig for `user` in `groups` with a fresh client certificate (component
  // kubeconfigs for split deployments, extra users for tests).
  util::Status WriteUserKubeconfig(const std::string& path, const std::string& user,
                                   const std::vector<std::string>& groups) const;
  // "http(s)://host:port" as clients reach it.
  const std::string& url() const { return url_; }
  // A client that enters the API server's handler chain without a socket, acting as `user`.
  // With fault injection on, a named `component`'s watch streams can be delayed
  // (FaultInjector::ComponentWatchDelay).
  std::unique_ptr<client::RestClient> InProcessClient(const std::string& user,
                                                      std::vector<std::string> groups,
                                                      const std::string& component = "") const;
  // Null unless options.enable_fault_injection.
  FaultInjector* faults() const { return faults_.get(); }

 private:
  const ControlPlaneOptions options_;
  std::unique_ptr<store::KV> kv_;
  std::unique_ptr<apiserver::AuditLogFile> audit_;  // before api_: it outlives the API server
  std::unique_ptr<apiserver::APIServer> api_;
  std::unique_ptr<FaultInjector> faults_;  // after api_: it refers to the API server
  std::unique_ptr<apiserver::HttpServer> http_;
  apiserver::Pki pki_;
  std::string kubeconfig_path_;
  std::string url_;
};

}  // namespace converge::server
