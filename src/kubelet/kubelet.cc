#include "kubelet/kubelet.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "apiserver/errors.h"
#include "apiserver/handler_util.h"
#include "apiserver/http_server.h"
#include "client/list_watch.h"
#include "client/reflector.h"
#include "kubelet/pod_status.h"
#include "util/thread_name.h"

namespace converge::kubelet {

namespace {

namespace json = boost::json;

const api::GroupVersionResource kPodsResource{"", "v1", "pods"};
const api::GroupVersionResource kNodesResource{"", "v1", "nodes"};

apiserver::Response BadLogRequest(std::string message) {
  return apiserver::ErrorResponse(apiserver::BadRequest(std::move(message)));
}

// Made-up but distinct node addresses, kind-style (172.18.0.2, 172.18.0.3, ...).
std::string SyntheticNodeIp(int index) {
  int n = index + 2;
  return "172." + std::to_string(18 + n / 65536) + "." + std::to_string((n / 256) % 256) + "." +
         std::to_string(n % 256);
}

bool SpecChanged(const PodSpecView& a, const PodSpecView& b) {
  return a.deletion_timestamp != b.deletion_timestamp ||
         a.deletion_grace_seconds != b.deletion_grace_seconds || a.containers != b.containers ||
         a.init_containers != b.init_containers;
}

// Feeds the Ready condition of this kubelet's nodes to the heartbeats.
class NodeWatchStore final : public client::ReflectorStore {
 public:
  explicit NodeWatchStore(NodeHeartbeats* heartbeats) : heartbeats_(heartbeats) {}
  void Add(api::ObjectPtr obj) override { Observe(*obj); }
  void Update(api::ObjectPtr obj) override { Observe(*obj); }
  void Delete(api::ObjectPtr obj) override { heartbeats_->ObserveNode(obj->name(), "", false); }
  void Replace(std::vector<api::ObjectPtr> objects, const std::string&) override {
    for (const api::ObjectPtr& o : objects) Observe(*o);
  }
  void Resync() override {}

 private:
  void Observe(const api::Object& node) {
    if (!heartbeats_->Owns(node.name())) return;
    std::string_view ready;
    if (api::ArrayView conds = api::FindArray(node.view(), {"status", "conditions"})) {
      for (const api::View c : *conds) {
        if (c.is_object() && api::Object::GetString(c.get_object(), "type") == "Ready") {
          ready = api::Object::GetString(c.get_object(), "status");
        }
      }
    }
    heartbeats_->ObserveNode(node.name(), ready, true);
  }

