// NodeHeartbeats: registration and liveness of every node a kubelet carries — the Node object, a
// Lease in kube-node-lease renewed every 10 s (leaseDurationSeconds 40), and node status posted
// when something changed and at least every 5 minutes (upstream's nodeStatusReportFrequency) —
// for thousands of nodes on a few worker threads.
//
// Scheduling: one timer per node in a shared heap. Renewals are spread evenly over the renew
// interval (node i of N renews at offset i·interval/N), so 5,000 nodes make a steady 500 lease
// writes per second instead of bursts; the 5-minute status reports ride on those ticks and are
// spread the same way. A worker the timer wakes runs every tick due within `batch_window` (a
// little early) before it sleeps again, so the workers wake a few times per window rather than
// once or more per tick: on a VM, waking a thread costs more than the renewal it does.
//
// Status is also posted at once when the API shows the node not Ready (the node lifecycle
// controller marked it Unknown while heartbeats were paused or failing): ObserveNode is fed by
// a watch on nodes.
//
// Registration follows upstream's kubelet: create the Node (with its status); if it exists
// already (a restarted kubelet), take it over and post status. A node deleted while the kubelet
// runs is not re-registered (upstream neither); its status posts fail until it is recreated.
//
// Fault injection: Pause(node) stops that node's lease renewals and status posts (the node
// "stops heartbeating"; its pods keep running); Resume(node) restarts them at once.
//
// Thread-safety: every public method is safe to call concurrently; Run once.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <queue>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "client/rest_client.h"
#include "kubelet/node_object.h"
#include "util/clock.h"

namespace converge::kubelet {

struct NodeHeartbeatsOptions {
  client::RestClient* client = nullptr;  // required, not owned
  // The client that writes for one node (its Node, its Lease), e.g. one acting as
  // system:node:<name>. Null: `client` for every node. Returned clients are not owned.
  std::function<client::RestClient*(std::string_view node)> client_for_node;
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
  std::vector<NodeConfig> nodes;
  int lease_duration_seconds = 40;
  // Upstream: renewInterval = leaseDuration / 4 = 10 s; nodeStatusReportFrequency = 5 min.
  util::Clock::Duration renew_interval = std::chrono::seconds(10);
  util::Clock::Duration status_report_interval = std::chrono::minutes(5);
  int workers = 4;
  // Ticks due this soon run now (see the file comment); zero runs each at its time.
  util::Clock::Duration batch_window = std::chrono::milliseconds(50);
  // Told about node-level happenings worth an event ("Starting", "NodeReady").
  std::function<void(const std::string& node, const std::string& uid, std::string_view reason,
                     std::string_view message)>
      on_event;
};

class NodeHeartbeats {
 public:
  explicit NodeHeartbeats(NodeHeartbeatsOptions options);
  NodeHeartbeats(const NodeHeartbeats&) = delete;
  NodeHeartbeats& operator=(const NodeHeartbeats&) = delete;

  // Registers every node, then renews leases and posts status until stop.
  void Run(std::stop_token stop);

  void Pause(std::string_view node);
  void Resume(std::string_view node);
  bool Paused(std::string_view node) const;

  // What a watch on nodes saw: `ready` is the status of the Ready condition ("True", "False",
  // "Unknown", "" when absent); `exists` false for a deletion.
  void ObserveNode(std::string_view node, std::string_view ready, bool exists);

  // Whether every node is registered and has its first Lease (blocks until then, or stop).
  bool WaitRegistered(std::stop_token stop) const;
  bool AllRegistered() const;
  bool Owns(std::string_view node) const { return index_.count(std::string(node)) > 0; }

  struct Stats {
    int64_t registrations = 0;
    int64_t lease_renewals = 0;
    int64_t lease_failures = 0;
    int64_t status_posts = 0;
    int64_t status_failures = 0;
  };
  Stats stats() const;

 private:
  struct NodeState {
    bool registered = false;
    bool counted = false;  // registered and its Lease written once: in registered_count_
    std::string uid;
    std::string lease_rv;  // "" when unknown: create (or read) before updating
    bool paused = false;
    bool status_due = false;  // post status at the next tick, whatever the interval says
    WallTime last_status{};
    WallTime ready_transition{};
    std::string observed_ready = "True";
    WallTime scheduled{};             // the heap entry that is current ({} when none)
    bool in_flight = false;           // a worker is ticking this node
    std::optional<WallTime> poke_at;  // asked to tick again while in flight
    int register_failures = 0;
  };
  struct Entry {
    WallTime at;
    size_t node;
    bool operator>(const Entry& o) const { return at > o.at; }
  };

  void Worker(std::stop_token stop);
  // One tick of node i, scheduled `at` (I/O; no lock held). Returns when it wants the next tick.
  WallTime Tick(size_t i, WallTime at, std::stop_token stop);
  bool Register(size_t i, std::stop_token stop);
  bool RenewLease(size_t i, std::stop_token stop);
  bool PostStatus(size_t i, std::stop_token stop);
  // The next renewal slot of node i strictly after `now`.
  WallTime NextSlot(size_t i, WallTime now) const;
  void ScheduleLocked(size_t i, WallTime at);
  client::RestClient* ClientFor(size_t i) const;

  const NodeHeartbeatsOptions options_;
  util::Clock* const clock_;
  std::unordered_map<std::string, size_t> index_;  // constant after construction
  WallTime epoch_{};                               // set by Run before any worker starts

  mutable std::mutex mu_;
  mutable std::condition_variable_any cv_;             // workers: a new earliest tick, stop
  mutable std::condition_variable_any registered_cv_;  // WaitRegistered: registered_count_
  std::vector<NodeState> state_;                       // guarded by mu_
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;  // guarded by mu_
  size_t registered_count_ = 0;  // nodes with `counted`; guarded by mu_
  Stats stats_;                  // guarded by mu_
};

}  // namespace converge::kubelet
