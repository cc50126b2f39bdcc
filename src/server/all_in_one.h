// AllInOne: `converge server` — the control plane plus the controller-manager, the scheduler and
// N simulated nodes in one process. Components reach the API server through in-process clients
// (the same handler chain as HTTP, each under its own identity), so behaviour matches running
// them as separate processes.
//
// Start order: control plane → controller-manager → scheduler → kubelets; Stop reverses it.
// Thread-safety: Start/Stop from one thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/leader_elector.h"
#include "kubelet/kubelet.h"
#include "server/control_plane.h"

namespace converge::server {

struct AllInOneOptions {
  ControlPlaneOptions control_plane;
  int nodes = 3;
  // Pod status writers of the simulated kubelet: each blocks on its write's durable commit, so
  // more writers let the store group more writes into one fsync.
  int kubelet_status_workers = 16;
  bool leader_elect = true;
  // --leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period,
  // for the controller-manager and the scheduler.
  client::LeaderElectionTimings leader_election;
  std::chrono::seconds node_monitor_grace_period{50};  // --node-monitor-grace-period
  std::chrono::milliseconds node_monitor_period{std::chrono::seconds(5)};  // --node-monitor-period
  int node_lease_duration_seconds = 40;  // --node-lease-duration-seconds
};

class AllInOne {
 public:
  explicit AllInOne(AllInOneOptions options);
  ~AllInOne();

  util::Status Start();
  void Stop();

  ControlPlane& control_plane() { return *cp_; }

 private:
  const AllInOneOptions options_;
  std::unique_ptr<ControlPlane> cp_;
  std::vector<std::unique_ptr<client::RestClient>> clients_;  // one per component identity
  // The writers of each simulated node, acting as system:node:<name>; constant while running.
  std::unordered_map<std::string, std::unique_ptr<client::RestClient>> node_clients_;
  std::vector<std::unique_ptr<kubelet::Kubelet>> kubelets_;  // one, carrying every node
  std::stop_source stop_;
  std::vector<std::jthread> components_;
};

}  // namespace converge::server
