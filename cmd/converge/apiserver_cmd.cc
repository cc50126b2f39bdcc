// converge apiserver: the API server alone, on the embedded store or on etcd.
#include <spdlog/spdlog.h>

#include "commands.h"
#include "server/control_plane.h"
#include "store/etcd/etcd_store.h"

namespace converge::cmd {

namespace {

int RunApiserver(const server::ControlPlaneOptions& options) {
  BlockShutdownSignals();
  server::ControlPlane cp(options);
  if (auto s = cp.Start(); !s.ok()) {
    spdlog::error("apiserver: {}", s.ToString());
    return 1;
  }
  WaitForShutdownSignal();
  spdlog::info("apiserver: shutting down");
  cp.Stop();
  return 0;
}

}  // namespace

void AddControlPlaneFlags(CLI::App* sub, server::ControlPlaneOptions* o) {
  sub->add_option("--data-dir", o->data_dir, "Where the store and the kubeconfig live")
      ->capture_default_str();
  sub->add_option("--store", o->store, "embedded (LMDB in DATA_DIR/store) or etcd")
      ->check(CLI::IsMember({"embedded", "etcd"}))
      ->capture_default_str();
  sub->add_option_function<std::string>(
      "--etcd-endpoints",
      [o](const std::string& flag) {
        auto endpoints = store::etcd::ParseEndpoints(flag);
        if (!endpoints.ok())
          throw CLI::ValidationError("--etcd-endpoints", endpoints.status().message());
        o->etcd_endpoints = std::move(*endpoints);
      },
      "etcd client URLs, URL[,URL...] (with --store etcd); the next is used when one fails");
  sub->add_option("--listen", o->listen, "HOST:PORT to serve on (port 0 picks one)")
      ->capture_default_str();
  sub->add_option("--workers", o->workers, "Request worker threads")->capture_default_str();
  sub->add_option("--io-threads", o->io_threads, "Network I/O threads")->capture_default_str();
  sub->add_option("--watch-cache-size", o->watch_cache_size,
                  "Most events kept per resource for resuming watches (those of the last 75 s, at "
                  "least 100)")
      ->capture_default_str();
  sub->add_option_function<int>(
         "--compaction-interval",
         [o](int seconds) { o->compaction_interval = std::chrono::seconds(seconds); },
         "Seconds between store compactions (0: never)")
      ->default_str("300");
  AddDurationFlag(sub, "--event-ttl", &o->event_ttl, std::chrono::nanoseconds(1),
                  "How long Events are kept after their last write")
      ->default_str("1h0m0s");
  sub->add_flag("--insecure-http", o->insecure_http,
                "Serve plain HTTP without authentication of clients (loopback only)");
  sub->add_option("--token-auth-file", o->token_auth_file,
                  "Static bearer tokens: token,user,uid[,\"group1,group2\"] per line");
  sub->add_option("--advertise-address", o->advertise_names,
                  "Extra host names or IPs clients use (added to the serving certificate)");
  sub->add_option("--audit-log-path", o->audit_log_path,
                  "Append an audit.k8s.io/v1 Event per request (level Metadata) to this file");
  sub->add_option("--max-requests-inflight", o->max_requests_inflight,
                  "Read-only requests queued or executing at once before 429 (0: no cap)")
      ->capture_default_str();
  sub->add_option("--max-mutating-requests-inflight", o->max_mutating_requests_inflight,
                  "Mutating requests queued or executing at once before 429 (0: no cap)")
      ->capture_default_str();
  sub->add_option_function<int>(
         "--request-timeout",
         [o](int seconds) { o->request_timeout = std::chrono::seconds(seconds); },
         "Seconds before a request (not a watch) is answered 504 Timeout")
      ->default_str("60");
  sub->add_flag("--enable-fault-injection", o->enable_fault_injection,
                "Let administrators inject faults through /converge/faults/... (docs/FAULTS.md)");
  sub->add_flag("!--no-fsync", o->fsync,
                "Acknowledge writes before they reach the disk (benchmarks only)");
}

void RegisterApiserver(CLI::App& app) {
  auto options = std::make_shared<server::ControlPlaneOptions>();
  CLI::App* sub = app.add_subcommand("apiserver", "Run the API server alone");
  AddControlPlaneFlags(sub, options.get());
  sub->callback([options] { SetExitCode(RunApiserver(*options)); });
}

}  // namespace converge::cmd
