// The `watch` scenario (scenarios.h): W watchers over HTTPS on one namespace's pods, pods created
// at a steady rate, delivery latency per (event, watcher).
//
// Watchers read the raw stream and find each event's pod by its name ("bw-<i>") instead of
// decoding the JSON: 1,000 decoding watchers would make this process, not the server, the
// bottleneck on a small machine. Write i is scheduled at start + i / rate; its send time is
// taken just before its create is sent.
#include <spdlog/spdlog.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "bench/pods.h"
#include "bench/scenarios.h"
#include "bench/server_process.h"
#include "bench/stats.h"

namespace converge::bench {

namespace {

using Clock = std::chrono::steady_clock;
constexpr char kNamespace[] = "default";
constexpr std::string_view kNameMarker = "\"bw-";

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace

util::Status RunWatch(const WatchOptions& options, Report* report) {
  report->Add("load_average_1m_at_start", LoadAverage1m());
  ServerProcess server({.binary = options.common.binary,
                        .command = "apiserver",
                        .temp_parent = options.common.dir,
                        .store = options.common.store,
                        .etcd_binary = options.common.etcd_binary});
  if (auto s = server.Start(); !s.ok()) return s;
  auto rc = ClientForKubeconfig(server.kubeconfig_path());
  if (!rc.ok()) return rc.status();
  client::RestClient& rest = **rc;
  client::ListOptions lo;
  lo.limit = 1;
  auto list = rest.List(kPodsResource, kNamespace, lo);
  if (!list.ok()) return list.status();
  const std::string rv = list->resource_version;

  const int64_t writes =
      std::max<int64_t>(1, static_cast<int64_t>(options.seconds * options.writes_per_second));
  // send_ns[i]: steady-clock time just before write i was sent (0: not yet).
  std::unique_ptr<std::atomic<int64_t>[]> send_ns(new std::atomic<int64_t>[writes]);
  for (int64_t i = 0; i < writes; ++i) send_ns[i] = 0;

  std::stop_source stop;
  std::atomic<int> established{0}, ended_early{0};
  std::atomic<int64_t> delivered{0};
  std::mutex mu;
  Latencies all;             // guarded by mu
  util::Status watch_error;  // guarded by mu
  std::vector<std::thread> watchers;
  watchers.reserve(options.watchers);
  Progress connect_progress("watchers connected", options.watchers);
  for (int w = 0; w < options.watchers; ++w) {
    watchers.emplace_back([&] {
      client::HttpRequest req;
      req.path = "/api/v1/namespaces/default/pods";
      req.query = {{"watch", "true"}, {"resourceVersion", rv}};
      req.stop = stop.get_token();
      auto stream = rest.Stream(std::move(req));
      if (!stream.ok()) {
        std::lock_guard lock(mu);
        if (watch_error.ok()) watch_error = stream.status();
        ++ended_early;
        ++established;
        return;
      }
      ++established;
      Latencies mine;
      std::string pending;  // bytes of an unfinished line
      std::vector<std::shared_ptr<const std::string>> chunks;
      int64_t seen = 0;
      while (seen < writes) {
        chunks.clear();
        auto more = (*stream)->Read(&chunks);
        if (!more.ok() || !*more) {
          if (!stop.stop_requested()) ++ended_early;
          break;
        }
        const int64_t now = NowNs();
        for (const auto& chunk : chunks) pending.append(*chunk);
        size_t line_start = 0;
        for (size_t nl = pending.find('\n'); nl != std::string::npos;
             nl = pending.find('\n', line_start)) {
          std::string_view line(pending.data() + line_start, nl - line_start);
          line_start = nl + 1;
          if (line.find("\"ADDED\"") == std::string_view::npos) continue;
          size_t at = line.find(kNameMarker);
          if (at == std::string_view::npos) continue;
          int64_t i = 0;
          for (size_t p = at + kNameMarker.size();
               p < line.size() && line[p] >= '0' && line[p] <= '9'; ++p) {
            i = i * 10 + (line[p] - '0');
          }
          if (i < 0 || i >= writes) continue;
          int64_t sent = send_ns[i].load();
          if (sent > 0) mine.Add(std::chrono::nanoseconds(now - sent));
          ++seen;
          ++delivered;
        }
        pending.erase(0, line_start);
      }
      std::lock_guard lock(mu);
      all.Merge(mine);
    });
    connect_progress.Set(established.load());
  }
  while (established.load() < options.watchers) {
    connect_progress.Set(established.load());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  connect_progress.Finish();
  const int connected = options.watchers - ended_early.load();
  spdlog::info("bench watch: {} watchers connected", connected);

  // Writers: creates scheduled at a steady rate, several in flight so that one slow create does
  // not hold back the schedule.
  constexpr int kWriters = 8;
  std::atomic<int64_t> next{0}, write_errors{0};
  Progress write_progress("writes", writes);
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&] {
      auto c = ClientForKubeconfig(server.kubeconfig_path());
      if (!c.ok()) return;
      for (int64_t i = next++; i < writes; i = next++) {
        auto at = start + std::chrono::nanoseconds(
                              static_cast<int64_t>(1e9 * i / options.writes_per_second));
        std::this_thread::sleep_until(at);
        send_ns[i] = NowNs();
        if (!(*c)->Create(kPodsResource, kNamespace, MakePod("bw-" + std::to_string(i))).ok()) {
          ++write_errors;
        }
        write_progress.Set(i + 1);
      }
    });
  }
  for (std::thread& t : writers) t.join();
  write_progress.Finish();
  const double write_seconds = SecondsSince(start);
  // Let the last events arrive (every watcher ends once it has seen every write).
  const int64_t expected = static_cast<int64_t>(connected) * (writes - write_errors.load());
  const Clock::time_point drain_deadline = Clock::now() + std::chrono::seconds(60);
  while (delivered.load() < expected && Clock::now() < drain_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop.request_stop();
  for (std::thread& t : watchers) t.join();

  report->Add("watchers", options.watchers);
  report->Add("watchers_connected", connected);
  report->Add("writes", writes - write_errors.load());
  report->Add("write_errors", write_errors.load());
  report->Add("writes_per_second", static_cast<double>(writes) / write_seconds);
  report->Add("events_expected", expected);
  report->Add("events_delivered", delivered.load());
  report->Add("events_delivered_per_second", static_cast<double>(delivered.load()) / write_seconds);
  report->Add("delivery_p50_ms", all.PercentileMs(50));
  report->Add("delivery_p99_ms", all.PercentileMs(99));
  report->Add("delivery_max_ms", all.MaxMs());
  report->Add("server_peak_rss_bytes", SampleProcess(server.pid()).peak_rss_bytes);
  report->Add("load_average_1m_at_end", LoadAverage1m());
  if (!watch_error.ok()) report->Note("a watch failed: " + watch_error.ToString());
  return util::Status::Ok();
}

}  // namespace converge::bench
