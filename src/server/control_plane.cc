#include "server/control_plane.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "apiserver/kubeconfig.h"
#include "server/inprocess_transport.h"
#include "store/embedded_store.h"

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

  store::EmbeddedStoreOptions so;
  so.dir = (fs::path(options_.data_dir) / "store").string();
  so.fsync = options_.fsync;
  auto kv = store::OpenEmbeddedStore(so);
  if (!kv.ok()) return kv.status().WithContext("opening the store in " + so.dir);
  kv_ = std::move(*kv);

  apiserver::APIServerOptions ao;
  ao.kv = kv_.get();
  ao.advertise_address = options_.listen;
  ao.cacher.cache.history_capacity = options_.watch_cache_size;
  ao.compaction_interval = options_.compaction_interval;
  api_ = std::make_unique<apiserver::APIServer>(ao);
  CONVERGE_RETURN_IF_ERROR(api_->Start());

  apiserver::HttpServerOptions ho;
  ho.listen = options_.listen;
  ho.worker_threads = options_.workers;
  ho.io_threads = options_.io_threads;
  ho.handler = [api = api_.get()](apiserver::Request& req) { return api->Handle(req); };
  http_ = std::make_unique<apiserver::HttpServer>(ho);
  CONVERGE_RETURN_IF_ERROR(http_->Start());

  std::string host = options_.listen.substr(0, options_.listen.rfind(':'));
  url_ = "http://" + host + ":" + std::to_string(http_->port());
  apiserver::KubeconfigOptions kc;
  kc.server = url_;
  kubeconfig_path_ = (fs::path(options_.data_dir) / "kubeconfig").string();
  CONVERGE_RETURN_IF_ERROR(apiserver::WriteKubeconfig(kubeconfig_path_, kc));
  spdlog::info("apiserver: serving on {} (kubeconfig: {})", url_, kubeconfig_path_);
  return util::Status();
}

void ControlPlane::Stop() {
  // Reverse of Start: stop taking requests, stop the API server (its watch caches end every
  // watch), then close the store (it syncs what is queued).
  if (http_) http_->Stop();
  if (api_) api_->Stop();
  http_.reset();
  api_.reset();
  kv_.reset();
}

std::unique_ptr<client::RestClient> ControlPlane::InProcessClient(
    const std::string& user, std::vector<std::string> groups) const {
  InProcessTransportOptions to;
  to.user.name = user;
  to.user.groups = std::move(groups);
  to.user.groups.push_back("system:authenticated");
  to.user.authenticated = true;
  auto transport = std::make_shared<InProcessTransport>(
      [api = api_.get()](apiserver::Request& req) { return api->Handle(req); }, to);
  client::RestClientOptions ro;
  ro.transport = std::move(transport);
  return std::make_unique<client::RestClient>(ro);
}

}  // namespace converge::server
