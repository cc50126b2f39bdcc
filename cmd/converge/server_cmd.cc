// converge server: the whole control plane and N simulated nodes in one process.
#include <spdlog/spdlog.h>

#include "commands.h"
#include "server/all_in_one.h"

namespace converge::cmd {

namespace {

int RunServer(const server::AllInOneOptions& options) {
  if (options.leader_elect && !CheckLeaderElectionFlags("server", options.leader_election)) {
    return 1;
  }
  if (options.node_lease_duration_seconds <= 0) {
    spdlog::error("server: --node-lease-duration-seconds must be greater than 0, got {}",
                  options.node_lease_duration_seconds);
    return 1;
  }
  BlockShutdownSignals();
  server::AllInOne s(options);
  if (auto st = s.Start(); !st.ok()) {
    spdlog::error("server: {}", st.ToString());
    return 1;
  }
  WaitForShutdownSignal();
  spdlog::info("server: shutting down");
  s.Stop();
  return 0;
}

}  // namespace

void RegisterServer(CLI::App& app) {
  auto options = std::make_shared<server::AllInOneOptions>();
  CLI::App* sub = app.add_subcommand(
      "server", "Run the API server, controllers, scheduler and simulated nodes in one process");
  AddControlPlaneFlags(sub, &options->control_plane);
  sub->add_option("--nodes", options->nodes, "Simulated nodes")->capture_default_str();
  sub->add_option("--leader-elect", options->leader_elect,
                  "Elect leaders through Leases (for running several servers on one store)")
      ->capture_default_str();
  AddLeaderElectionFlags(sub, &options->leader_election);
  AddNodeMonitorGracePeriodFlag(sub, &options->node_monitor_grace_period);
  AddNodeMonitorPeriodFlag(sub, &options->node_monitor_period);
  AddNodeLeaseDurationFlag(sub, &options->node_lease_duration_seconds);
  sub->callback([options] { SetExitCode(RunServer(*options)); });
}

}  // namespace converge::cmd