  NodeHeartbeats* const heartbeats_;
};

}  // namespace

Kubelet::Kubelet(KubeletOptions options)
    : options_(std::move(options)),
      clock_(options_.clock ? options_.clock : &util::RealClock()),
      logs_({.clock = clock_, .max_lines = options_.log_max_lines}) {
  for (int i = 0; i < options_.nodes; ++i) {
    NodeConfig c;
    c.index = options_.first_node_index + i;
    c.name = options_.node_prefix + "-" + std::to_string(c.index);
    c.capacity = options_.capacity;
    c.extra_labels = options_.node_labels;
    c.kubelet_port = options_.kubelet_port;
    NodeRuntimeOptions ro;
    ro.node_name = c.name;
    ro.node_index = c.index;
    ro.serialize_image_pulls = options_.serialize_image_pulls;
    NodeCapacity a = Allocatable(c.capacity);
    ro.allocatable = {a.cpu_milli, a.memory_bytes, a.pods};
    c.internal_ip = !options_.node_ip.empty() ? options_.node_ip
                    : !options_.listen.empty()
                        ? options_.listen.substr(0, options_.listen.rfind(':'))
                        : SyntheticNodeIp(c.index);
    ro.host_ip = c.internal_ip;
    auto runtime = std::make_unique<NodeRuntime>(ro);
    c.pod_cidr = runtime->PodCidr();
    node_index_[c.name] = configs_.size();
    configs_.push_back(std::move(c));
    runtimes_.push_back(std::move(runtime));
  }
  StatusWriterOptions wo;
  wo.client = options_.client;
  wo.client_for_node = options_.client_for_node;
  wo.clock = clock_;
  wo.workers = options_.status_workers;
  writer_ = std::make_unique<StatusWriter>(wo);
  events_ = std::make_unique<EventPump>(options_.client, clock_, options_.event_workers,
                                        options_.client_for_node);
}

Kubelet::~Kubelet() = default;

std::vector<std::string> Kubelet::NodeNames() const {
  std::vector<std::string> out;
  for (const NodeConfig& c : configs_) out.push_back(c.name);
  return out;
}

std::optional<uint32_t> Kubelet::RuntimeIndex(std::string_view node) const {
  auto it = node_index_.find(std::string(node));
  if (it == node_index_.end()) return std::nullopt;
  return static_cast<uint32_t>(it->second);
}

bool Kubelet::WaitReady(std::stop_token stop) const {
  {
    std::unique_lock lock(inbox_mu_);
    ready_cv_.wait(lock, stop, [this] { return pods_synced_.load() && heartbeats_ != nullptr; });
  }
  if (stop.stop_requested()) return false;
  return heartbeats_->WaitRegistered(stop) && pods_synced_.load();
}

void Kubelet::PauseHeartbeats(std::string_view node) {
  std::unique_lock lock(inbox_mu_);
  if (heartbeats_) heartbeats_->Pause(node);
}

void Kubelet::ResumeHeartbeats(std::string_view node) {
  std::unique_lock lock(inbox_mu_);
  if (heartbeats_) heartbeats_->Resume(node);
}

bool Kubelet::HeartbeatsPaused(std::string_view node) const {
  std::unique_lock lock(inbox_mu_);
  return heartbeats_ && heartbeats_->Paused(node);
}

Kubelet::Stats Kubelet::stats() const {
  Stats s;
  s.pods = pod_count_.load();
  {
    std::unique_lock lock(inbox_mu_);
    if (heartbeats_) s.heartbeats = heartbeats_->stats();
  }
  s.writes = writer_->stats();
  s.syncs = syncs_.load();
  s.events_dropped = events_->dropped();
  return s;
}

// ---- Run ----

util::Status Kubelet::Run(std::stop_token stop) {
  if (running_.exchange(true)) return util::FailedPrecondition("Kubelet::Run called twice");
  std::unique_ptr<apiserver::HttpServer> http;
  if (!options_.listen.empty()) {
    apiserver::HttpServerOptions ho;
    ho.listen = options_.listen;
    ho.io_threads = 1;
    ho.worker_threads = 4;
    ho.handler = [this](apiserver::Request& r) { return HandleKubeletApi(r); };
    http = std::make_unique<apiserver::HttpServer>(ho);
    CONVERGE_RETURN_IF_ERROR(http->Start());
    port_ = http->port();
    for (NodeConfig& c : configs_) c.kubelet_port = port_;
  }
  {
    NodeHeartbeatsOptions ho;
    ho.client = options_.client;
    ho.client_for_node = options_.client_for_node;
    ho.clock = clock_;
    ho.nodes = configs_;
    ho.lease_duration_seconds = options_.lease_duration_seconds;
    ho.renew_interval = options_.lease_renew_interval;
    ho.status_report_interval = options_.node_status_report_interval;
    ho.workers = options_.heartbeat_workers;
    if (options_.node_events) {
      ho.on_event = [this](const std::string& node, const std::string& uid, std::string_view reason,
                           std::string_view message) {
        client::ObjectReference ref;
        ref.kind = "Node";
        ref.name = node;
        ref.uid = node;  // upstream's kubelet refers to its node by name as uid
        ref.api_version = "v1";
        (void)uid;
        events_->Record(node, ref, client::kEventTypeNormal, reason, message);
      };
    }
    std::lock_guard lock(inbox_mu_);
    heartbeats_ = std::make_unique<NodeHeartbeats>(std::move(ho));
    ready_cv_.notify_all();
  }

  // Each component has its own stop source, so that shutdown goes in the documented order.
  std::stop_source pod_watch_stop, sync_stop, writer_stop, heartbeat_stop, events_stop, logs_stop;
  // Each thread is named after its part (top -H, perf report --sort comm).
  auto named = [](const char* name, auto body) {
    return [name, body = std::move(body)] {
      util::SetThreadName(name);
      body();
    };
  };
  std::jthread logs_thread(
      named("kubelet-logs", [this, t = logs_stop.get_token()] { logs_.Run(t); }));
  std::jthread events_thread(
      named("kubelet-events", [this, t = events_stop.get_token()] { events_->Run(t); }));
  std::jthread writer_thread(
      named("kubelet-writer", [this, t = writer_stop.get_token()] { writer_->Run(t); }));
  std::jthread heartbeat_thread(
      named("kubelet-beats", [this, t = heartbeat_stop.get_token()] { heartbeats_->Run(t); }));
  std::jthread node_watch_thread(
      named("kubelet-nodes", [this, t = heartbeat_stop.get_token()] { RunNodeWatch(t); }));
  std::jthread sync_thread(
      named("kubelet-sync", [this, t = sync_stop.get_token()] { SyncLoop(t); }));
  std::jthread pod_watch_thread(
      named("kubelet-pods", [this, t = pod_watch_stop.get_token()] { RunPodWatch(t); }));
  spdlog::info("kubelet: running {} node(s) {}-{}..{}{}", configs_.size(), options_.node_prefix,
               options_.first_node_index, options_.first_node_index + options_.nodes - 1,
               port_ ? ", kubelet API on port " + std::to_string(port_.load()) : "");

  {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait(lock, stop, [] { return false; });
  }

  pod_watch_stop.request_stop();
  pod_watch_thread.join();
  sync_stop.request_stop();
  sync_thread.join();
  writer_stop.request_stop();
  writer_thread.join();
  heartbeat_stop.request_stop();
  heartbeat_thread.join();
  node_watch_thread.join();
  events_stop.request_stop();
  events_thread.join();
  logs_stop.request_stop();
  logs_thread.join();
  if (http) http->Stop();
  return util::Status();
}

void Kubelet::RunNodeWatch(std::stop_token stop) {
  client::ListWatchOptions lo;
  lo.client = options_.client;
  lo.gvr = kNodesResource;
  if (configs_.size() == 1) lo.field_selector = "metadata.name=" + configs_[0].name;
  client::ListWatch lw(lo);
  NodeWatchStore store(heartbeats_.get());
  client::ReflectorOptions ro;
  ro.name = "kubelet-nodes";
  ro.lister_watcher = &lw;
  ro.store = &store;
  ro.clock = clock_;
  client::Reflector reflector(ro);
  reflector.Run(stop);
}

void Kubelet::RunPodWatch(std::stop_token stop) {
  client::ListWatchOptions lo;
  lo.client = options_.client;
  lo.gvr = kPodsResource;
  lo.field_selector =
      configs_.size() == 1 ? "spec.nodeName=" + configs_[0].name : std::string("spec.nodeName!=");
  client::ListWatch lw(lo);
  PodSource source([this](std::string_view node) { return Owns(node); }, this);
  client::ReflectorOptions ro;
  ro.name = "kubelet-pods";
  ro.lister_watcher = &lw;
  ro.store = &source;
  ro.clock = clock_;
  client::Reflector reflector(ro);
  reflector.Run(stop);
}

// ---- the pod watch's side ----

void Kubelet::PodChanged(PodSnapshot snapshot) {
  std::lock_guard lock(inbox_mu_);
  api::ObjectKey key = snapshot.spec.key;
  inbox_[key].push_back(Change{std::move(snapshot), {}});
  inbox_cv_.notify_all();
}

void Kubelet::PodDeleted(const api::ObjectKey& key, const std::string& uid) {
  std::lock_guard lock(inbox_mu_);
  inbox_[key].push_back(Change{std::nullopt, uid});
  inbox_cv_.notify_all();
}

void Kubelet::PodsListed() {
  std::lock_guard lock(inbox_mu_);
  pods_synced_ = true;
  ready_cv_.notify_all();
}

// ---- the sync loop ----

void Kubelet::SyncLoop(std::stop_token stop) {
  std::stop_callback wake(stop, [this] {
    std::lock_guard lock(inbox_mu_);
    inbox_cv_.notify_all();
  });
  std::unique_lock lock(inbox_mu_);
  while (!stop.stop_requested()) {
    WallTime now = clock_->WallNow();
    const bool timer_due = !timers_.empty() && timers_.top().at <= now;
    if (inbox_.empty() && !timer_due) {
      auto deadline = timers_.empty() ? clock_->Now() + std::chrono::hours(1)
                                      : clock_->Now() + (timers_.top().at - now);
      clock_->WaitUntil(inbox_cv_, lock, deadline);
      continue;
    }
    auto batch = std::move(inbox_);
    inbox_.clear();
    lock.unlock();
    now = clock_->WallNow();
    for (auto& [key, changes] : batch) {
      for (Change& c : changes) Apply(key, std::move(c), now);
    }
    while (!timers_.empty() && timers_.top().at <= now) {
      Timer t = timers_.top();
      timers_.pop();
      auto it = pods_.find(t.key);
      if (it == pods_.end() || it->second.scheduled != t.at) continue;  // stale
      PodEntry& e = it->second;
      e.scheduled = WallTime{};
      MachineOutput out;
      e.machine->Advance(*runtimes_[e.node], now, &out);
      Publish(t.key, e, out, now);
    }
    pod_count_ = pods_.size();
    lock.lock();
  }
}

void Kubelet::Apply(const api::ObjectKey& key, Change change, WallTime now) {
  auto remove = [&](std::unordered_map<api::ObjectKey, PodEntry>::iterator it) {
    MachineOutput out;
    it->second.machine->Remove(*runtimes_[it->second.node], now, &out);
    if (options_.pod_events) {
      const PodSpecView& spec = it->second.machine->spec();
      for (const KubeletEvent& ev : out.events) {
        client::ObjectReference ref{"Pod", key.ns, key.name, spec.uid, "v1", "", ev.field_path};
        events_->Record(spec.node_name, ref, ev.type, ev.reason, ev.message);
      }
    }
    logs_.RemovePod(key);
    pods_.erase(it);
  };
  auto it = pods_.find(key);
  if (!change.snapshot) {
    if (it != pods_.end() && it->second.machine->spec().uid == change.deleted_uid) remove(it);
    return;
  }
  PodSnapshot& s = *change.snapshot;
  if (it != pods_.end() && it->second.machine->spec().uid != s.spec.uid) {
    remove(it);
    it = pods_.end();
  }
  MachineOutput out;
  if (it == pods_.end()) {
    std::optional<uint32_t> index = RuntimeIndex(s.spec.node_name.str());
    if (!index) return;
    NodeRuntime& node = *runtimes_[*index];
    PodEntry e;
    e.node = *index;
    e.machine = std::make_unique<PodMachine>(s.spec, &options_.machine);
    if (s.initial_status) e.machine->Adopt(*s.initial_status, node, now, &out);
    e.observed_fingerprint = s.status_fingerprint;
    e.pod_scheduled_time = ScheduledTime(s.pod_scheduled_time);
    e.machine->Advance(node, now, &out);
    it = pods_.emplace(key, std::move(e)).first;
  } else {
    PodEntry& e = it->second;
    if (!s.pod_scheduled_time.empty()) e.pod_scheduled_time = ScheduledTime(s.pod_scheduled_time);
    if (s.status_fingerprint != e.observed_fingerprint) {
      bool echo = false;
      for (uint64_t fp : e.recent_fingerprints) echo |= fp == s.status_fingerprint;
      e.observed_fingerprint = s.status_fingerprint;
      // Someone else changed the status: write ours again if it differs.
      if (!echo) e.submitted_fingerprint = 0;
    }
    if (SpecChanged(e.machine->spec(), s.spec)) {
      e.machine->Update(std::move(s.spec), *runtimes_[e.node], now, &out);
    } else {
      e.machine->Advance(*runtimes_[e.node], now, &out);
    }
  }
  Publish(key, it->second, out, now);
}

void Kubelet::Publish(const api::ObjectKey& key, PodEntry& e, MachineOutput& out, WallTime now) {
  ++syncs_;
  const PodMachine& m = *e.machine;
  const PodSpecView& spec = m.spec();
  if (options_.pod_events) {
    for (const KubeletEvent& ev : out.events) {
      client::ObjectReference ref{"Pod", key.ns, key.name, spec.uid, "v1", "", ev.field_path};
      events_->Record(spec.node_name, ref, ev.type, ev.reason, ev.message);
    }
  }
  for (const ContainerLogRecord& r : out.logs) logs_.Apply(key, r);
  logs_.SetView(key, PodLogView::From(m));

  json::object desired = BuildPodStatus(m, e.pod_scheduled_time.text());
  const uint64_t fp = StatusFingerprint(desired);
  const bool want_delete = m.wants_delete();
  const bool status_needed = fp != e.observed_fingerprint && fp != e.submitted_fingerprint;
  if (status_needed || (want_delete && !e.delete_submitted)) {
    PodWrite w;
    w.key = key;
    w.uid = spec.uid;
    w.node = spec.node_name;
    if (fp != e.observed_fingerprint) w.status_patch = BuildStatusPatch(spec.uid, desired);
    w.delete_after = want_delete;
    writer_->Submit(std::move(w));
    e.submitted_fingerprint = fp;
    e.recent_fingerprints[e.recent_next] = fp;
    e.recent_next = static_cast<uint8_t>((e.recent_next + 1) % 4);
    if (want_delete) e.delete_submitted = true;
  }

  std::optional<WallTime> next = m.NextDue();
  if (next && (e.scheduled == WallTime{} || *next < e.scheduled || e.scheduled <= now)) {
    e.scheduled = *next;
    timers_.push({*next, key});
  }
}

// ---- logs ----

apiserver::Response Kubelet::ServeLogs(const apiserver::Request& req, const api::Object& pod) {
  auto request = ResolveLogRequest(req, pod, clock_->WallNow());
  if (!request.ok()) return BadLogRequest(request.status().message());
  std::string_view node = api::FindString(pod.view(), {"spec", "nodeName"});
  if (!Owns(node)) {
    return BadLogRequest("pod " + std::string(pod.name()) + " runs on node " + std::string(node) +
                         ", which this kubelet does not carry");
  }
  return logs_.Serve(pod.key(), pod.uid(), pod.name(), *request);
}

apiserver::APIServer::LogProvider Kubelet::LogProvider() {
  return [this](const apiserver::Request& req, const apiserver::CachedObject& cached) {
    auto pod = cached.Parse();
    if (!pod.ok())
      return apiserver::ErrorResponse(apiserver::InternalError(pod.status().message()));
    return ServeLogs(req, *pod);
  };
}

apiserver::Response Kubelet::HandleKubeletApi(apiserver::Request& req) {
  if (req.path == "/healthz") {
    apiserver::Response r;
    r.content_type = "text/plain";
    r.body = "ok";
    return r;
  }
  if (options_.enable_fault_injection && req.path == "/converge/faults/heartbeats") {
    std::string node(req.Query("node"));
    std::string_view paused = req.Query("paused");
    if (req.method != "POST" || (paused != "true" && paused != "false")) {
      return apiserver::ErrorResponse(
          apiserver::BadRequest("POST /converge/faults/heartbeats?node=N&paused=true|false"));
    }
    if (!Owns(node)) {
      return apiserver::ErrorResponse(apiserver::BadRequest("this kubelet does not carry " + node));
    }
    if (paused == "true") {
      PauseHeartbeats(node);
    } else {
      ResumeHeartbeats(node);
    }
    spdlog::info("faults: node {} heartbeats {}", node, paused == "true" ? "paused" : "resumed");
    apiserver::Response r;
    r.content_type = "application/json";
    r.body = "{\"node\":\"" + node + "\",\"paused\":" + std::string(paused) + "}";
    return r;
  }
  constexpr std::string_view kPrefix = "/containerLogs/";
  if (req.method != "GET" || !std::string_view(req.path).starts_with(kPrefix)) {
    return apiserver::ErrorResponse(apiserver::NotFoundPath());
  }
  std::vector<std::string> parts;
  std::string_view rest = std::string_view(req.path).substr(kPrefix.size());
  while (!rest.empty()) {
    size_t slash = rest.find('/');
    parts.emplace_back(rest.substr(0, slash));
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || parts[2].empty()) {
    return apiserver::ErrorResponse(apiserver::NotFoundPath());
  }
  auto request = ParseLogRequest(req, clock_->WallNow());
  if (!request.ok()) return BadLogRequest(request.status().message());
  request->container = parts[2];
  return logs_.Serve({parts[0], parts[1]}, "", parts[1], *request);
}

util::Status RunInProcessKubelet(client::RestClient* client, int nodes, std::stop_token stop) {
  KubeletOptions o;
  o.client = client;
  o.nodes = nodes;
  o.listen = "127.0.0.1:0";
  Kubelet kubelet(std::move(o));
  return kubelet.Run(stop);
}

}  // namespace converge::kubelet
