// api_bench: the API server's write and read path on the embedded store and on etcd, side by
// side. A ControlPlane (TLS, authentication, RBAC, admission, watch cache: what `converge
// apiserver` runs) in this process, reached through the in-process transport (the same handler
// chain as HTTPS, without sockets), with its store either embedded (fsynced) or a single-member
// etcd 3.4 that the benchmark starts on loopback ports with a temporary data dir and stops by PID.
//
//   build/bench/api_bench [--stores embedded,etcd] [--threads 1,16,64] [--seconds 3] [--dir /tmp]
//
// Per store and concurrency: ConfigMap creates (1 KB of data each), read-modify-write updates
// (GET then PUT with the resourceVersion; a conflict counts as a failure and is retried), GETs.
// Each reports operations per second and p50/p99 latency.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>

#include "client/rest_client.h"
#include "histogram.h"
#include "server/control_plane.h"
#include "store/etcd/etcd_cluster.h"

namespace converge {
namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

struct Flags {
  std::string stores = "embedded,etcd";
  std::string threads = "1,16,64";
  int seconds = 3;
  std::string dir = std::filesystem::temp_directory_path().string();
};

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

const api::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};

json::object ConfigMap(const std::string& name) {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", json::object{{"name", name}, {"namespace", "default"}}},
                      {"data", json::object{{"payload", std::string(1024, 'x')}}}};
}

struct Result {
  uint64_t ops = 0;
  uint64_t failures = 0;
  double seconds = 0;
  bench::LatencyHistogram latency;
};

// Runs `op(thread, i)` on `threads` threads for `seconds`; each call is one timed operation.
Result RunFor(int threads, int seconds, const std::function<bool(int, int)>& op) {
  std::vector<Result> per(threads);
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  const Clock::time_point start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        const Clock::time_point a = Clock::now();
        const bool ok = op(t, i);
        per[t].latency.Record(
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - a).count());
        ok ? ++per[t].ops : ++per[t].failures;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& t : ts) t.join();
  Result total;
  total.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const auto& r : per) {
    total.ops += r.ops;
    total.failures += r.failures;
    total.latency.Merge(r.latency);
  }
  return total;
}

void Print(const std::string& store, const char* op, int threads, const Result& r) {
  std::printf(
      "%-9s %-7s %3d threads  %9.0f ops/s  p50 %7.2f ms  p99 %7.2f ms  (%llu ok, %llu failed)\n",
      store.c_str(), op, threads, static_cast<double>(r.ops) / r.seconds,
      static_cast<double>(r.latency.Quantile(0.5)) / 1e6,
      static_cast<double>(r.latency.Quantile(0.99)) / 1e6, static_cast<unsigned long long>(r.ops),
      static_cast<unsigned long long>(r.failures));
  std::fflush(stdout);
}

int RunStore(const Flags& f, const std::string& store) {
  const std::string dir = f.dir + "/api-bench-" + std::to_string(getpid()) + "-" + store;
  std::unique_ptr<store::etcd::EtcdCluster> etcd;
  server::ControlPlaneOptions cpo;
  cpo.data_dir = dir;
  cpo.listen = "127.0.0.1:0";
  cpo.store = store;
  if (store == "etcd") {
    etcd = std::make_unique<store::etcd::EtcdCluster>(
        store::etcd::EtcdClusterOptions{.dir = dir + "/etcd", .members = 1});
    if (auto s = etcd->Start(); !s.ok()) {
      std::fprintf(stderr, "etcd: %s\n", s.ToString().c_str());
      return 1;
    }
    cpo.etcd_endpoints = etcd->endpoints();
  }
  {
    server::ControlPlane cp(cpo);
    if (auto s = cp.Start(); !s.ok()) {
      std::fprintf(stderr, "control plane: %s\n", s.ToString().c_str());
      return 1;
    }
    auto admin = cp.InProcessClient("bench-admin", {"system:masters"});
    for (const std::string& t : Split(f.threads)) {
      const int threads = std::stoi(t);
      const std::string prefix = "t" + t + "-";
      Result created = RunFor(threads, f.seconds, [&](int th, int i) {
        auto name = prefix + std::to_string(th) + "-" + std::to_string(i);
        return admin->Create(kConfigMaps, "default", api::Object(ConfigMap(name))).ok();
      });
      Print(store, "create", threads, created);
      // Updates and gets go to the objects thread 0..threads-1 created first.
      Result updated = RunFor(threads, f.seconds, [&](int th, int i) {
        api::ObjectKey key{"default", prefix + std::to_string(th) + "-0"};
        auto cur = admin->Get(kConfigMaps, key);
        if (!cur.ok()) return false;
        api::Object obj = std::move(*cur);
        obj.mutable_doc()["data"].as_object()["n"] = std::to_string(i);
        return admin->Update(kConfigMaps, obj).ok();
      });
      Print(store, "update", threads, updated);
      Result got = RunFor(threads, f.seconds, [&](int th, int) {
        return admin->Get(kConfigMaps, {"default", prefix + std::to_string(th) + "-0"}).ok();
      });
      Print(store, "get", threads, got);
    }
    cp.Stop();
  }
  etcd.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}

}  // namespace
}  // namespace converge

int main(int argc, char** argv) {
  converge::Flags f;
  CLI::App app{"API server benchmark: embedded store and etcd"};
  app.add_option("--stores", f.stores, "embedded,etcd")->capture_default_str();
  app.add_option("--threads", f.threads, "Concurrent clients, comma-separated")
      ->capture_default_str();
  app.add_option("--seconds", f.seconds, "Seconds per run")->capture_default_str();
  app.add_option("--dir", f.dir, "Where the stores live")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);
  for (const std::string& s : converge::Split(f.stores)) {
    if (int rc = converge::RunStore(f, s); rc != 0) return rc;
  }
  return 0;
}
