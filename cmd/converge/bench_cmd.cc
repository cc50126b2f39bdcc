// converge bench SCENARIO: the scale and speed figures of issue #9 (src/bench/scenarios.h).
// Prints a progress bar while it runs (on a terminal), then a table; --json FILE writes the same
// figures as one JSON object.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <functional>
#include <memory>

#include "bench/scenarios.h"
#include "commands.h"

namespace converge::cmd {

namespace {

struct BenchFlags {
  std::string json_path;
  bench::CommonOptions common;
};

// Adds the flags every scenario has.
void AddCommonFlags(CLI::App* sub, BenchFlags* flags) {
  sub->add_option("--json", flags->json_path, "Also write the figures to this JSON file");
  sub->add_option("--dir", flags->common.dir,
                  "Parent of the temporary data dirs (default: the system temp dir)");
  sub->add_option("--binary", flags->common.binary,
                  "converge binary for the servers the bench starts (default: this one)");
  sub->add_option("--store", flags->common.store,
                  "Store of the servers the bench starts: embedded, or etcd (a one-member etcd "
                  "3.4 started on loopback beside each server)")
      ->check(CLI::IsMember({"embedded", "etcd"}))
      ->capture_default_str();
  sub->add_option("--etcd-binary", flags->common.etcd_binary,
                  "etcd for --store etcd and the store comparison of `api`")
      ->capture_default_str();
}

int Finish(const BenchFlags& flags, bench::Report& report, const util::Status& status) {
  if (!status.ok()) {
    spdlog::error("bench {}: {}", report.scenario(), status.ToString());
    return 1;
  }
  std::fputs(report.Table().c_str(), stdout);
  std::fflush(stdout);
  if (!flags.json_path.empty()) {
    if (auto s = report.WriteJson(flags.json_path); !s.ok()) {
      spdlog::error("bench: {}", s.ToString());
      return 1;
    }
  }
  return 0;
}

// Registers one scenario: `run` gets the common options and fills the report.
template <typename Options>
void AddScenario(CLI::App* bench, const std::string& name, const std::string& description,
                 std::shared_ptr<Options> options,
                 util::Status (*run)(const Options&, bench::Report*),
                 const std::function<void(CLI::App*)>& add_flags) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* sub = bench->add_subcommand(name, description);
  AddCommonFlags(sub, flags.get());
  add_flags(sub);
  sub->callback([=] {
    options->common = flags->common;
    bench::Report report(name);
    util::Status s = run(*options, &report);
    SetExitCode(Finish(*flags, report, s));
  });
}

}  // namespace

void RegisterBench(CLI::App& app) {
  CLI::App* bench =
      app.add_subcommand("bench", "Measure throughput, latency and footprint (issue #9 scenarios)");
  bench->require_subcommand(1);

  auto api = std::make_shared<bench::ApiOptions>();
  AddScenario<bench::ApiOptions>(
      bench, "api", "Pod creates over HTTPS by 1, 16 and 64 clients; the store workload vs etcd",
      api, &bench::RunApi, [api](CLI::App* sub) {
        sub->add_option("--clients", api->clients, "Concurrency levels")
            ->delimiter(',')
            ->capture_default_str();
        sub->add_option("--seconds", api->seconds, "Duration of each level")->capture_default_str();
        sub->add_flag("!--no-etcd", api->etcd, "Skip the etcd 3.4 comparison");
      });

  auto watch = std::make_shared<bench::WatchOptions>();
  AddScenario<bench::WatchOptions>(
      bench, "watch", "Watchers at a steady write rate: delivery latency", watch, &bench::RunWatch,
      [watch](CLI::App* sub) {
        sub->add_option("--watchers", watch->watchers, "Concurrent watches")->capture_default_str();
        sub->add_option("--rate", watch->writes_per_second, "Pod creates per second")
            ->capture_default_str();
        sub->add_option("--seconds", watch->seconds, "Duration of the writes")
            ->capture_default_str();
      });

  auto list = std::make_shared<bench::ListOptions>();
  AddScenario<bench::ListOptions>(
      bench, "list", "LIST of many pods, whole and paginated: latency and bytes", list,
      &bench::RunList, [list](CLI::App* sub) {
        sub->add_option("--pods", list->pods, "Pods to create and list")->capture_default_str();
        sub->add_option("--page-size", list->page_size, "limit= of the paginated LIST")
            ->capture_default_str();
        sub->add_option("--repeat", list->repeat, "Runs of each LIST (the median is reported)")
            ->capture_default_str();
      });

  auto e2e = std::make_shared<bench::E2eOptions>();
  AddScenario<bench::E2eOptions>(
      bench, "e2e", "Scale one Deployment to M pods on N simulated nodes", e2e, &bench::RunE2e,
      [e2e](CLI::App* sub) {
        sub->add_option("--nodes", e2e->nodes, "Simulated nodes")->capture_default_str();
        sub->add_option("--pods", e2e->pods, "Replicas to scale to")->capture_default_str();
        sub->add_option("--kubeconfig", e2e->kubeconfig,
                        "Target this server instead of starting one (its nodes must exist)");
        sub->add_option("--server-pid", e2e->server_pid,
                        "With --kubeconfig: the server's PID, to measure its RSS and CPU");
        sub->add_option("--timeout", e2e->timeout_seconds, "Seconds to wait for all pods")
            ->capture_default_str();
        sub->add_option("--hold", e2e->hold_seconds,
                        "Seconds to keep the pods after all are Ready, then report the "
                        "server's RSS (held_rss_bytes)")
            ->capture_default_str();
        sub->add_option("--server-arg", e2e->server_args,
                        "Extra flag for the server the bench starts (repeatable)");
      });

  auto startup = std::make_shared<bench::StartupOptions>();
  AddScenario<bench::StartupOptions>(
      bench, "startup", "Process start to /readyz, empty and with many objects", startup,
      &bench::RunStartup, [startup](CLI::App* sub) {
        sub->add_option("--objects", startup->objects, "Pods in the reopened data dir")
            ->capture_default_str();
        sub->add_option("--repeat", startup->repeat, "Starts of each kind (median reported)")
            ->capture_default_str();
      });
}

}  // namespace converge::cmd
