// store_bench: the embedded store's figures for docs/PERFORMANCE.md.
//
//   store_bench [--only=put|watch|compact|reopen] [--dir=DIR] [--seconds=S] [--etcd=PATH]
//               [--etcd-channels=N] [--watchers=N] [--watch-writes=N] [--compact-revisions=N]
//               [--reopen-objects=N] [--reopen-log-objects=N] [--repeat=N]
//               [--short-slice-clients=0|1]
//               [--writers=N[,N...]] [--reserve-bytes=N] [--modes=log,direct]
//               [--mode=log|direct]
//
//   put      durable puts of 3 KB values with 1, 16 and 64 writers, the embedded store and etcd
//            (started here on loopback with a temporary data dir, stopped by PID) side by side
//   watch    1,000 watchers on one prefix while 100k puts are written: delivered events/s and
//            write-to-delivery latency
//   compact  the longest write stall while compacting 1M revisions (16 writers keep writing)
//   reopen   time to open a store of 150k objects of 3 KB (warm and cold page cache)
//   profile  --profile-puts=N puts by 16 writers with fsync off, nothing else (for callgrind)
//
// The machine is shared: each section prints the CPU and IO pressure (/proc/pressure) and the
// raw fdatasync latency of the disk at the time it ran, so that figures can be read in context.
//
// Every store lives under --dir (default /tmp), on the disk being measured.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "etcd_server.h"
#include "histogram.h"
#include "store/embedded_store.h"
#include "store/thread_latency.h"

