// kubelet_heartbeat_bench: what heartbeats of N simulated nodes cost, and how fast their pods
// start.
//
//   build/bench/kubelet/kubelet_heartbeat_bench --nodes 5000 --seconds 60 [--pods P] [--json FILE]
//
// Starts `converge apiserver` and `converge kubelet --nodes N` as processes, waits until every
// node is registered and Ready, lets a settle period pass, then measures over the window: the
// CPU time of each process (utime + stime from /proc/<pid>/stat), their RSS, and the lease
// renewals that happened (from the kubelet's stats line). Heartbeats are the only load: no pods.
//
// With --pods P, it then creates P pods already bound to the nodes (round-robin, 8 client
// threads, so no scheduler is involved) and reports pods started per second: P divided by the
// time from the first create until every pod is Running and Ready (polled from the API), and the
// kubelet's RSS once they run.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api/object.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "testing/process.h"
#include "testing/server.h"

namespace {

using namespace std::chrono_literals;
using converge::testing::Process;
using converge::testing::ReadFile;
using converge::testing::ServerOptions;
using converge::testing::ServerProcess;

struct CpuSample {
  double seconds = 0;  // utime + stime
  long rss_kb = 0;
};

CpuSample Sample(pid_t pid) {
  CpuSample s;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  // Fields after the command (which may contain spaces) start after the last ')'.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) {
      stime = std::stol(field);
      break;
    }
  }
  s.seconds = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_kb = std::stol(line.substr(6));
  }
  return s;
}

