// Subcommands of the converge binary. Each Register* adds one to the CLI and runs it from the
// CLI's callback; the exit code is collected for main.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "api/special_types.h"

namespace converge::server {
struct ControlPlaneOptions;
}
namespace converge::client {
struct LeaderElectionTimings;
}

namespace converge::cmd {

// A flag that takes a Go duration ("1m30s", "500ms") into `*out`. A value that does not parse, or
// is shorter than `min`, is a usage error.
template <typename Duration>
CLI::Option* AddDurationFlag(CLI::App* sub, const std::string& name, Duration* out,
                             std::chrono::nanoseconds min, const std::string& help) {
  return sub->add_option_function<std::string>(
      name,
      [name, out, min](const std::string& value) {
        std::optional<int64_t> ns = api::ParseDuration(value);
        if (!ns) throw CLI::ValidationError(name, "not a duration: " + value);
        if (std::chrono::nanoseconds(*ns) < min) {
          throw CLI::ValidationError(name, "too short: " + value);
        }
        *out = std::chrono::duration_cast<Duration>(std::chrono::nanoseconds(*ns));
      },
      help);
}

// Flags shared by `apiserver` and `server`.
void AddControlPlaneFlags(CLI::App* sub, server::ControlPlaneOptions* options);

// --node-monitor-grace-period (a Go duration, e.g. "50s"), shared by `controller-manager` and
// `server`.
void AddNodeMonitorGracePeriodFlag(CLI::App* sub, std::chrono::seconds* grace);
// --node-monitor-period (a positive Go duration, upstream's 5s: how often the node lifecycle
// controller checks node health), shared by `controller-manager` and `server`.
void AddNodeMonitorPeriodFlag(CLI::App* sub, std::chrono::milliseconds* period);

// Upstream's --leader-elect-lease-duration (15s), --leader-elect-renew-deadline (10s) and
// --leader-elect-retry-period (2s), Go durations, shared by `controller-manager`, `scheduler` and
// `server`. A value that does not parse is a usage error; how the three relate is checked by
// CheckLeaderElectionFlags once all are parsed.
void AddLeaderElectionFlags(CLI::App* sub, client::LeaderElectionTimings* timings);
// client::ValidateLeaderElectionTimings for `component`; false (after logging why, naming the
// flags) when the timings are unusable.
bool CheckLeaderElectionFlags(const char* component, const client::LeaderElectionTimings& timings);

// --node-lease-duration-seconds (upstream's kubelet nodeLeaseDurationSeconds, 40; the Lease is
// renewed every quarter of it), shared by `kubelet` and `server`.
void AddNodeLeaseDurationFlag(CLI::App* sub, int* seconds);

void RegisterApiserver(CLI::App& app);
void RegisterControllerManager(CLI::App& app);
void RegisterServer(CLI::App& app);
void RegisterScheduler(CLI::App& app);
void RegisterKubelet(CLI::App& app);
void RegisterCloudSim(CLI::App& app);
void RegisterBench(CLI::App& app);

// The exit code the last run subcommand asked for.
int ExitCode();
void SetExitCode(int code);

// Blocks SIGINT and SIGTERM in the calling thread (and the threads it starts later), so that
// WaitForShutdownSignal receives them. Call first thing in a subcommand.
void BlockShutdownSignals();
// Blocks until SIGINT or SIGTERM.
void WaitForShutdownSignal();
// Ends WaitForShutdownSignal as a SIGTERM would: for a component whose work ended on its own
// (a leader that lost its lease exits, as upstream's do, so that it is restarted).
void RequestShutdown();

}  // namespace converge::cmd
