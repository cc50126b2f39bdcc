// scheduler_bench: scheduler_perf-style throughput of the whole scheduler.
//
//   build/bench/scheduler/scheduler_bench --nodes 5000 --pods 50000 [--transport inprocess|http]
//       [--fsync] [--bind-workers 16] [--json FILE]
//
// Sets up an API server (server::ControlPlane: TLS, authentication, RBAC) in a temporary
// directory in this process, reached in-process or over loopback HTTPS as system:kube-scheduler;
// creates the nodes and the pending pods, then starts the scheduler — informers, queue,
// filter/score, assume, bind through pods/binding — and times it until every pod is bound.
// Reported, as scheduler_perf does: pods scheduled per second over the run (from the first binding
// to the last), the mean of per-second samples, and the time including the scheduler's start-up
// (the initial list of every pending pod).
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "scheduler/scheduler.h"
#include "server/control_plane.h"

namespace converge {
namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

struct Flags {
  int nodes = 5000;
  int pods = 50000;
  std::string transport = "inprocess";
  bool fsync = false;
  int bind_workers = 16;
  int setup_threads = 8;
  std::string node_cpu = "32";
  std::string node_memory = "256Gi";
  std::string pod_cpu = "100m";
  std::string pod_memory = "128Mi";
  std::string json_file;
  std::string data_dir;
};

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

json::object NodeObject(int i, const Flags& f) {
  std::string name = "node-" + std::to_string(i);
  json::object resources{{"cpu", f.node_cpu}, {"memory", f.node_memory}, {"pods", "110"}};
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", json::object{{"name", name},
                                {"labels", json::object{{"kubernetes.io/hostname", name},
                                                        {"topology.kubernetes.io/zone",
                                                         "zone-" + std::to_string(i % 3)}}}}},
      {"status", json::object{{"capacity", resources},
                              {"allocatable", resources},
                              {"conditions",
                               json::array{json::object{{"type", "Ready"}, {"status", "True"}}}}}}};
}

json::object PodObject(int i, const Flags& f) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", "pod-" + std::to_string(i)},
                                {"labels", json::object{{"app", "bench"}}}}},
      {"spec",
       json::object{{"containers",
                     json::array{json::object{
                         {"name", "app"},
                         {"image", "registry.k8s.io/pause:3.9"},
                         {"resources",
                          json::object{{"requests", json::object{{"cpu", f.pod_cpu},
                                                                 {"memory", f.pod_memory}}}}}}}}}}};
}

// Creates count objects with `threads` writers; returns the seconds it took.
double CreateAll(client::RestClient& c, const api::GroupVersionResource& gvr, std::string_view ns,
                 int count, int threads, const std::function<json::object(int)>& make) {
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  Clock::time_point start = Clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      for (int i = next++; i < count; i = next++) {
        auto r = c.Create(gvr, ns, api::Object(make(i)));
        if (!r.ok() && failures++ < 5) spdlog::error("create: {}", r.status().ToString());
      }
    });
  }
  for (auto& t : ts) t.join();
  if (failures > 0) spdlog::error("{} creates failed", failures.load());
  return Seconds(Clock::now() - start);
}

int64_t PeakRssBytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

