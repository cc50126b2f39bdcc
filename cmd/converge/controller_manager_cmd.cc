// converge controller-manager: the controllers alone, against any API server.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <thread>

#include "api/special_types.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "commands.h"
#include "controllers/manager/controller_manager.h"
#include "server/delayed_watch_transport.h"

namespace converge::cmd {

namespace {

struct ControllerManagerFlags {
  std::string kubeconfig;
  std::string controllers = "*";
  int workers = 5;
  bool leader_elect = true;
  std::chrono::seconds node_monitor_grace_period{50};
  double fault_watch_delay_seconds = 0;
};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int RunControllerManager(const ControllerManagerFlags& f) {
  BlockShutdownSignals();
  auto config = client::LoadRestConfig(f.kubeconfig);
  if (!config.ok()) {
    spdlog::error("loading {}: {}", f.kubeconfig, config.status().ToString());
    return 1;
  }
  config->user_agent = "converge-controller-manager/0.1";
  auto transport = client::NewTransportForConfig(*config);
  if (!transport.ok()) {
    spdlog::error("{}", transport.status().ToString());
    return 1;
  }
  if (f.fault_watch_delay_seconds > 0) {
    // Fault injection: this process's informers run behind the API server (docs/FAULTS.md).
    auto delay = std::make_shared<server::WatchDelay>();
    delay->Set(std::chrono::milliseconds(static_cast<int64_t>(f.fault_watch_delay_seconds * 1000)));
    *transport = std::make_shared<server::DelayedWatchTransport>(std::move(*transport), delay);
    spdlog::warn("controller-manager: watch events arrive {}s late (--fault-watch-delay)",
                 f.fault_watch_delay_seconds);
  }
  client::RestClient rest(client::RestClientOptions{.transport = std::move(*transport)});
  controllers::ControllerManagerOptions o;
  o.client = &rest;
  o.controllers = SplitCommas(f.controllers);
  o.workers = f.workers;
  o.leader_elect = f.leader_elect;
  o.node_monitor_grace_period = f.node_monitor_grace_period;
  controllers::ControllerManager manager(o);
  std::stop_source stop;
  util::Status result;
  std::thread runner([&] { result = manager.Run(stop.get_token()); });
  spdlog::info("controller-manager: running");
  WaitForShutdownSignal();
  stop.request_stop();
  runner.join();
  if (!result.ok()) {
    spdlog::error("controller-manager: {}", result.ToString());
    return 1;
  }
  return 0;
}

}  // namespace

void AddNodeMonitorGracePeriodFlag(CLI::App* sub, std::chrono::seconds* grace) {
  sub->add_option_function<std::string>(
         "--node-monitor-grace-period",
         [grace](const std::string& value) {
           std::optional<int64_t> ns = api::ParseDuration(value);
           if (!ns || *ns <= 0) throw CLI::ValidationError("--node-monitor-grace-period", value);
           *grace = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::nanoseconds(*ns));
         },
         "How long a node may stop heartbeating before it is marked Unknown and tainted")
      ->default_str("50s");
}

void RegisterControllerManager(CLI::App& app) {
  auto flags = std::make_shared<ControllerManagerFlags>();
  CLI::App* sub = app.add_subcommand("controller-manager", "Run the controllers alone");
  sub->add_option("--kubeconfig", flags->kubeconfig, "Kubeconfig of the API server")->required();
  sub->add_option("--controllers", flags->controllers,
                  "Comma-separated controllers to run; * = all, -name = all but name")
      ->capture_default_str();
  sub->add_option("--workers", flags->workers, "Workers per controller")->capture_default_str();
  sub->add_option("--leader-elect", flags->leader_elect,
                  "Elect a leader among replicas through a Lease")
      ->capture_default_str();
  AddNodeMonitorGracePeriodFlag(sub, &flags->node_monitor_grace_period);
  sub->add_option("--fault-watch-delay", flags->fault_watch_delay_seconds,
                  "Fault injection: deliver every watch event this many seconds late (a stale "
                  "informer cache; docs/FAULTS.md)")
      ->capture_default_str();
  sub->callback([flags] { SetExitCode(RunControllerManager(*flags)); });
}

}  // namespace converge::cmd
