// The `e2e` scenario (scenarios.h): one Deployment scaled from 0 to M replicas on N simulated
// nodes, observed through a watch.
//
// Pod startup latency runs from the moment this process first sees a pod (its ADDED event: the
// ReplicaSet controller has just created it) to the moment it sees the pod Running and Ready,
// both on the same watch, so that creationTimestamp's one-second resolution does not blur it. It
// is split where the watch first shows the pod bound (spec.nodeName set): the scheduler's part
// (queueing, filtering, the binding) and the kubelet's (admission, the simulated pull and start,
// the status write), so that a long tail names its stage.
// API latency comes from a probe that, while the scale-up runs, alternately GETs the Deployment
// and LISTs 100 of its pods every 100 ms.
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/json.hpp>
#include <ctime>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <unordered_map>

#include "bench/scenarios.h"
#include "bench/server_process.h"
#include "bench/stats.h"
#include "client/api_errors.h"
#include "store/etcd/etcd_store.h"

namespace converge::bench {

namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

const api::GroupVersionResource kPods{"", "v1", "pods"};
const api::GroupVersionResource kNodes{"", "v1", "nodes"};
const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};
const api::GroupVersionResource kDeployments{"apps", "v1", "deployments"};
constexpr char kDeploymentName[] = "bench";

bool ConditionTrue(const json::object& o, std::string_view type) {
  const json::array* conds = api::FindArray(o, {"status", "conditions"});
  if (conds == nullptr) return false;
  for (const json::value& c : *conds) {
    if (!c.is_object()) continue;
    if (api::Object::GetString(c.as_object(), "type") == type) {
      return api::Object::GetString(c.as_object(), "status") == "True";
    }
  }
  return false;
}

bool PodRunningAndReady(const api::Object& pod) {
  return api::FindString(pod.doc(), {"status", "phase"}) == "Running" &&
         ConditionTrue(pod.doc(), "Ready");
}

api::Object MakeDeployment(const std::string& ns) {
  json::object labels{{"app", "bench-e2e"}};
  json::object d{
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", json::object{{"name", kDeploymentName}, {"namespace", ns}}},
      {"spec",
       json::object{
           {"replicas", 0},
           {"selector", json::object{{"matchLabels", labels}}},
           {"template",
            json::object{{"metadata", json::object{{"labels", labels}}},
                         {"spec", json::object{{"containers",
                                                json::array{json::object{
                                                    {"name", "c"}, {"image", "pause:3.9"}}}}}}}}}}};
  return api::Object(std::move(d));
}

// Pods of the namespace as the watch shows them. Used by the watch thread only, except the
// atomic counters.
class PodTracker {
 public:
  void Observe(const api::Object& pod, Clock::time_point now) {
    auto [it, inserted] = pods_.try_emplace(std::string(pod.name()));
    Times& t = it->second;
    if (inserted) {
      t.first_seen = now;
      ++seen_;
    }
    if (!t.bound && !api::FindString(pod.view(), {"spec", "nodeName"}).empty()) {
      t.bound = true;
      t.bound_at = now;
      scheduling_.Add(now - t.first_seen);
    }
    if (!t.ready && PodRunningAndReady(pod)) {
      t.ready = true;
      startup_.Add(now - t.first_seen);
      after_binding_.Add(now - t.bound_at);  // a Ready pod is bound: t.bound is set by now
      ++ready_;
    }
  }
  int64_t ready() const { return ready_.load(); }
  int64_t seen() const { return seen_.load(); }
  // Call after the watch thread stopped.
  Latencies& startup() { return startup_; }
  Latencies& scheduling() { return scheduling_; }
  Latencies& after_binding() { return after_binding_; }

 private:
  struct Times {
    Clock::time_point first_seen;
    Clock::time_point bound_at;
    bool bound = false;
    bool ready = false;
  };
  std::unordered_map<std::string, Times> pods_;
  Latencies startup_;
  Latencies scheduling_;     // first seen to first seen bound
  Latencies after_binding_;  // first seen bound to first seen Running and Ready
  std::atomic<int64_t> ready_{0}, seen_{0};
};