namespace converge::bench {
namespace {

using store::EmbeddedStore;
using store::EmbeddedStoreOptions;
using Clock = std::chrono::steady_clock;

struct Flags {
  std::string only;
  std::string dir = "/tmp";
  double seconds = 5;
  std::string etcd = "/usr/bin/etcd";
  int etcd_channels = 1;
  int watchers = 1000;
  int watch_writes = 100000;
  int compact_revisions = 1000000;
  int reopen_objects = 150000;
  int reopen_log_objects = 20000;  // reopen: objects left only in the log by a "crash"
  int profile_puts = 0;
  int repeat = 1;  // put runs per configuration and store; the best run is reported
  std::vector<int> writers = {1, 16, 64};  // put: writer counts to run
  long long reserve_bytes = -1;            // put: EmbeddedStoreOptions::reserve_bytes (-1: default)
  // put: the embedded store's writer shapes to run: "log" (write-ahead log) and/or "direct"
  // (LMDB commits); empty: the store's default only.
  std::vector<std::string> modes;
  // Client threads (for both stores alike) ask for a short scheduler slice, as the store's own
  // threads do: on a CPU-saturated machine a blocked client otherwise wakes a tick late.
  bool short_slice_clients = true;
  bool watch_fsync = true;  // --watch-fsync=0 for profiling the fan-out alone
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

double Ms(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>('!' + rng() % 90);
  return s;
}

std::string TempStoreDir(const Flags& flags, const std::string& name) {
  std::string dir = flags.dir + "/converge-bench-" + name + "-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

// --mode: the writer shape of the stores of every section but put's (which has --modes).
std::string g_mode;

std::unique_ptr<EmbeddedStore> OpenStore(const std::string& dir, bool fsync,
                                         size_t watcher_buffer = 10000,
                                         size_t map_size = size_t{64} << 30,
                                         long long reserve_bytes = -1,
                                         const std::string& mode = "") {
  EmbeddedStoreOptions options;
  options.dir = dir;
  const std::string& m = mode.empty() ? g_mode : mode;
  if (m == "log") options.write_ahead_log = true;
  if (m == "direct") options.write_ahead_log = false;
  if (reserve_bytes >= 0) options.reserve_bytes = static_cast<size_t>(reserve_bytes);
  options.map_size = map_size;
  options.fsync = fsync;
  options.watcher_buffer = watcher_buffer;
  auto s = EmbeddedStore::Open(options);
  if (!s.ok()) {
    std::fprintf(stderr, "open %s: %s\n", dir.c_str(), s.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(s).value();
}

// Fills a store quickly (fsync off) with `total` puts spread over `keys` keys.
void Fill(EmbeddedStore& s, int total, int keys, size_t value_size, const std::string& prefix) {
  constexpr int kWriters = 64;
  std::vector<std::thread> threads;
  std::atomic<int> next{0};
  const std::string value = RandomBytes(value_size, 7);
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&] {
      for (int i = next++; i < total; i = next++) {
        auto r = s.Put(store::PutRequest{.key = prefix + std::to_string(i % keys), .value = value});
        if (!r.ok()) {
          std::fprintf(stderr, "fill: %s\n", r.status().ToString().c_str());
          std::exit(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
}

struct RunResult {
  uint64_t ops = 0;
  double seconds = 0;
  LatencyHistogram latency;
  double throughput() const { return static_cast<double>(ops) / seconds; }
};

// `writers` threads call put(writer, i) back to back for `seconds`.
bool g_short_slice_clients = true;

RunResult RunWriters(int writers, double seconds,
                     const std::function<util::Status(int, uint64_t)>& put) {
  std::vector<LatencyHistogram> hist(writers);
  std::vector<uint64_t> ops(writers, 0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      if (g_short_slice_clients) store::RequestShortSchedulerSlice();
      for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        const int64_t t0 = NowNs();
        util::Status st = put(w, i);
        if (!st.ok()) {
          std::fprintf(stderr, "put: %s\n", st.ToString().c_str());
          std::exit(1);
        }
        hist[w].Record(NowNs() - t0);
        ++ops[w];
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  RunResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (int w = 0; w < writers; ++w) {
    r.ops += ops[w];
    r.latency.Merge(hist[w]);
  }
  return r;
}

// "some avg10" of /proc/pressure/<what>: the share of the last 10 s in which runnable work
// waited for the resource.
std::string Pressure(const char* what) {
  FILE* f = std::fopen((std::string("/proc/pressure/") + what).c_str(), "r");
  if (f == nullptr) return "n/a";
  char line[256] = {};
  std::string out = "n/a";
  if (std::fgets(line, sizeof(line), f) != nullptr) {
    const char* p = std::strstr(line, "avg10=");
    if (p != nullptr) out = std::string(p + 6, std::strcspn(p + 6, " ")) + "%";
  }
  std::fclose(f);
  return out;
}

// Median latency of 100 fdatasyncs of an 8 KB overwrite in `dir`.
double FdatasyncMs(const std::string& dir) {
  const std::string path = dir + "/converge-bench-fsync-probe";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  std::string buf(8192, 'x');
  std::vector<int64_t> lat;
  for (int i = 0; i < 100; ++i) {
    if (::pwrite(fd, buf.data(), buf.size(), (i % 8) * 8192) < 0) break;
    const int64_t t0 = NowNs();
    ::fdatasync(fd);
    lat.push_back(NowNs() - t0);
  }
  ::close(fd);
  ::unlink(path.c_str());
  std::sort(lat.begin(), lat.end());
  return lat.empty() ? 0 : Ms(lat[lat.size() / 2]);
}

void PrintConditions(const Flags& flags) {
  std::printf("\n(conditions: cpu pressure %s, io pressure %s, fdatasync p50 %.2f ms)\n",
              Pressure("cpu").c_str(), Pressure("io").c_str(), FdatasyncMs(flags.dir));
}

// `inflight` chains, each starting its next request from the previous one's completion, for
// `seconds`: concurrency without a blocked thread per request (the API server's coroutines
// call TxnAsync this way). `start` must call its callback exactly once, on any thread.
RunResult RunInFlight(
    int inflight, double seconds,
    const std::function<void(int, uint64_t, std::function<void(util::Status)>)>& start) {
  std::mutex mu;
  std::condition_variable cv;
  RunResult r;
  int live = inflight;
  std::atomic<bool> stop{false};
  std::function<void(int, uint64_t)> issue = [&](int chain, uint64_t i) {
    const int64_t t0 = NowNs();
    start(chain, i, [&, chain, i, t0](util::Status st) {
      if (!st.ok()) {
        std::fprintf(stderr, "put: %s\n", st.ToString().c_str());
        std::exit(1);
      }
      {
        std::lock_guard lock(mu);
        r.latency.Record(NowNs() - t0);
        ++r.ops;
      }
      if (!stop.load()) {
        issue(chain, i + 1);
        return;
      }
      std::lock_guard lock(mu);
      if (--live == 0) cv.notify_all();
    });
  };
  const auto begin = Clock::now();
  for (int c = 0; c < inflight; ++c) issue(c, 0);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return live == 0; });
  r.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  return r;
}

void PrintRun(const char* what, int writers, const RunResult& r) {
  std::printf("| %-26s | %3d | %9.0f | %7.2f | %7.2f | %7.2f |\n", what, writers, r.throughput(),
              Ms(r.latency.Quantile(0.5)), Ms(r.latency.Quantile(0.99)), Ms(r.latency.max()));
}

// The writer's counters, one line for stderr.
std::string WriterStatsLine(const EmbeddedStore::WriterStats& ws) {
  auto avg = [](uint64_t ns, uint64_t n) { return n ? Ms(static_cast<int64_t>(ns)) / n : 0.0; };
  char line[1024];
  int n;
  if (ws.log_bytes > 0) {
    n = std::snprintf(
        line, sizeof(line),
        "%llu groups (%.1f txns each, %llu inline, %llu handed to the syncer), log writes "
        "%.3f ms avg, %llu log fdatasyncs (%.1f groups each) %.3f ms avg, short slice %s",
        static_cast<unsigned long long>(ws.groups),
        ws.groups ? static_cast<double>(ws.txns) / ws.groups : 0.0,
        static_cast<unsigned long long>(ws.inline_groups),
        static_cast<unsigned long long>(ws.handed_over), avg(ws.commit_ns, ws.groups),
        static_cast<unsigned long long>(ws.syncs),
        ws.syncs ? static_cast<double>(ws.groups) / ws.syncs : 0.0, avg(ws.sync_ns, ws.syncs),
        ws.short_slice ? "yes" : "no");
  } else {
    n = std::snprintf(
        line, sizeof(line),
        "%llu groups (%.1f txns each), commit %.3f ms avg, %llu explicit syncs %.3f ms avg, %llu "
        "space reserves %.3f ms avg, short slice %s",
        static_cast<unsigned long long>(ws.groups),
        ws.groups ? static_cast<double>(ws.txns) / ws.groups : 0.0, avg(ws.commit_ns, ws.groups),
        static_cast<unsigned long long>(ws.syncs), avg(ws.sync_ns, ws.syncs),
        static_cast<unsigned long long>(ws.reserves), avg(ws.reserve_ns, ws.reserves),
        ws.short_slice ? "yes" : "no");
  }
  if (ws.log_bytes > 0 && n > 0 && static_cast<size_t>(n) < sizeof(line)) {
    std::snprintf(
        line + n, sizeof(line) - n,
        "; log %.1f MB, %llu switches (%llu unprepared), segments %llu created %llu "
        "recycled %llu deleted %llu now; applier %llu commits (%.1f groups each) "
        "%.3f ms avg, %llu syncs %.3f ms avg, %llu reserves",
        static_cast<double>(ws.log_bytes) / 1e6, static_cast<unsigned long long>(ws.log_switches),
        static_cast<unsigned long long>(ws.log_unprepared),
        static_cast<unsigned long long>(ws.log_created),
        static_cast<unsigned long long>(ws.log_recycled),
        static_cast<unsigned long long>(ws.log_deleted),
        static_cast<unsigned long long>(ws.log_segment_files),
        static_cast<unsigned long long>(ws.apply_commits),
        ws.apply_commits ? static_cast<double>(ws.apply_groups) / ws.apply_commits : 0.0,
        avg(ws.apply_commit_ns, ws.apply_commits), static_cast<unsigned long long>(ws.apply_syncs),
        avg(ws.apply_sync_ns, ws.apply_syncs), static_cast<unsigned long long>(ws.apply_reserves));
  }
  return line;
}

void BenchPut(const Flags& flags) {
  std::printf("\n## Durable put, 3 KB values, %.0f s per run, best of %d\n\n", flags.seconds,
              flags.repeat);
  std::printf("| store, client | writers | puts/s | p50 ms | p99 ms | max ms |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  const std::string value = RandomBytes(3072, 1);
  auto key = [](int w, uint64_t i) {
    return "/bench/" + std::to_string(w) + "/" + std::to_string(i);
  };
  // One run of one variant on a fresh store (or a fresh etcd).
  auto embedded_run = [&](int writers, bool in_flight, const std::string& mode) {
    const std::string dir = TempStoreDir(flags, "put");
    auto s = OpenStore(dir, /*fsync=*/true, 10000, size_t{64} << 30, flags.reserve_bytes, mode);
    RunResult r;
    if (in_flight) {
      r = RunInFlight(writers, flags.seconds,
                      [&](int w, uint64_t i, std::function<void(util::Status)> done) {
                        store::TxnRequest txn;
                        txn.success.push_back(store::PutRequest{.key = key(w, i), .value = value});
                        s->TxnAsync(std::move(txn),
                                    [done = std::move(done)](util::StatusOr<store::TxnResponse> t) {
                                      done(t.status());
                                    });
                      });
    } else {
      r = RunWriters(writers, flags.seconds, [&](int w, uint64_t i) {
        return s->Put(store::PutRequest{.key = key(w, i), .value = value}).status();
      });
    }
    std::fprintf(stderr, "  [embedded %s %d %s: %s]\n", mode.c_str(), writers,
                 in_flight ? "in flight" : "threads", WriterStatsLine(s->writer_stats()).c_str());
    s.reset();
    std::filesystem::remove_all(dir);
    return r;
  };
  auto etcd_run = [&](int writers, bool in_flight) {
    EtcdServer etcd(EtcdServer::Options{.binary = flags.etcd,
                                        .data_dir = TempStoreDir(flags, "etcd"),
                                        .channels = flags.etcd_channels});
    util::Status st = etcd.Start();
    if (!st.ok()) {
      std::fprintf(stderr, "etcd: %s\n", st.ToString().c_str());
      std::exit(1);
    }
    RunResult r;
    if (in_flight) {
      r = RunInFlight(writers, flags.seconds,
                      [&](int w, uint64_t i, std::function<void(util::Status)> done) {
                        etcd.PutAsync(w, key(w, i), value, std::move(done));
                      });
    } else {
      r = RunWriters(writers, flags.seconds,
                     [&](int w, uint64_t i) { return etcd.Put(w, key(w, i), value); });
    }
    etcd.Stop();
    return r;
  };
  struct Variant {
    std::string name;
    bool etcd;
    bool in_flight;
    std::string mode;  // embedded: "log", "direct" or "" (the store's default)
  };
  std::vector<Variant> variants;
  const std::vector<std::string> modes =
      flags.modes.empty() ? std::vector<std::string>{""} : flags.modes;
  for (const std::string& mode : modes) {
    const std::string name = mode.empty() ? "embedded" : "embedded " + mode;
    variants.push_back({name + ", threads", false, false, mode});
    variants.push_back({name + ", TxnAsync in flight", false, true, mode});
  }
  variants.push_back({"etcd 3.4, threads", true, false, ""});
  variants.push_back({"etcd 3.4, async gRPC in flight", true, true, ""});
  std::map<int, std::map<std::string, RunResult>> best;
  for (int writers : flags.writers) {
    // Variants alternate within each repetition so that all see the same machine; the best of
    // --repeat runs is kept (other load on a shared machine only ever slows a run down).
    for (int rep = 0; rep < flags.repeat; ++rep) {
      for (const Variant& v : variants) {
        if (v.etcd && flags.etcd.empty()) continue;
        RunResult r =
            v.etcd ? etcd_run(writers, v.in_flight) : embedded_run(writers, v.in_flight, v.mode);
        RunResult& b = best[writers][v.name];
        if (rep == 0 || r.throughput() > b.throughput()) b = std::move(r);
      }
    }
    for (const Variant& v : variants) {
      auto it = best[writers].find(v.name);
      if (it != best[writers].end()) PrintRun(v.name.c_str(), writers, it->second);
    }
    std::fflush(stdout);
  }
  if (!flags.etcd.empty()) {
    for (const std::string& mode : modes) {
      const std::string name = mode.empty() ? "embedded" : "embedded " + mode;
      std::printf("\n| writers | %s / etcd, threads | %s / etcd, in flight |\n", name.c_str(),
                  name.c_str());
      std::printf("|---:|---:|---:|\n");
      for (auto& [w, m] : best) {
        std::printf("| %d | %.1fx | %.1fx |\n", w,
                    m[name + ", threads"].throughput() / m["etcd 3.4, threads"].throughput(),
                    m[name + ", TxnAsync in flight"].throughput() /
                        m["etcd 3.4, async gRPC in flight"].throughput());
      }
    }
  }
  PrintConditions(flags);
}

void BenchProfile(const Flags& flags) {
  const std::string dir = TempStoreDir(flags, "profile");
  // A small map: valgrind cannot reserve the default 64 GiB.
  auto s = OpenStore(dir, /*fsync=*/false, 10000, size_t{4} << 30);
  const int64_t t0 = NowNs();
  Fill(*s, flags.profile_puts, flags.profile_puts, 3072, "/profile/");
  std::printf("%d puts in %.0f ms\n", flags.profile_puts, Ms(NowNs() - t0));
  s.reset();
  std::filesystem::remove_all(dir);
}

void BenchWatch(const Flags& flags) {
  constexpr int kWriters = 16;
  const std::string dir = TempStoreDir(flags, "watch");
  // One shared group log: a large buffer costs one copy of the events, not one per watcher.
  auto s = OpenStore(dir, /*fsync=*/flags.watch_fsync, /*watcher_buffer=*/1 << 20,
                     /*map_size=*/size_t{4} << 30);
  std::vector<std::unique_ptr<store::WatchStream>> streams;
  for (int i = 0; i < flags.watchers; ++i) {
    auto w = s->Watch(store::WatchRequest{.key = "/fan/", .range_end = store::PrefixEnd("/fan/")});
    if (!w.ok()) std::exit(1);
    (*w)->RequestProgress();
    if (!(*w)->Next(std::stop_token()).ok()) std::exit(1);  // live
    streams.push_back(std::move(w).value());
  }
  const store::Revision first = s->CurrentRevision() + 1;
  const store::Revision last = first + flags.watch_writes - 1;
  std::vector<LatencyHistogram> hist(flags.watchers);
  std::vector<uint64_t> delivered(flags.watchers, 0);
  std::atomic<int> canceled{0};
  std::vector<std::thread> watchers;
  for (int i = 0; i < flags.watchers; ++i) {
    watchers.emplace_back([&, i] {
      while (true) {
        auto r = streams[i]->Next(std::stop_token());
        if (!r.ok() || r->canceled) {
          ++canceled;
          return;
        }
        const int64_t now = NowNs();
        for (const auto& e : r->events) {
          int64_t sent = 0;
          std::memcpy(&sent, e.kv->value.data(), sizeof(sent));
          hist[i].Record(now - sent);
        }
        delivered[i] += r->events.size();
        if (!r->events.empty() && r->events.back().kv->mod_revision >= last) return;
      }
    });
  }
  const auto start = Clock::now();
  std::atomic<int> next{0};
  std::vector<std::thread> writers;
  std::string filler = RandomBytes(3072, 3);
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&] {
      std::string value = filler;
      for (int i = next++; i < flags.watch_writes; i = next++) {
        const int64_t now = NowNs();
        std::memcpy(value.data(), &now, sizeof(now));
        if (!s->Put(store::PutRequest{.key = "/fan/" + std::to_string(i % 1000), .value = value})
                 .ok()) {
          std::exit(1);
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  const double write_s = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& t : watchers) t.join();
  const double total_s = std::chrono::duration<double>(Clock::now() - start).count();
  LatencyHistogram all;
  uint64_t events = 0;
  for (int i = 0; i < flags.watchers; ++i) {
    all.Merge(hist[i]);
    events += delivered[i];
  }
  std::printf("\n## Watch fan-out: %d watchers on one prefix, %d puts of 3 KB by %d writers\n\n",
              flags.watchers, flags.watch_writes, kWriters);
  std::printf(
      "| writes/s | events delivered | delivered events/s | p50 ms | p99 ms | max ms | canceled "
      "|\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| %.0f | %llu | %.0f | %.2f | %.2f | %.2f | %d |\n", flags.watch_writes / write_s,
              static_cast<unsigned long long>(events), static_cast<double>(events) / total_s,
              Ms(all.Quantile(0.5)), Ms(all.Quantile(0.99)), Ms(all.max()), canceled.load());
  std::printf(
      "\n(latency: from just before Put() to the watcher holding the event; the writes "
      "took %.2f s, the last delivery came %.2f s after the first write)\n",
      write_s, total_s);
  PrintConditions(flags);
  streams.clear();
  s.reset();
  std::filesystem::remove_all(dir);
}

void BenchCompact(const Flags& flags) {
  constexpr int kWriters = 16;
  const std::string dir = TempStoreDir(flags, "compact");
  const auto fill_start = Clock::now();
  {
    auto s = OpenStore(dir, /*fsync=*/false);
    Fill(*s, flags.compact_revisions, 10000, 200, "/c/");
  }
  const double fill_s = std::chrono::duration<double>(Clock::now() - fill_start).count();
  auto s = OpenStore(dir, /*fsync=*/true);
  const store::Revision target = s->CurrentRevision();
  // Writers keep writing; each write's start time and latency are kept to find the stall.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> samples(kWriters);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  const std::string value = RandomBytes(200, 4);
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; !stop; ++i) {
        const int64_t t0 = NowNs();
        if (!s->Put(store::PutRequest{
                        .key = "/w/" + std::to_string(w) + "/" + std::to_string(i % 100),
                        .value = value})
                 .ok()) {
          std::exit(1);
        }
        samples[w].emplace_back(t0, NowNs() - t0);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const int64_t c0 = NowNs();
  if (!s->Compact(target).ok()) std::exit(1);
  s->WaitForCompaction();
  const int64_t c1 = NowNs();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  stop = true;
  for (auto& t : writers) t.join();
  LatencyHistogram before, during;
  for (const auto& v : samples) {
    for (const auto& [t0, lat] : v) {
      if (t0 + lat < c0) before.Record(lat);
      if (t0 + lat >= c0 && t0 <= c1) during.Record(lat);
    }
  }
  std::printf("\n## Compaction of %d revisions (10k keys, 200 B values) under %d writers\n\n",
              flags.compact_revisions, kWriters);
  std::printf(
      "| phase | writes | p50 ms | p99 ms | longest write ms |\n|---|---:|---:|---:|---:|\n");
  std::printf("| before | %llu | %.2f | %.2f | %.2f |\n",
              static_cast<unsigned long long>(before.count()), Ms(before.Quantile(0.5)),
              Ms(before.Quantile(0.99)), Ms(before.max()));
  std::printf("| during | %llu | %.2f | %.2f | %.2f |\n",
              static_cast<unsigned long long>(during.count()), Ms(during.Quantile(0.5)),
              Ms(during.Quantile(0.99)), Ms(during.max()));
  std::printf("\ncompaction took %.2f s (history filled in %.1f s with fsync off)\n",
              Ms(c1 - c0) / 1000, fill_s);
  PrintConditions(flags);
  s.reset();
  std::filesystem::remove_all(dir);
}

void BenchReopen(const Flags& flags) {
  const std::string dir = TempStoreDir(flags, "reopen");
  {
    auto s = OpenStore(dir, /*fsync=*/false);
    Fill(*s, flags.reopen_objects, flags.reopen_objects, 3072, "/registry/pods/default/pod-");
  }
  const auto size = std::filesystem::file_size(dir + "/data.mdb");
  auto time_open = [&](bool verify, bool cold) {
    if (cold) {
      int fd = ::open((dir + "/data.mdb").c_str(), O_RDONLY);
      ::fdatasync(fd);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::close(fd);
    }
    EmbeddedStoreOptions options;
    options.dir = dir;
    if (g_mode == "log") options.write_ahead_log = true;
    if (g_mode == "direct") options.write_ahead_log = false;
    options.verify_checksums_on_open = verify;
    const int64_t t0 = NowNs();
    auto s = EmbeddedStore::Open(options);
    const int64_t t1 = NowNs();
    if (!s.ok()) std::exit(1);
    return Ms(t1 - t0);
  };
  time_open(true, false);  // warm the page cache
  std::vector<double> warm;
  for (int i = 0; i < 3; ++i) warm.push_back(time_open(true, false));
  std::sort(warm.begin(), warm.end());
  const double no_verify = time_open(false, false);
  const double cold = time_open(true, true);
  std::printf("\n## Reopen: %d objects of 3 KB (data.mdb %.0f MB)\n\n", flags.reopen_objects,
              static_cast<double>(size) / 1e6);
  std::printf("| open | ms |\n|---|---:|\n");
  std::printf("| warm page cache, checksums verified (median of 3) | %.0f |\n", warm[1]);
  std::printf("| warm page cache, checksums not verified | %.0f |\n", no_verify);
  std::printf("| cold page cache (fadvise DONTNEED), checksums verified | %.0f |\n", cold);
  std::filesystem::remove_all(dir);

  // A crash that left the log's whole tail unapplied (the writer stops at 64 MiB of it by
  // default): Open replays it into LMDB, syncs, then rebuilds the index.
  if (flags.reopen_log_objects > 0) {
    const std::string log_dir = TempStoreDir(flags, "reopen-log");
    {
      EmbeddedStoreOptions options;
      options.dir = log_dir;
      options.fsync = false;
      options.write_ahead_log = true;
      options.hold_log_for_test = true;
      options.max_log_tail_bytes = size_t{1} << 30;
      auto s = EmbeddedStore::Open(options);
      if (!s.ok()) std::exit(1);
      Fill(**s, flags.reopen_log_objects, flags.reopen_log_objects, 3072, "/registry/pods/x/pod-");
    }
    EmbeddedStoreOptions options;
    options.dir = log_dir;
    options.write_ahead_log = true;
    const int64_t t0 = NowNs();
    auto s = EmbeddedStore::Open(options);
    const int64_t t1 = NowNs();
    if (!s.ok()) {
      std::fprintf(stderr, "reopen with log: %s\n", s.status().ToString().c_str());
      std::exit(1);
    }
    std::printf(
        "| %d objects of 3 KB only in the log (a crash before any was applied): replay "
        "%llu groups, then open | %.0f |\n",
        flags.reopen_log_objects, static_cast<unsigned long long>((*s)->log_replayed_groups()),
        Ms(t1 - t0));
    s->reset();
    std::filesystem::remove_all(log_dir);
  }
  PrintConditions(flags);
}

Flags Parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      const std::string prefix = std::string("--") + name + "=";
      return a.rfind(prefix, 0) == 0 ? argv[i] + prefix.size() : nullptr;
    };
    if (auto v = value("only"))
      f.only = v;
    else if (auto v = value("dir"))
      f.dir = v;
    else if (auto v = value("seconds"))
      f.seconds = std::atof(v);
    else if (auto v = value("etcd"))
      f.etcd = v;
    else if (auto v = value("etcd-channels"))
      f.etcd_channels = std::atoi(v);
    else if (auto v = value("watchers"))
      f.watchers = std::atoi(v);
    else if (auto v = value("watch-writes"))
      f.watch_writes = std::atoi(v);
    else if (auto v = value("compact-revisions"))
      f.compact_revisions = std::atoi(v);
    else if (auto v = value("reopen-objects"))
      f.reopen_objects = std::atoi(v);
    else if (auto v = value("reopen-log-objects"))
      f.reopen_log_objects = std::atoi(v);
    else if (auto v = value("profile-puts"))
      f.profile_puts = std::atoi(v);
    else if (auto v = value("repeat"))
      f.repeat = std::max(1, std::atoi(v));
    else if (auto v = value("watch-fsync"))
      f.watch_fsync = std::atoi(v) != 0;
    else if (auto v = value("short-slice-clients"))
      f.short_slice_clients = std::atoi(v) != 0;
    else if (auto v = value("reserve-bytes"))
      f.reserve_bytes = std::atoll(v);
    else if (auto v = value("mode"))
      g_mode = v;
    else if (auto v = value("modes")) {
      f.modes.clear();
      for (const char* p = v; *p != '\0';) {
        const size_t n = std::strcspn(p, ",");
        f.modes.emplace_back(p, n);
        p += n;
        if (*p == ',') ++p;
      }
    } else if (auto v = value("writers")) {
      f.writers.clear();
      for (const char* p = v; *p != '\0';) {
        f.writers.push_back(std::max(1, std::atoi(p)));
        p += std::strcspn(p, ",");
        if (*p == ',') ++p;
      }
    } else {
      std::fprintf(stderr, "unknown flag %s (see the comment at the top of store_bench.cc)\n",
                   argv[i]);
      std::exit(2);
    }
  }
  return f;
}

}  // namespace
}  // namespace converge::bench

int main(int argc, char** argv) {
  using namespace converge::bench;
  const Flags flags = Parse(argc, argv);
  g_short_slice_clients = flags.short_slice_clients;
  if (flags.profile_puts > 0) {
    BenchProfile(flags);
    return 0;
  }
  if (flags.only.empty() || flags.only == "put") BenchPut(flags);
  if (flags.only.empty() || flags.only == "watch") BenchWatch(flags);
  if (flags.only.empty() || flags.only == "compact") BenchCompact(flags);
  if (flags.only.empty() || flags.only == "reopen") BenchReopen(flags);
  return 0;
}
