// converge cloud-sim: the simulated cloud load-balancer API with injectable faults (issue #12).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>

#include "cloudsim/cloud_sim.h"
#include "commands.h"

namespace converge::cmd {

namespace {

struct CloudSimFlags {
  std::string listen = "127.0.0.1:8790";
  std::string address_file;
  int64_t latency_ms = 0;
  double timeout_after_action_probability = 0;
  int64_t hang_ms = 10000;
  double error_probability = 0;
  int64_t error_burst = 0;
  bool outage = false;
  double outage_seconds = 0;
  int64_t provisioning_ms = 0;
  uint64_t seed = 1;
};

int RunCloudSim(const CloudSimFlags& f) {
  BlockShutdownSignals();
  cloudsim::CloudSimOptions o;
  o.listen = f.listen;
  o.seed = f.seed;
  o.provisioning_delay = std::chrono::milliseconds(f.provisioning_ms);
  o.faults.latency = std::chrono::milliseconds(f.latency_ms);
  o.faults.timeout_after_action_probability = f.timeout_after_action_probability;
  o.faults.hang = std::chrono::milliseconds(f.hang_ms);
  o.faults.error_probability = f.error_probability;
  o.faults.error_burst = f.error_burst;
  o.faults.outage = f.outage;
  cloudsim::CloudSim sim(o);
  if (f.outage_seconds > 0) {
    sim.faults().OutageFor(std::chrono::duration_cast<util::Clock::Duration>(
        std::chrono::duration<double>(f.outage_seconds)));
  }
  if (util::Status s = sim.Start(); !s.ok()) {
    spdlog::error("cloud-sim: listening on {}: {}", f.listen, s.ToString());
    return 1;
  }
  const std::string host = f.listen.substr(0, f.listen.rfind(':'));
  const std::string url = "http://" + host + ":" + std::to_string(sim.port());
  if (!f.address_file.empty()) {
    // Written whole under a temporary name, then renamed: readers never see half a URL.
    const std::string tmp = f.address_file + ".tmp";
    std::ofstream(tmp) << url << "\n";
    if (std::rename(tmp.c_str(), f.address_file.c_str()) != 0) {
      spdlog::error("cloud-sim: cannot write {}", f.address_file);
      return 1;
    }
  }
  spdlog::info("cloud-sim: serving on {}", url);
  WaitForShutdownSignal();
  sim.Stop();
  return 0;
}

}  // namespace

void RegisterCloudSim(CLI::App& app) {
  auto f = std::make_shared<CloudSimFlags>();
  CLI::App* sub = app.add_subcommand(
      "cloud-sim", "Run a simulated cloud load-balancer API with injectable faults");
  sub->add_option("--listen", f->listen, "HOST:PORT to serve on (port 0 picks a free one)")
      ->capture_default_str();
  sub->add_option("--address-file", f->address_file,
                  "Write the URL served (http://HOST:PORT) to this file once listening");
  sub->add_option("--latency-ms", f->latency_ms, "Delay added to every cloud call")
      ->capture_default_str();
  sub->add_option("--timeout-after-action-probability", f->timeout_after_action_probability,
                  "Share of calls that are performed and then stall for --hang-ms")
      ->capture_default_str();
  sub->add_option("--hang-ms", f->hang_ms, "How long a stalled call waits before answering")
      ->capture_default_str();
  sub->add_option("--error-probability", f->error_probability,
                  "Share of calls answered 503 without acting")
      ->capture_default_str();
  sub->add_option("--error-burst", f->error_burst,
                  "The next N calls are answered 500/502/503 without acting")
      ->capture_default_str();
  sub->add_flag("--outage", f->outage,
                "Start in a full outage (every call 503) until switched off");
  sub->add_option("--outage-seconds", f->outage_seconds,
                  "Start in a full outage that ends by itself after this long")
      ->capture_default_str();
  sub->add_option("--provisioning-ms", f->provisioning_ms,
                  "How long a new load balancer stays \"provisioning\" before \"active\"")
      ->capture_default_str();
  sub->add_option("--seed", f->seed, "Seed of the fault generator")->capture_default_str();
  sub->callback([f] { SetExitCode(RunCloudSim(*f)); });
}

}  // namespace converge::cmd
