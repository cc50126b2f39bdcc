#include "controllers/manager/controller_manager.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "client/leader_elector.h"
#include "util/ids.h"

namespace converge::controllers {

namespace {

bool Enabled(const std::vector<std::string>& wanted, const std::string& name) {
  if (wanted.empty()) return true;
  bool all = std::find(wanted.begin(), wanted.end(), "*") != wanted.end();
  bool on = std::find(wanted.begin(), wanted.end(), name) != wanted.end();
  bool off = std::find(wanted.begin(), wanted.end(), "-" + name) != wanted.end();
  return (all || on) && !off;
}

}  // namespace

ControllerManager::ControllerManager(ControllerManagerOptions options)
    : options_(std::move(options)) {}

ControllerManager::~ControllerManager() = default;

util::Status ControllerManager::RunControllers(std::stop_token stop) {
  sink_ = std::make_unique<client::RestEventSink>(options_.client);
  // Informers drop managedFields, as upstream's kube-controller-manager's do: no controller reads
  // them, and updates of such objects keep the stored ones.
  client::ReflectorOptions reflector;
  reflector.drop_managed_fields = true;
  reflector.compact_objects = true;
  client::SharedInformerFactory informers(
      {.client = options_.client, .clock = options_.clock, .reflector = reflector});
  std::vector<std::jthread> recorder_threads;
  ControllerContext ctx;
  ctx.client = options_.client;
  ctx.informers = &informers;
  ctx.clock = options_.clock;
  ctx.workers = options_.workers;
  ctx.node_monitor_grace_period = options_.node_monitor_grace_period;
  ctx.node_monitor_period = options_.node_monitor_period;
  ctx.root_ca_pem = options_.root_ca_pem;
  ctx.recorder = [&](std::string_view component) -> client::EventRecorder* {
    auto it = recorders_.find(component);
    if (it != recorders_.end()) return it->second.get();
    client::EventRecorderOptions ro;
    ro.source.component = std::string(component);
    ro.sink = sink_.get();
    ro.clock = options_.clock;
    auto rec = std::make_unique<client::EventRecorder>(ro);
    client::EventRecorder* raw = rec.get();
    recorders_.emplace(std::string(component), std::move(rec));
    recorder_threads.emplace_back([raw](std::stop_token own) { raw->Run(own); });
    return raw;
  };

  std::vector<std::pair<std::string, std::unique_ptr<RunnableController>>> running;
  for (const ControllerDescriptor& d : BuiltinControllers()) {
    if (!Enabled(options_.controllers, d.name)) continue;
    ctx.client = options_.client;
    if (options_.client_for && !d.service_account.empty()) {
      auto own = options_.client_for(d.service_account);
      if (!own.ok()) {
        return own.status().WithContext("credentials for the " + d.name + " controller");
      }
      ctx.client = *own;
    }
    auto c = d.init(ctx);
    if (!c.ok()) return c.status().WithContext("starting the " + d.name + " controller");
    running.emplace_back(d.name, std::move(*c));
  }
  informers.Start(stop);
  if (!informers.WaitForCacheSync(stop)) {
    informers.Shutdown();
    return util::Cancelled("stopped before the caches synced");
  }
  std::vector<std::jthread> threads;
  for (auto& [name, c] : running) {
    spdlog::info("controller-manager: started the {} controller", name);
    RunnableController* raw = c.get();
    threads.emplace_back([raw, stop] { raw->Run(stop); });
  }
  // Shutdown order: controllers (their workers finish the current item), then informers, then
  // the event recorders: their threads end (joined), then what the controllers reported and is
  // still queued is written here.
  for (auto& t : threads) t.join();
  running.clear();
  informers.Shutdown();
  for (auto& t : recorder_threads) t.request_stop();
  recorder_threads.clear();
  for (auto& [name, rec] : recorders_) rec->Flush();
  recorders_.clear();
  return util::Status();
}

util::Status ControllerManager::Run(std::stop_token stop) {
  if (!options_.leader_elect) return RunControllers(stop);
  std::string identity = options_.identity;
  if (identity.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    identity = std::string(host) + "_" + util::NewUuid();
  }
  client::LeaseLockOptions lo;
  lo.client = options_.client;
  lo.lease = {options_.lease_namespace, options_.lease_name};
  lo.identity = identity;
  util::Status result;
  client::LeaseLock lock(lo);
  client::LeaderElectionConfig cfg;
  cfg.lock = &lock;
  cfg.lease_duration = options_.leader_election.lease_duration;
  cfg.renew_deadline = options_.leader_election.renew_deadline;
  cfg.retry_period = options_.leader_election.retry_period;
  cfg.clock = options_.clock;
  cfg.on_started_leading = [&](std::stop_token leading) {
    spdlog::info("controller-manager: {} is the leader", identity);
    result = RunControllers(leading);
  };
  cfg.on_stopped_leading = [&] {
    spdlog::info("controller-manager: {} stopped leading", identity);
  };
  auto elector = client::LeaderElector::New(std::move(cfg));
  if (!elector.ok()) return elector.status();
  (*elector)->Run(stop);
  if (!stop.stop_requested()) return client::LeadershipLost();
  return result;
}

}  // namespace converge::controllers
