// converge apiserver: the API server alone, on the embedded store.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "apiserver/http_server.h"
#include "apiserver/kubeconfig.h"
#include "apiserver/server.h"
#include "commands.h"
#include "store/embedded_store.h"

namespace converge::cmd {

namespace {

struct ApiserverFlags {
  std::string data_dir = "./data";
  std::string listen = "127.0.0.1:6443";
  int workers = 64;
  int io_threads = 2;
  bool fsync = true;
  size_t watch_cache_size = 10000;
  int compaction_interval_seconds = 300;
};

int RunApiserver(const ApiserverFlags& f) {
  BlockShutdownSignals();

  std::error_code ec;
  std::filesystem::create_directories(f.data_dir, ec);
  if (ec) {
    spdlog::error("cannot create data dir {}: {}", f.data_dir, ec.message());
    return 1;
  }
  store::EmbeddedStoreOptions so;
  so.dir = (std::filesystem::path(f.data_dir) / "store").string();
  so.fsync = f.fsync;
  auto kv = store::OpenEmbeddedStore(so);
  if (!kv.ok()) {
    spdlog::error("opening the store in {}: {}", so.dir, kv.status().ToString());
    return 1;
  }
  apiserver::APIServerOptions ao;
  ao.kv = kv->get();
  ao.advertise_address = f.listen;
  ao.cacher.cache.history_capacity = f.watch_cache_size;
  ao.compaction_interval = std::chrono::seconds(f.compaction_interval_seconds);
  apiserver::APIServer server(ao);
  if (auto s = server.Start(); !s.ok()) {
    spdlog::error("starting the API server: {}", s.ToString());
    return 1;
  }
  apiserver::HttpServerOptions ho;
  ho.listen = f.listen;
  ho.worker_threads = f.workers;
  ho.io_threads = f.io_threads;
  ho.handler = [&server](apiserver::Request& req) { return server.Handle(req); };
  apiserver::HttpServer http(ho);
  if (auto s = http.Start(); !s.ok()) {
    spdlog::error("{}", s.ToString());
    return 1;
  }
  std::string host = f.listen.substr(0, f.listen.rfind(':'));
  std::string address = host + ":" + std::to_string(http.port());
  apiserver::KubeconfigOptions kc;
  kc.server = "http://" + address;
  std::string kubeconfig = (std::filesystem::path(f.data_dir) / "kubeconfig").string();
  if (auto s = apiserver::WriteKubeconfig(kubeconfig, kc); !s.ok()) {
    spdlog::error("writing {}: {}", kubeconfig, s.ToString());
    return 1;
  }
  spdlog::info("apiserver: serving on {} (kubeconfig: {})", kc.server, kubeconfig);
  WaitForShutdownSignal();
  spdlog::info("apiserver: shutting down");
  // Shutdown order: stop taking requests, then the API server (watch caches), then the store.
  http.Stop();
  server.Stop();
  return 0;
}

}  // namespace

void RegisterApiserver(CLI::App& app) {
  auto flags = std::make_shared<ApiserverFlags>();
  CLI::App* sub = app.add_subcommand("apiserver", "Run the API server alone");
  sub->add_option("--data-dir", flags->data_dir, "Where the store and the kubeconfig live")
      ->capture_default_str();
  sub->add_option("--listen", flags->listen, "HOST:PORT to serve on (port 0 picks one)")
      ->capture_default_str();
  sub->add_option("--workers", flags->workers, "Request worker threads")->capture_default_str();
  sub->add_option("--io-threads", flags->io_threads, "Network I/O threads")->capture_default_str();
  sub->add_option("--watch-cache-size", flags->watch_cache_size,
                  "Events kept per resource for resuming watches")
      ->capture_default_str();
  sub->add_option("--compaction-interval", flags->compaction_interval_seconds,
                  "Seconds between store compactions (0: never)")
      ->capture_default_str();
  sub->add_flag("!--no-fsync", flags->fsync,
                "Acknowledge writes before they reach the disk (benchmarks only)");
  sub->callback([flags] { SetExitCode(RunApiserver(*flags)); });
}

}  // namespace converge::cmd