int Run(const Flags& f) {
  spdlog::set_level(spdlog::level::warn);
  std::string dir = f.data_dir;
  std::unique_ptr<std::filesystem::path> temp;
  if (dir.empty()) {
    temp = std::make_unique<std::filesystem::path>(std::filesystem::temp_directory_path() /
                                                   ("scheduler-bench-" + std::to_string(getpid())));
    dir = temp->string();
  }
  // The API server as `converge server` runs it: TLS, authentication, RBAC, admission.
  server::ControlPlaneOptions cpo;
  cpo.data_dir = dir;
  cpo.listen = "127.0.0.1:0";
  cpo.fsync = f.fsync;
  cpo.watch_cache_size = 200000;
  server::ControlPlane cp(cpo);
  if (util::Status s = cp.Start(); !s.ok()) {
    fprintf(stderr, "control plane: %s\n", s.ToString().c_str());
    return 1;
  }
  // Setup writes as an administrator; the scheduler as itself (system:kube-scheduler's RBAC role),
  // in-process or over HTTPS with a client certificate.
  std::unique_ptr<client::RestClient> admin = cp.InProcessClient("bench-admin", {"system:masters"});
  std::unique_ptr<client::RestClient> rest;
  if (f.transport == "http") {
    std::string kubeconfig = dir + "/scheduler.kubeconfig";
    if (util::Status s = cp.WriteUserKubeconfig(kubeconfig, "system:kube-scheduler", {}); !s.ok()) {
      fprintf(stderr, "kubeconfig: %s\n", s.ToString().c_str());
      return 1;
    }
    auto config = client::LoadRestConfig(kubeconfig);
    if (!config.ok()) {
      fprintf(stderr, "kubeconfig: %s\n", config.status().ToString().c_str());
      return 1;
    }
    auto r = client::RestClient::ForConfig(*config);
    if (!r.ok()) return 1;
    rest = std::move(*r);
  } else {
    rest = cp.InProcessClient("system:kube-scheduler", {});
  }

  printf("setup: %d nodes, %d pods (%s transport, fsync %s)\n", f.nodes, f.pods,
         f.transport.c_str(), f.fsync ? "on" : "off");
  double node_s = CreateAll(*admin, {"", "v1", "nodes"}, "", f.nodes, f.setup_threads,
                            [&](int i) { return NodeObject(i, f); });
  double pod_s = CreateAll(*admin, {"", "v1", "pods"}, "default", f.pods, f.setup_threads,
                           [&](int i) { return PodObject(i, f); });
  printf("setup: nodes in %.1f s, pods in %.1f s (%.0f creates/s)\n", node_s, pod_s,
         f.pods / pod_s);

  util::Registry registry;
  scheduler::SchedulerOptions o;
  o.client = rest.get();
  o.metrics = &registry;
  o.leader_elect = false;
  o.bind_workers = f.bind_workers;
  scheduler::Scheduler sched(o);
  std::stop_source stop;
  Clock::time_point start = Clock::now();
  std::thread runner([&] {
    util::Status s = sched.Run(stop.get_token());
    if (!s.ok()) fprintf(stderr, "scheduler: %s\n", s.ToString().c_str());
  });

  // Sample the scheduled count every 100 ms.
  const util::Counter& scheduled = *sched.metrics().attempts_scheduled;
  std::optional<Clock::time_point> first;
  std::vector<double> per_second;
  double last_second_count = 0;
  Clock::time_point last_second = start;
  Clock::time_point deadline = start + std::chrono::minutes(30);
  while (scheduled.Value() < f.pods && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Clock::time_point now = Clock::now();
    double count = scheduled.Value();
    if (!first && count > 0) first = now;
    if (first && now - last_second >= std::chrono::seconds(1)) {
      per_second.push_back((count - last_second_count) / Seconds(now - last_second));
      last_second_count = count;
      last_second = now;
    } else if (!first) {
      last_second = now;
    }
  }
  Clock::time_point end = Clock::now();
  double total = scheduled.Value();
  stop.request_stop();
  runner.join();

  double run_s = first ? Seconds(end - *first) : 0;
  double with_startup_s = Seconds(end - start);
  double startup_s = first ? Seconds(*first - start) : with_startup_s;
  double pods_per_s = run_s > 0 ? (total - 1) / run_s : 0;
  // scheduler_perf's SchedulingThroughput: the mean of per-second samples (the last partial
  // second excluded).
  double mean = 0;
  for (double v : per_second) mean += v;
  if (!per_second.empty()) mean /= static_cast<double>(per_second.size());
  std::vector<double> sorted = per_second;
  std::sort(sorted.begin(), sorted.end());
  auto pct = [&](double p) {
    return sorted.empty()
               ? 0.0
               : sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()))];
  };

  printf("\n%-38s %12s\n", "metric", "value");
  printf("%-38s %12.0f\n", "pods scheduled", total);
  printf("%-38s %12.2f\n", "start-up to first binding (s)", startup_s);
  printf("%-38s %12.2f\n", "first to last binding (s)", run_s);
  printf("%-38s %12.0f\n", "pods/s (first to last binding)", pods_per_s);
  printf("%-38s %12.0f\n", "pods/s (mean of 1 s samples)", mean);
  printf("%-38s %12.0f\n", "pods/s (p50 of 1 s samples)", pct(0.5));
  printf("%-38s %12.0f\n", "pods/s (including start-up)", total / with_startup_s);
  printf("%-38s %12.0f\n", "peak RSS (MiB)", PeakRssBytes() / 1048576.0);

  if (!f.json_file.empty()) {
    json::object out{{"nodes", f.nodes},
                     {"pods", f.pods},
                     {"transport", f.transport},
                     {"fsync", f.fsync},
                     {"pods_scheduled", total},
                     {"startup_seconds", startup_s},
                     {"run_seconds", run_s},
                     {"pods_per_second", pods_per_s},
                     {"pods_per_second_mean_of_samples", mean},
                     {"pods_per_second_p50_of_samples", pct(0.5)},
                     {"pods_per_second_with_startup", total / with_startup_s},
                     {"peak_rss_bytes", PeakRssBytes()}};
    std::ofstream(f.json_file) << json::serialize(out) << "\n";
  }

  rest.reset();
  admin.reset();
  cp.Stop();
  if (temp) std::filesystem::remove_all(*temp);
  return total >= f.pods ? 0 : 1;
}

}  // namespace
}  // namespace converge

int main(int argc, char** argv) {
  converge::Flags f;
  CLI::App app{"Scheduler throughput (scheduler_perf-style)"};
  app.add_option("--nodes", f.nodes)->capture_default_str();
  app.add_option("--pods", f.pods)->capture_default_str();
  app.add_option("--transport", f.transport, "inprocess or http")->capture_default_str();
  app.add_flag("--fsync", f.fsync, "fsync every commit (the API server's default)");
  app.add_option("--bind-workers", f.bind_workers)->capture_default_str();
  app.add_option("--setup-threads", f.setup_threads)->capture_default_str();
  app.add_option("--node-cpu", f.node_cpu)->capture_default_str();
  app.add_option("--node-memory", f.node_memory)->capture_default_str();
  app.add_option("--pod-cpu", f.pod_cpu)->capture_default_str();
  app.add_option("--pod-memory", f.pod_memory)->capture_default_str();
  app.add_option("--data-dir", f.data_dir, "store directory (default: a temporary one)");
  app.add_option("--json", f.json_file, "write the figures as JSON");
  CLI11_PARSE(app, argc, argv);
  return converge::Run(f);
}
