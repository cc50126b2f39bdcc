// Subcommands of the converge binary. Each Register* adds one to the CLI and runs it from the
// CLI's callback; the exit code is collected for main.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>

namespace converge::server {
struct ControlPlaneOptions;
}

namespace converge::cmd {

// Flags shared by `apiserver` and `server`.
void AddControlPlaneFlags(CLI::App* sub, server::ControlPlaneOptions* options);

// --node-monitor-grace-period (a Go duration, e.g. "50s"), shared by `controller-manager` and
// `server`.
void AddNodeMonitorGracePeriodFlag(CLI::App* sub, std::chrono::seconds* grace);

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

}  // namespace converge::cmd
