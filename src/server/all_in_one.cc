#include "server/all_in_one.h"

#include <spdlog/spdlog.h>

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

  // TODO(#11): drop system:masters once the controllers run under least-privilege identities
  // (upstream's role for this user alone does not let controllers create pods).
  clients_.push_back(cp_->InProcessClient("system:kube-controller-manager", {"system:masters"},
                                          "controller-manager"));
  client::RestClient* cm_client = clients_.back().get();
  components_.emplace_back([this, cm_client] {
    controllers::ControllerManagerOptions o;
    o.client = cm_client;
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

  // The simulated nodes share one client. TODO(#11): one system:node:<name> identity per node,
  // so the node authorizer and NodeRestriction bound them as they bound a kubelet process.
  if (options_.nodes > 0) {
    clients_.push_back(
        cp_->InProcessClient("system:converge-kubelets", {"system:masters"}, "kubelet"));
    // As RunInProcessKubelet, but the kubelet object stays reachable for fault injection.
    kubelet::KubeletOptions ko;
    ko.client = clients_.back().get();
    ko.nodes = options_.nodes;
    ko.listen = "127.0.0.1:0";
    kubelet_ = std::make_unique<kubelet::Kubelet>(std::move(ko));
    if (FaultInjector* faults = cp_->faults()) {
      faults->SetHeartbeatControl([k = kubelet_.get()](const std::string& node, bool paused) {
        if (!k->OwnsNode(node)) return util::NotFound("no simulated node " + node);
        if (paused) {
          k->PauseHeartbeats(node);
        } else {
          k->ResumeHeartbeats(node);
        }
        return util::Status();
      });
    }
    components_.emplace_back([this] {
      spdlog::info("kubelet: starting {} simulated node(s)", options_.nodes);
      auto s = kubelet_->Run(stop_.get_token());
      if (!s.ok()) spdlog::error("kubelet: {}", s.ToString());
    });
  }
  return util::Status();
}

void AllInOne::Stop() {
  // Components first (they hold in-process clients into the API server), then the control plane.
  stop_.request_stop();
  components_.clear();  // joins
  if (cp_ && cp_->faults()) cp_->faults()->SetHeartbeatControl(nullptr);
  kubelet_.reset();
  clients_.clear();
  if (cp_) cp_->Stop();
}

}  // namespace converge::server
