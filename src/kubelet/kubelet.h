// Kubelet: a simulated kubelet carrying any number of nodes in one process (or inside the
// all-in-one `converge server`), realistic enough that the control plane cannot tell it from
// real kubelets and cheap enough for 5,000 nodes and 100,000 pods.
//
// What runs (all started by Run, none by the constructor):
//   - NodeHeartbeats: registration, leases, node status (heartbeats.h);
//   - a watch on nodes, so that a node the node lifecycle controller marked Unknown is reported
//     Ready again as soon as its heartbeats resume;
//   - one watch on the pods bound to its nodes (PodSource), feeding
//   - the sync loop: one thread owning a PodMachine per pod (pod_machine.h) and a timer heap of
//     their due times; each change or due time advances a machine, and what comes out becomes
//   - status writes and final DELETEs (StatusWriter), events (EventPump, source "kubelet" with
//     the node as host) and log lines (LogStore);
//   - optionally an HTTP endpoint serving /containerLogs/<ns>/<pod>/<container> (the kubelet
//     API's logs path), whose port every node advertises in status.daemonEndpoints, so that an
//     API server in another process can proxy `kubectl logs` to it (log_proxy.h).
//
// In-process, an API server serves logs straight from here: SetLogProvider(kubelet.LogProvider()).
//
// Shutdown (stop requested), in this order: the pod watch, the sync loop, the status writers,
// heartbeats and the node watch, events, followers of logs, the HTTP endpoint. Pods keep their
// last reported status; a new kubelet adopts them (running containers keep running).
//
// Thread-safety: Run once; every other method is safe to call from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "apiserver/request.h"
#include "apiserver/server.h"
#include "client/rest_client.h"
#include "kubelet/container_logs.h"
#include "kubelet/event_pump.h"
#include "kubelet/heartbeats.h"
#include "kubelet/node_object.h"
#include "kubelet/node_runtime.h"
#include "kubelet/pod_machine.h"
#include "kubelet/pod_source.h"
#include "kubelet/pod_status.h"
#include "kubelet/status_writer.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::kubelet {

// Upstream's kubelet renews its node Lease at a quarter of nodeLeaseDurationSeconds
// (nodeLeaseRenewIntervalFraction 0.25: 10 s for the default 40 s).
inline util::Clock::Duration NodeLeaseRenewInterval(int lease_duration_seconds) {
  return std::chrono::milliseconds(int64_t{lease_duration_seconds} * 250);
}

struct KubeletOptions {
  // Required, not owned. Reads (the watches of pods and nodes) go through it, and so do writes
  // unless client_for_node is set.
  client::RestClient* client = nullptr;
  // The client that writes for one node — its Node, Lease, pod status and deletes, events —
  // e.g. one acting as system:node:<name>, so that the node authorizer and NodeRestriction bound
  // every node as they bound a kubelet of its own (the all-in-one server does this). Null, or a
  // null result: `client`. Returned clients are not owned and must outlive Run.
  std::function<client::RestClient*(std::string_view node)> client_for_node;
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()

  // Nodes <node_prefix>-<i> for i in [first_node_index, first_node_index + nodes). The index
  // also picks each node's pod CIDR (node_runtime.h), so kubelets sharing a cluster should use
  // disjoint index ranges.
  int nodes = 1;
  std::string node_prefix = "converge-node";
  int first_node_index = 0;
  NodeCapacity capacity;
  std::map<std::string, std::string> node_labels;  // added to every node
  // InternalIP of every node. Empty: the log endpoint's host when it listens (so an API server
  // can reach it), else distinct made-up addresses 172.18.x.y (kind's range).
  std::string node_ip;

  // "HOST:PORT" for the kubelet HTTP endpoint (logs); port 0 picks one. Empty: none (logs are
  // then served in-process only, and nodes advertise kubelet_port).
  std::string listen;
  int kubelet_port = 10250;

  // nodeLeaseDurationSeconds (--node-lease-duration-seconds); the renew interval is upstream's
  // quarter of it unless a caller sets both.
  int lease_duration_seconds = 40;
  util::Clock::Duration lease_renew_interval = NodeLeaseRenewInterval(40);
  util::Clock::Duration node_status_report_interval = std::chrono::minutes(5);
  int heartbeat_workers = 4;
  int status_workers = 4;
  int event_workers = 2;

  MachineOptions machine;
  bool serialize_image_pulls = true;
  bool pod_events = true;   // Pulling, Pulled, Created, Started, Killing, BackOff, ...
  bool node_events = true;  // Starting, NodeReady
  size_t log_max_lines = 10000;
  // The kubelet API also serves POST /converge/faults/heartbeats?node=N&paused=true|false
  // (PauseHeartbeats/ResumeHeartbeats; docs/FAULTS.md).
  bool enable_fault_injection = false;
};

class Kubelet final : private PodSink {
 public:
  explicit Kubelet(KubeletOptions options);
  ~Kubelet() override;
  Kubelet(const Kubelet&) = delete;
  Kubelet& operator=(const Kubelet&) = delete;

  // Registers the nodes and runs until stop. Fails only when the HTTP endpoint cannot listen.
  util::Status Run(std::stop_token stop);

