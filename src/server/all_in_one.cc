#include "server/all_in_one.h"

#include <spdlog/spdlog.h>

#include <map>

#include "controllers/manager/controller_manager.h"
#include "kubelet/kubelet.h"
#include "scheduler/scheduler.h"

namespace converge::server {

AllInOne::AllInOne(AllInOneOptions options) : options_(std::move(options)) {}

AllInOne::~AllInOne() {
  Stop();
}

util::Status AllInOne::Start() {
  cp_ = std::make_unique<ControlPlane>(options_.control_plane);
  CONVERGE_RETURN_IF_ERROR(cp_->Start());

  // The controller-manager reads (informers), elects and records events as
  // system:kube-controller-manager; each controller writes as its own ServiceAccount
  // system:serviceaccount:kube-system:<name> (upstream's --use-service-account-credentials),
  // allowed exactly what the bootstrap policy's system:controller:<name> role grants.
  clients_.push_back(
      cp_->InProcessClient("system:kube-controller-manager", {}, "controller-manager"));
  client::RestClient* cm_client = clients_.back().get();
  std::map<std::string, client::RestClient*> controller_clients;
  for (const controllers::ControllerDescriptor& d : controllers::BuiltinControllers()) {
    if (d.service_account.empty()) continue;
    clients_.push_back(cp_->InProcessClient(
        "system:serviceaccount:kube-system:" + d.service_account,
        {"system:serviceaccounts", "system:serviceaccounts:kube-system"}, "controller-manager"));
    controller_clients[d.service_account] = clients_.back().get();
  }
  components_.emplace_back([this, cm_client, controller_clients] {
    controllers::ControllerManagerOptions o;
    o.client = cm_client;
    o.client_for =
        [&controller_clients](const std::string& sa) -> util::StatusOr<client::RestClient*> {
      auto it = controller_clients.find(sa);
      if (it == controller_clients.end()) return util::NotFound("no client for " + sa);
      return it->second;
    };
    o.leader_elect = options_.leader_elect;
    o.node_monitor_grace_period = options_.node_monitor_grace_period;
    controllers::ControllerManager manager(o);
    spdlog::info("controller-manager: starting");
    if (auto s = manager.Run(stop_.get_token()); !s.ok()) {
      spdlog::error("controller-manager: {}", s.ToString());
    }
  });

  // The scheduler runs as upstream's identity; the bootstrap policy's system:kube-scheduler and
  // system:volume-scheduler roles are all it is allowed.
  clients_.push_back(cp_->InProcessClient("system:kube-scheduler", {}, "scheduler"));
  client::RestClient* scheduler_client = clients_.back().get();
  components_.emplace_back([this, scheduler_client] {
    scheduler::SchedulerOptions o;
    o.client = scheduler_client;
    o.leader_elect = options_.leader_elect;
    spdlog::info("scheduler: starting");
    if (auto s = scheduler::Run(o, stop_.get_token()); !s.ok() && !stop_.stop_requested()) {
      spdlog::error("scheduler: {}", s.ToString());
    }
  });

  // One kubelet per simulated node, each as system:node:<name> in system:nodes: the node
  // authorizer and NodeRestriction bound it exactly as they bound a kubelet process (its own Node,
  // Lease and pods only). A node costs a few threads; large simulations run `converge kubelet`.
  if (options_.nodes > 0) spdlog::info("kubelet: starting {} simulated node(s)", options_.nodes);
  for (int i = 0; i < options_.nodes; ++i) {
    kubelet::KubeletOptions ko;
    ko.nodes = 1;
    ko.first_node_index = i;
    ko.listen = "127.0.0.1:0";
    ko.heartbeat_workers = 1;
    ko.status_workers = 1;
    ko.event_workers = 1;
    clients_.push_back(cp_->InProcessClient(
        "system:node:" + ko.node_prefix + "-" + std::to_string(i), {"system:nodes"}, "kubelet"));
    ko.client = clients_.back().get();
    kubelets_.push_back(std::make_unique<kubelet::Kubelet>(std::move(ko)));
    kubelet::Kubelet* k = kubelets_.back().get();
    components_.emplace_back([this, k] {
      if (auto s = k->Run(stop_.get_token()); !s.ok()) spdlog::error("kubelet: {}", s.ToString());
    });
  }
  if (FaultInjector* faults = cp_->faults(); faults && !kubelets_.empty()) {
    faults->SetHeartbeatControl([this](const std::string& node, bool paused) {
      for (const auto& k : kubelets_) {
        if (!k->OwnsNode(node)) continue;
        if (paused) {
          k->PauseHeartbeats(node);
        } else {
          k->ResumeHeartbeats(node);
        }
        return util::Status();
      }
      return util::NotFound("no simulated node " + node);
    });
  }
  return util::Status();
}

void AllInOne::Stop() {
  // Components first (they hold in-process clients into the API server), then the control plane.
  stop_.request_stop();
  components_.clear();  // joins
  if (cp_ && cp_->faults()) cp_->faults()->SetHeartbeatControl(nullptr);
  kubelets_.clear();
  clients_.clear();
  if (cp_) cp_->Stop();
}

}  // namespace converge::server
