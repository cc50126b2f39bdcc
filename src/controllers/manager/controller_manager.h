// ControllerManager: runs the built-in controllers in one process (upstream's
// kube-controller-manager), with leader election so that only one of several replicas acts.
//
// Run order: (1) acquire the leader Lease (kube-system/kube-controller-manager) when leader
// election is on; (2) Init every enabled controller (they register informer handlers);
// (3) start the informers and wait for their caches; (4) run every controller on its own thread.
// Shutdown (stop requested, or leadership lost): stop the controllers and wait for them, stop the
// informers, flush the event recorders, release the Lease.
//
// Thread-safety: Run is called once, from one thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client/leader_elector.h"
#include "client/rest_client.h"
#include "controllers/manager/controller_context.h"

namespace converge::controllers {

struct ControllerManagerOptions {
  // The manager's own client: shared informers, leader election and events (upstream's
  // system:kube-controller-manager identity may list and watch everything, write little).
  client::RestClient* client = nullptr;  // not owned
  // Per-controller credentials (upstream's --use-service-account-credentials): the client a
  // controller writes through, for its ControllerDescriptor::service_account in kube-system. The
  // returned client must live as long as the manager. Null: every controller uses `client`.
  std::function<util::StatusOr<client::RestClient*>(const std::string& service_account)> client_for;
  util::Clock* clock = &util::RealClock();
  // Controller names to run; empty or {"*"} = all.
  std::vector<std::string> controllers;
  int workers = 5;
  std::chrono::seconds node_monitor_grace_period{50};  // --node-monitor-grace-period
  std::chrono::milliseconds node_monitor_period{std::chrono::seconds(5)};  // --node-monitor-period
  std::string root_ca_pem;  // ControllerContext::root_ca_pem
  bool leader_elect = true;
  // --leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period.
  client::LeaderElectionTimings leader_election;
  std::string lease_namespace = "kube-system";
  std::string lease_name = "kube-controller-manager";
  std::string identity;  // unique per replica; default: hostname + random suffix
};

class ControllerManager {
 public:
  explicit ControllerManager(ControllerManagerOptions options);
  ~ControllerManager();

  // Blocks until `stop` is requested or, with leader election, leadership is lost; then the
  // result is client::LeadershipLost (upstream's controller manager exits then).
  util::Status Run(std::stop_token stop);

 private:
  // Runs the controllers until `stop`; called while leading.
  util::Status RunControllers(std::stop_token stop);

  const ControllerManagerOptions options_;
  std::unique_ptr<client::RestEventSink> sink_;
  std::map<std::string, std::unique_ptr<client::EventRecorder>, std::less<>> recorders_;
};

}  // namespace converge::controllers
