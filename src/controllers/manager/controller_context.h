// What every controller is given when the controller-manager starts it, and what it gives back.
//
// A controller reads through the shared informers (one watch per resource per process), writes
// through the REST client, and reports through an event recorder for its own component name.
// Adding a controller: write its module under src/controllers/<name>/ with an Init function
// returning a RunnableController, and add one line to BuiltinControllers() (builtin.cc).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "client/event_recorder.h"
#include "client/rest_client.h"
#include "client/shared_informer_factory.h"
#include "util/clock.h"
#include "util/metrics.h"
#include "util/status.h"

namespace converge::controllers {

struct ControllerContext {
  client::RestClient* client = nullptr;                // not owned
  client::SharedInformerFactory* informers = nullptr;  // not owned; started after every Init
  util::Clock* clock = &util::RealClock();
  util::Registry* metrics = &util::DefaultRegistry();
  // Workers per controller (--concurrent-*-syncs upstream).
  int workers = 5;
  // How long a node may go without a heartbeat before it is marked Unknown and tainted
  // (--node-monitor-grace-period; 50 s upstream).
  std::chrono::seconds node_monitor_grace_period{50};
  // How often the node lifecycle controller checks node health (--node-monitor-period; 5 s).
  std::chrono::milliseconds node_monitor_period{std::chrono::seconds(5)};
  // The cluster's CA bundle (PEM) that the root-ca-cert-publisher puts in every namespace
  // (upstream's --root-ca-file, else the CA its kubeconfig trusts). Empty: nothing to publish.
  std::string root_ca_pem;
  // An event recorder whose events carry `component` as source (e.g. "deployment-controller").
  // The recorder lives as long as the controller-manager.
  std::function<client::EventRecorder*(std::string_view component)> recorder;
};

// A started controller: Run blocks until `stop` is requested, then returns once its workers are
// done. Construction must not start threads (STYLE.md).
class RunnableController {
 public:
  virtual ~RunnableController() = default;
  virtual void Run(std::stop_token stop) = 0;
};

struct ControllerDescriptor {
  std::string name;  // "deployment", "replicaset", "garbagecollector", ...
  // Registers informer handlers and builds the controller; called before informers start.
  std::function<util::StatusOr<std::unique_ptr<RunnableController>>(ControllerContext& ctx)> init;
  // The kube-system ServiceAccount whose identity the controller writes under when the manager
  // uses per-controller credentials (upstream's names: its bootstrap ClusterRole
  // system:controller:<service_account> grants exactly what the controller needs).
  std::string service_account;
};

// Every built-in controller in start order.
const std::vector<ControllerDescriptor>& BuiltinControllers();

}  // namespace converge::controllers
