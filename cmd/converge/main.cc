// converge: the single binary. Each component is a subcommand; `server` runs them all.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Converge: a Kubernetes-compatible control plane"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  converge::cmd::RegisterApiserver(app);
  converge::cmd::RegisterControllerManager(app);
  converge::cmd::RegisterServer(app);
  converge::cmd::RegisterScheduler(app);
  converge::cmd::RegisterKubelet(app);
  converge::cmd::RegisterCloudSim(app);
  converge::cmd::RegisterBench(app);
  app.parse_complete_callback([&] { spdlog::set_level(spdlog::level::from_str(log_level)); });
  CLI11_PARSE(app, argc, argv);
  return converge::cmd::ExitCode();
}
