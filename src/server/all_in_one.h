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
#include <thread>
#include <vector>

#include "kubelet/kubelet.h"
#include "server/control_plane.h"

namespace converge::server {

struct AllInOneOptions {
  ControlPlaneOptions control_plane;
  int nodes = 3;
  bool leader_elect = true;
  std::chrono::seconds node_monitor_grace_period{50};  // --node-monitor-grace-period
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
  std::vector<std::unique_ptr<kubelet::Kubelet>> kubelets_;   // one per simulated node
  std::stop_source stop_;
  std::vector<std::jthread> components_;
};

}  // namespace converge::server