// Lists and watches the namespace's pods into `tracker` until `stop`: resumes a watch that ends
// from the last resourceVersion seen, relists when that is too old. `listed` is set once the
// first list is in: every pod created after it is first seen in its ADDED event, as created (not
// yet bound).
void WatchPods(client::RestClient& rest, const std::string& ns, PodTracker* tracker,
               std::atomic<bool>* listed, std::stop_token stop) {
  std::string rv;
  while (!stop.stop_requested()) {
    if (rv.empty()) {
      auto list = rest.List(kPods, ns, {.stop = stop});
      if (!list.ok()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      Clock::time_point now = Clock::now();
      for (const api::Object& p : list->items) tracker->Observe(p, now);
      rv = list->resource_version;
      listed->store(true);
    }
    client::ListOptions lo;
    lo.resource_version = rv;
    lo.allow_watch_bookmarks = true;
    lo.timeout_seconds = 600;
    lo.stop = stop;
    auto watcher = rest.Watch(kPods, ns, lo);
    if (!watcher.ok()) {
      if (client::IsExpired(watcher.status())) rv.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    while (!stop.stop_requested()) {
      auto ev = (*watcher)->Next();
      if (!ev.ok() || !ev->has_value()) break;
      const client::WatchEvent& e = **ev;
      if (e.type == client::EventType::kError) {
        if (client::IsExpired(e.error)) rv.clear();
        break;
      }
      if (e.object) {
        std::string_view new_rv = e.object->resource_version();
        if (!new_rv.empty()) rv = std::string(new_rv);
        if (e.type == client::EventType::kAdded || e.type == client::EventType::kModified) {
          tracker->Observe(*e.object, Clock::now());
        }
      }
    }
  }
}

util::StatusOr<int64_t> ReadyNodes(client::RestClient& rest) {
  client::ListOptions lo;
  lo.resource_version = "0";
  auto list = rest.List(kNodes, "", lo);
  if (!list.ok()) return list.status();
  int64_t ready = 0;
  for (const api::Object& n : list->items) ready += ConditionTrue(n.doc(), "Ready") ? 1 : 0;
  return ready;
}

}  // namespace

util::Status RunE2e(const E2eOptions& options, Report* report) {
  report->Add("load_average_1m_at_start", LoadAverage1m());
  if (options.kubeconfig.empty()) report->AddString("server_store", options.common.store);
  std::unique_ptr<ServerProcess> server;
  std::string kubeconfig = options.kubeconfig;
  pid_t pid = options.server_pid;
  const Clock::time_point begin = Clock::now();
  if (kubeconfig.empty()) {
    ServerProcessOptions so{.binary = options.common.binary,
                            .command = "server",
                            .args = {"--nodes", std::to_string(options.nodes)},
                            .temp_parent = options.common.dir,
                            .store = options.common.store,
                            .etcd_binary = options.common.etcd_binary};
    so.args.insert(so.args.end(), options.server_args.begin(), options.server_args.end());
    server = std::make_unique<ServerProcess>(so);
    if (auto s = server->Start(); !s.ok()) return s;
    kubeconfig = server->kubeconfig_path();
    pid = server->pid();
    report->Add("server_ready_seconds",
                std::chrono::duration<double>(server->ready_after()).count());
  }
  auto rc = ClientForKubeconfig(kubeconfig);
  if (!rc.ok()) return rc.status();
  client::RestClient& rest = **rc;

  // Every node registered and Ready before the scale-up.
  {
    Progress progress("nodes ready", options.nodes);
    const Clock::time_point deadline =
        Clock::now() +
        std::chrono::milliseconds(static_cast<int64_t>(options.timeout_seconds * 1e3));
    while (true) {
      auto ready = ReadyNodes(rest);
      if (ready.ok()) {
        progress.Set(*ready);
        if (*ready >= options.nodes) break;
      }
      if (Clock::now() > deadline) return util::DeadlineExceeded("nodes did not become Ready");
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    progress.Finish();
    report->Add("nodes", options.nodes);
    report->Add("nodes_ready_seconds", SecondsSince(begin));
  }

  const std::string ns = "bench-e2e-" + std::to_string(std::time(nullptr));
  {
    json::object nsobj{
        {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", json::object{{"name", ns}}}};
    auto r = rest.Create(kNamespaces, "", api::Object(std::move(nsobj)));
    if (!r.ok()) return r.status().WithContext("creating namespace " + ns);
    auto d = rest.Create(kDeployments, ns, MakeDeployment(ns));
    if (!d.ok()) return d.status().WithContext("creating the deployment");
  }

  PodTracker tracker;
  std::stop_source stop;
  std::atomic<bool> listed{false};
  std::jthread watch_thread([&] { WatchPods(rest, ns, &tracker, &listed, stop.get_token()); });
  std::mutex probe_mu;
  Latencies api_latencies;  // guarded by probe_mu
  int64_t api_errors = 0;   // guarded by probe_mu
  std::jthread probe_thread([&] {
    auto c = ClientForKubeconfig(kubeconfig);
    if (!c.ok()) return;
    for (int64_t i = 0; !stop.stop_requested(); ++i) {
      Clock::time_point t0 = Clock::now();
      util::Status s;
      if (i % 2 == 0) {
        s = (*c)->Get(kDeployments, {ns, kDeploymentName}).status();
      } else {
        client::ListOptions lo;
        lo.limit = 100;
        s = (*c)->List(kPods, ns, lo).status();
      }
      Clock::time_point t1 = Clock::now();
      {
        std::lock_guard lock(probe_mu);
        if (s.ok()) {
          api_latencies.Add(t1 - t0);
        } else {
          ++api_errors;
        }
      }
      std::this_thread::sleep_until(t0 + std::chrono::milliseconds(100));
    }
  });

  // Stops both threads on every way out of this function, before they are joined.
  struct StopOnExit {
    std::stop_source& stop;
    ~StopOnExit() { stop.request_stop(); }
  } stop_on_exit{stop};

  // The scale-up starts once the watch has its starting point: a pod created before would be
  // first seen by the list, perhaps already bound or Ready, and its startup understated.
  for (const Clock::time_point give_up = Clock::now() + std::chrono::seconds(60); !listed.load();) {
    if (Clock::now() > give_up) return util::DeadlineExceeded("listing the namespace's pods");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ProcSample cpu0 = pid > 0 ? SampleProcess(pid) : ProcSample{};
  // With --store etcd the store's work happens in etcd's process: measured beside the server's.
  const pid_t etcd_pid = server && server->etcd() != nullptr ? server->etcd()->pid(0) : 0;
  ProcSample etcd0 = etcd_pid > 0 ? SampleProcess(etcd_pid) : ProcSample{};
  const Clock::time_point t0 = Clock::now();
  auto scaled = rest.Patch(kDeployments, {ns, kDeploymentName}, client::PatchType::kMerge,
                           "{\"spec\":{\"replicas\":" + std::to_string(options.pods) + "}}");
  if (!scaled.ok()) return scaled.status().WithContext("scaling the deployment");
  bool timed_out = false;
  {
    Progress progress("pods ready", options.pods);
    const Clock::time_point deadline =
        t0 + std::chrono::milliseconds(static_cast<int64_t>(options.timeout_seconds * 1e3));
    while (tracker.ready() < options.pods) {
      if (Clock::now() > deadline) {
        timed_out = true;
        break;
      }
      progress.Set(tracker.ready());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    progress.Set(tracker.ready());
    progress.Finish();
  }
  const double seconds = SecondsSince(t0);
  ProcSample cpu1 = pid > 0 ? SampleProcess(pid) : ProcSample{};
  ProcSample etcd1 = etcd_pid > 0 ? SampleProcess(etcd_pid) : ProcSample{};
  stop.request_stop();
  watch_thread.join();
  probe_thread.join();

  report->Add("pods", options.pods);
  report->Add("pods_ready", tracker.ready());
  if (server && server->etcd() != nullptr) {
    // Where the pods are: etcd's own count of the pod keys, read past the server.
    store::etcd::EtcdStoreOptions eo;
    eo.endpoints = server->etcd()->endpoints();
    auto kv = store::etcd::OpenEtcdStore(eo);
    if (!kv.ok()) return kv.status().WithContext("reading etcd");
    auto pods = (*kv)->Range({.key = "/registry/pods/",
                              .range_end = store::PrefixEnd("/registry/pods/"),
                              .count_only = true});
    if (!pods.ok()) return pods.status().WithContext("reading etcd");
    report->Add("etcd_pod_keys", pods->count);
    if (etcd0.ok && etcd1.ok) {
      report->Add("etcd_peak_rss_bytes", etcd1.peak_rss_bytes);
      report->Add("etcd_cpu_seconds", etcd1.cpu_seconds - etcd0.cpu_seconds);
    }
  }
  report->Add("seconds_to_all_ready", seconds);
  report->Add("pods_per_second", static_cast<double>(tracker.ready()) / seconds);
  report->Add("startup_p50_ms", tracker.startup().PercentileMs(50));
  report->Add("startup_p99_ms", tracker.startup().PercentileMs(99));
  report->Add("startup_max_ms", tracker.startup().MaxMs());
  report->Add("scheduling_p50_ms", tracker.scheduling().PercentileMs(50));
  report->Add("scheduling_p99_ms", tracker.scheduling().PercentileMs(99));
  report->Add("bound_to_ready_p50_ms", tracker.after_binding().PercentileMs(50));
  report->Add("bound_to_ready_p99_ms", tracker.after_binding().PercentileMs(99));
  report->Add("api_p50_ms", api_latencies.PercentileMs(50));
  report->Add("api_p99_ms", api_latencies.PercentileMs(99));
  report->Add("api_requests", static_cast<int64_t>(api_latencies.size()));
  report->Add("api_errors", api_errors);
  if (cpu0.ok && cpu1.ok) {
    report->Add("peak_rss_bytes", cpu1.peak_rss_bytes);
    report->Add("rss_bytes", cpu1.rss_bytes);
    report->Add("server_cpu_seconds", cpu1.cpu_seconds - cpu0.cpu_seconds);
    report->Add("server_cpu_cores", (cpu1.cpu_seconds - cpu0.cpu_seconds) / seconds);
  } else {
    report->Note("server PID unknown (--server-pid): peak_rss_bytes and CPU not measured");
  }
  if (options.hold_seconds > 0 && !timed_out) {
    if (pid > 0) {
      // The pods stay; the watchers and probes have stopped. What the server holds then.
      std::this_thread::sleep_for(
          std::chrono::milliseconds(static_cast<int64_t>(options.hold_seconds * 1e3)));
      ProcSample held = SampleProcess(pid);
      if (held.ok) {
        report->Add("held_seconds", options.hold_seconds);
        report->Add("held_rss_bytes", held.rss_bytes);
        report->Add("held_rss_anon_bytes", held.rss_anon_bytes);
        report->Add("held_rss_file_bytes", held.rss_file_bytes);
      }
    } else {
      report->Note("server PID unknown (--server-pid): held_rss_bytes not measured");
    }
  }
  report->Add("load_average_1m_at_end", LoadAverage1m());
  if (timed_out) {
    report->Add("timed_out", 1);
    report->Note("timed out: only " + std::to_string(tracker.ready()) + " of " +
                 std::to_string(options.pods) + " pods became Ready");
  }
  if (!options.kubeconfig.empty()) {
    // A server we only target keeps running: clean up after ourselves.
    if (auto s = rest.Delete(kNamespaces, {"", ns}); !s.ok()) {
      report->Note("could not delete namespace " + ns + ": " + s.ToString());
    }
  }
  return util::Status::Ok();
}

}  // namespace converge::bench