  // The nodes this kubelet carries, in index order.
  std::vector<std::string> NodeNames() const;
  // Blocks until every node is registered and the pod watch has listed (or stop).
  bool WaitReady(std::stop_token stop) const;
  bool OwnsNode(std::string_view node) const { return Owns(node); }
  // The port of the HTTP endpoint once Run has started it (0 before, or without one).
  int port() const { return port_.load(); }

  // Fault injection: the node stops (resumes) renewing its Lease and posting status; its pods
  // keep running.
  void PauseHeartbeats(std::string_view node);
  void ResumeHeartbeats(std::string_view node);
  bool HeartbeatsPaused(std::string_view node) const;

  // pods/log for `pod` (the API object): validates the request as the API server does
  // (container name, node assignment), then serves it from the log store.
  apiserver::Response ServeLogs(const apiserver::Request& req, const api::Object& pod);
  // For APIServer::SetLogProvider: serves pods of this kubelet's nodes; others get a 400.
  apiserver::APIServer::LogProvider LogProvider();
  // The kubelet HTTP API: GET /containerLogs/<ns>/<pod>/<container>, GET /healthz, and with
  // fault injection POST /converge/faults/heartbeats.
  apiserver::Response HandleKubeletApi(apiserver::Request& req);

  struct Stats {
    size_t pods = 0;  // pods the sync loop holds
    NodeHeartbeats::Stats heartbeats;
    StatusWriter::Stats writes;
    int64_t syncs = 0;  // machine advances
    int64_t events_dropped = 0;
  };
  Stats stats() const;

 private:
  // One per pod. With its 64-byte key, a node of pods_ fits jemalloc's 160-byte class while
  // PodEntry is within 88 bytes (the static_assert below): hence the small fields.
  struct PodEntry {
    std::unique_ptr<PodMachine> machine;
    uint64_t observed_fingerprint = 0;
    uint64_t submitted_fingerprint = 0;
    uint64_t recent_fingerprints[4] = {0, 0, 0, 0};  // our last writes (echoes are not news)
    ScheduledTime pod_scheduled_time;
    WallTime scheduled{};  // the timer heap entry that is current
    uint32_t node = 0;     // its runtime: runtimes_[node]
    uint8_t recent_next = 0;
    bool delete_submitted = false;
  };
  static_assert(sizeof(PodEntry) <= 88, "a node of pods_ outgrew jemalloc's 160-byte class");
  struct Change {
    std::optional<PodSnapshot> snapshot;
    std::string deleted_uid;  // non-empty: the incarnation with this uid is gone
  };
  struct Timer {
    WallTime at;
    api::ObjectKey key;
    bool operator>(const Timer& o) const { return at > o.at; }
  };

  // PodSink (the pod watch's thread).
  void PodChanged(PodSnapshot snapshot) override;
  void PodDeleted(const api::ObjectKey& key, const std::string& uid) override;
  void PodsListed() override;

  void SyncLoop(std::stop_token stop);
  void Apply(const api::ObjectKey& key, Change change, WallTime now);
  void Publish(const api::ObjectKey& key, PodEntry& entry, MachineOutput& out, WallTime now);
  void RunNodeWatch(std::stop_token stop);
  void RunPodWatch(std::stop_token stop);
  // The index in runtimes_ of `node`'s runtime, if this kubelet carries it.
  std::optional<uint32_t> RuntimeIndex(std::string_view node) const;
  bool Owns(std::string_view node) const { return node_index_.count(std::string(node)) > 0; }

  KubeletOptions options_;
  util::Clock* const clock_;
  std::vector<NodeConfig> configs_;                     // fixed once Run has started
  std::unordered_map<std::string, size_t> node_index_;  // constant after construction
  std::vector<std::unique_ptr<NodeRuntime>> runtimes_;  // the sync loop's
  std::unique_ptr<NodeHeartbeats> heartbeats_;          // created by Run
  std::unique_ptr<StatusWriter> writer_;
  std::unique_ptr<EventPump> events_;
  LogStore logs_;
  std::atomic<int> port_{0};
  std::atomic<bool> pods_synced_{false};
  std::atomic<bool> running_{false};

  // The sync loop's inbox (changes from the pod watch), and its wake-up.
  mutable std::mutex inbox_mu_;
  std::condition_variable_any inbox_cv_;
  std::unordered_map<api::ObjectKey, std::vector<Change>> inbox_;  // guarded by inbox_mu_
  mutable std::condition_variable_any ready_cv_;                   // with inbox_mu_

  // The sync loop's own state (its thread only), and a published count.
  std::unordered_map<api::ObjectKey, PodEntry> pods_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::atomic<size_t> pod_count_{0};
  std::atomic<int64_t> syncs_{0};
};

// For the all-in-one server (`converge server --nodes N`): runs `nodes` simulated nodes
// (converge-node-0 .. converge-node-<nodes-1>) through `client` until `stop`, then returns.
// The kubelet API (logs) listens on 127.0.0.1 with a free port that every node advertises in
// status.daemonEndpoints, so the control plane's log proxy (log_proxy.h) serves `kubectl logs`
// for them exactly as for kubelets in other processes. `client` must outlive the call.
// Fails only when the kubelet API cannot listen.
util::Status RunInProcessKubelet(client::RestClient* client, int nodes, std::stop_token stop);

}  // namespace converge::kubelet
