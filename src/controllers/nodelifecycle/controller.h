// NodeLifecycleController: upstream's node lifecycle controller and taint eviction controller in
// one (kube-controller-manager's "nodelifecycle" and "taint-eviction-controller").
//
// Every monitor period (5 s) it judges each node's health from its Lease and Ready heartbeat
// (node_health.h): a node silent for the grace period (50 s) gets Ready (and the pressure
// conditions) Unknown, a NodeNotReady event, and its pods' Ready condition set False. Taints
// follow: NoSchedule at once, NoExecute through a token bucket per zone (0.1 nodes/s by default,
// zones.h) checked every 100 ms; a node that is Ready again loses them at once.
//
// Evictions: a work queue of node names (enqueued when a node's taints change or a pod lands on
// a node); each reconcile decides (eviction.h) which pods of the node to delete now — after a
// DisruptionTarget condition and a TaintManagerEviction event, as upstream — and when to look
// again for tolerations still running.
//
// I/O: reads come from the shared informers (nodes, leases, pods with a spec.nodeName index);
// writes go through the REST client: nodes/status updates (conditions), node updates (taints),
// pods/status patches, pod deletes. A failed write is retried in the next round.
//
// Thread-safety: construct and register (New) before the informers start; Run once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <unordered_map>

#include "client/controller.h"
#include "client/event_recorder.h"
#include "client/rest_client.h"
#include "client/shared_informer_factory.h"
#include "controllers/manager/controller_context.h"
#include "controllers/nodelifecycle/eviction.h"
#include "controllers/nodelifecycle/node_health.h"
#include "controllers/nodelifecycle/zones.h"
#include "util/clock.h"

namespace converge::controllers::nodelifecycle {

struct NodeLifecycleOptions {
  client::RestClient* client = nullptr;                // required, not owned
  client::SharedInformerFactory* informers = nullptr;  // required, not owned
  util::Clock* clock = nullptr;                        // nullptr: util::RealClock()
  client::EventRecorder* node_recorder = nullptr;      // "node-controller"; optional
  client::EventRecorder* eviction_recorder = nullptr;  // "taint-eviction-controller"; optional
  util::Registry* metrics = nullptr;

  Duration monitor_period = std::chrono::seconds(5);  // --node-monitor-period
  NodeHealthOptions health;
  ZoneRates rates;
  double unhealthy_zone_threshold = 0.55;  // --unhealthy-zone-threshold
  // How often the rate-limited NoExecute queue is served (upstream's nodeEvictionPeriod).
  Duration taint_pass_period = std::chrono::milliseconds(100);
  EvictionOptions eviction;
  int eviction_workers = 1;
};

class NodeLifecycleController final : public RunnableController {
 public:
  // Registers the informers and handlers it needs; starts nothing.
  static util::StatusOr<std::unique_ptr<NodeLifecycleController>> New(NodeLifecycleOptions options);
  ~NodeLifecycleController() override;

  void Run(std::stop_token stop) override;

  // One monitoring round at the clock's current time (tests step it; Run calls it periodically).
  void MonitorNodeHealth(std::stop_token stop);
  // One pass over the rate-limited NoExecute queues.
  void DoNoExecuteTaintingPass(std::stop_token stop);
  client::Controller& evictions() { return *evictions_; }

 private:
  explicit NodeLifecycleController(NodeLifecycleOptions options);
  client::ReconcileResult ReconcileEvictions(const api::ObjectKey& node, std::stop_token stop);
  // Writes `taints` into the node (an update of the whole object, conflict-checked).
  util::Status UpdateTaints(const api::Object& node, const std::vector<Taint>& taints,
                            std::stop_token stop);
  void MarkPodsNotReady(const api::Object& node, WallTime now, std::stop_token stop);
  void HandleDisruption(const std::map<std::string, std::vector<std::string>>& zone_ready,
                        const std::vector<api::ObjectPtr>& nodes, WallTime now,
                        std::stop_token stop);

  struct ZoneQueue {
    std::vector<std::string> nodes;  // FIFO of node names to taint
    std::set<std::string> queued;
    double tokens = 1;  // burst 1
    double rate = 0.1;
    WallTime last_refill{};
  };

  const NodeLifecycleOptions options_;
  util::Clock* const clock_;
  client::SharedInformer* nodes_ = nullptr;
  client::SharedInformer* leases_ = nullptr;
  client::SharedInformer* pods_ = nullptr;
  std::unique_ptr<client::Controller> evictions_;

  std::mutex mu_;  // the monitor and the taint pass share the zone queues
  std::unordered_map<std::string, NodeHealth> health_;  // guarded by mu_
  std::map<std::string, ZoneQueue> zones_;              // guarded by mu_
  std::map<std::string, ZoneState> zone_states_;        // guarded by mu_
  bool all_fully_disrupted_ = false;                    // guarded by mu_
};

// The descriptor for the controller-manager (builtin.cc), with upstream's defaults.
ControllerDescriptor Descriptor();

}  // namespace converge::controllers::nodelifecycle