// The last "lease_renewals=N" the kubelet logged.
long LeaseRenewals(const std::string& log) {
  std::regex re("lease_renewals=(\\d+)");
  long last = -1;
  for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it) {
    last = std::stol((*it)[1]);
  }
  return last;
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 5000;
  int seconds = 60;
  int settle = 20;
  int pods = 0;
  std::string json_path;
  bool fsync = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--nodes")
      nodes = std::stoi(next());
    else if (a == "--seconds")
      seconds = std::stoi(next());
    else if (a == "--pods")
      pods = std::stoi(next());
    else if (a == "--settle")
      settle = std::stoi(next());
    else if (a == "--json")
      json_path = next();
    else if (a == "--no-fsync")
      fsync = false;
    else {
      std::cerr
          << "usage: " << argv[0]
          << " [--nodes N] [--seconds S] [--settle S] [--pods P] [--no-fsync] [--json FILE]\n";
      return 2;
    }
  }
  ServerProcess server;
  ServerOptions so;
  if (!fsync) so.extra_args = {"--no-fsync"};
  if (!server.Start(so)) return 1;
  auto config = converge::client::LoadRestConfig(server.kubeconfig_path());
  auto client = converge::client::RestClient::ForConfig(*config);
  if (!client.ok()) return 1;

  Process kubelet;
  const std::string kubelet_log = server.data_dir() + "/kubelet.log";
  auto started = std::chrono::steady_clock::now();
  kubelet.Start({CONVERGE_BINARY, "kubelet", "--kubeconfig", server.kubeconfig_path(), "--nodes",
                 std::to_string(nodes), "--node-prefix", "bench", "--no-node-events",
                 "--stats-interval", "5"},
                kubelet_log);
  std::cerr << "waiting for " << nodes << " nodes to register...\n";
  double registered_after = 0;
  while (true) {
    converge::client::ListOptions lo;
    lo.resource_version = "0";
    auto list = (*client)->List({"coordination.k8s.io", "v1", "leases"}, "kube-node-lease", lo);
    if (list.ok() && static_cast<int>(list->items.size()) >= nodes) {
      registered_after =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      break;
    }
    if (!kubelet.Running()) {
      std::cerr << "kubelet exited:\n" << ReadFile(kubelet_log);
      return 1;
    }
    std::this_thread::sleep_for(500ms);
  }
  std::cerr << "registered in " << registered_after << " s; settling " << settle << " s\n";
  std::this_thread::sleep_for(std::chrono::seconds(settle));
  CpuSample k0 = Sample(kubelet.pid()), a0 = Sample(server.pid());
  long r0 = LeaseRenewals(ReadFile(kubelet_log));
  auto t0 = std::chrono::steady_clock::now();
  std::cerr << "measuring for " << seconds << " s\n";
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  CpuSample k1 = Sample(kubelet.pid()), a1 = Sample(server.pid());
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::this_thread::sleep_for(6s);  // one more stats line covering the window's end
  long r1 = LeaseRenewals(ReadFile(kubelet_log));

  // Pods, bound by the bench itself.
  double create_seconds = 0, start_seconds = 0;
  long pods_rss_kb = 0;
  int created_ok = 0;
  if (pods > 0) {
    namespace json = boost::json;
    const converge::api::GroupVersionResource kPods{"", "v1", "pods"};
    std::atomic<int> next_pod{0}, ok{0};
    auto p0 = std::chrono::steady_clock::now();
    std::vector<std::thread> creators;
    for (int t = 0; t < 8; ++t) {
      creators.emplace_back([&] {
        auto c = converge::client::RestClient::ForConfig(*config);
        if (!c.ok()) return;
        for (int i = next_pod++; i < pods; i = next_pod++) {
          json::object pod{
              {"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", json::object{{"name", "p-" + std::to_string(i)}}},
              {"spec", json::object{{"nodeName", "bench-" + std::to_string(i % nodes)},
                                    {"containers", json::array{json::object{
                                                       {"name", "c"}, {"image", "pause:3.9"}}}}}}};
          if ((*c)->Create(kPods, "default", converge::api::Object(std::move(pod))).ok()) ++ok;
        }
      });
    }
    for (auto& t : creators) t.join();
    created_ok = ok.load();
    create_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
    std::cerr << "created " << created_ok << " pods in " << create_seconds << " s\n";
    auto running = [&] {
      converge::client::ListOptions lo;
      lo.resource_version = "0";
      auto list = (*client)->List(kPods, "default", lo);
      int n = 0;
      if (!list.ok()) return -1;
      for (const converge::api::Object& p : list->items) {
        if (converge::api::FindString(p.doc(), {"status", "phase"}) != "Running") continue;
        if (const json::array* conds =
                converge::api::FindArray(p.doc(), {"status", "conditions"})) {
          for (const json::value& c : *conds) {
            if (converge::api::Object::GetString(c.as_object(), "type") == "Ready" &&
                converge::api::Object::GetString(c.as_object(), "status") == "True") {
              ++n;
            }
          }
        }
      }
      return n;
    };
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
    while (running() < created_ok && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(200ms);
    }
    start_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
    pods_rss_kb = Sample(kubelet.pid()).rss_kb;
  }
  kubelet.Stop();

  double kubelet_cores = (k1.seconds - k0.seconds) / wall;
  double apiserver_cores = (a1.seconds - a0.seconds) / wall;
  double renewals_per_second = r0 >= 0 && r1 >= 0 ? static_cast<double>(r1 - r0) / (wall + 6) : 0;
  double kubelet_us_per_renewal =
      renewals_per_second > 0 ? kubelet_cores * 1e6 / renewals_per_second : 0;
  double apiserver_us_per_renewal =
      renewals_per_second > 0 ? apiserver_cores * 1e6 / renewals_per_second : 0;

  std::printf("nodes                       %d\n", nodes);
  std::printf("registration (s)            %.1f\n", registered_after);
  std::printf("window (s)                  %.1f\n", wall);
  std::printf("lease renewals/s            %.1f\n", renewals_per_second);
  std::printf("kubelet CPU (cores)         %.3f\n", kubelet_cores);
  std::printf("apiserver CPU (cores)       %.3f\n", apiserver_cores);
  std::printf("kubelet CPU per renewal     %.1f us\n", kubelet_us_per_renewal);
  std::printf("apiserver CPU per renewal   %.1f us\n", apiserver_us_per_renewal);
  std::printf("kubelet RSS (MiB)           %.1f\n", k1.rss_kb / 1024.0);
  std::printf("apiserver RSS (MiB)         %.1f\n", a1.rss_kb / 1024.0);
  std::printf("kubelet RSS per node (KiB)  %.1f\n", static_cast<double>(k1.rss_kb) / nodes);
  if (pods > 0) {
    std::printf("pods created                %d in %.1f s (%.0f/s)\n", created_ok, create_seconds,
                created_ok / create_seconds);
    std::printf("pods Running and Ready      after %.1f s: %.0f pods/s started\n", start_seconds,
                created_ok / start_seconds);
    std::printf("kubelet RSS with pods (MiB) %.1f (%.1f KiB per pod)\n", pods_rss_kb / 1024.0,
                static_cast<double>(pods_rss_kb - k1.rss_kb) / std::max(1, created_ok));
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\"nodes\":" << nodes << ",\"registration_seconds\":" << registered_after
        << ",\"window_seconds\":" << wall
        << ",\"lease_renewals_per_second\":" << renewals_per_second
        << ",\"kubelet_cpu_cores\":" << kubelet_cores
        << ",\"apiserver_cpu_cores\":" << apiserver_cores
        << ",\"kubelet_cpu_us_per_renewal\":" << kubelet_us_per_renewal
        << ",\"apiserver_cpu_us_per_renewal\":" << apiserver_us_per_renewal
        << ",\"kubelet_rss_bytes\":" << k1.rss_kb * 1024
        << ",\"apiserver_rss_bytes\":" << a1.rss_kb * 1024 << ",\"pods\":" << created_ok
        << ",\"pods_create_seconds\":" << create_seconds
        << ",\"pods_running_seconds\":" << start_seconds
        << ",\"kubelet_rss_bytes_with_pods\":" << pods_rss_kb * 1024 << "}\n";
  }
  return 0;
}
