#include "server/all_in_one.h"

#include <spdlog/spdlog.h>

#include <map>

#include "apiserver/server.h"
#include "apiserver/storage.h"
#include "client/leader_elector.h"
#include "controllers/manager/controller_manager.h"
#include "kubelet/kubelet.h"
#include "scheduler/scheduler.h"

namespace converge::server {

namespace {

namespace json = boost::json;

// The identity of the simulated kubelet's shared watches (see Start).
constexpr char kNodeSimulatorUser[] = "system:converge:node-simulator";
constexpr char kNodeSimulatorRole[] = "system:converge:node-simulator";

// Creates (or restores) the ClusterRole that lets kNodeSimulatorUser get, list and watch pods and
// nodes, and its binding. Written through storage like the bootstrap policy (a post-start step of
// this server, not a client's request).
util::Status EnsureNodeSimulatorReader(apiserver::APIServer& api) {
  static const apiserver::UserInfo system{"system:apiserver", "", {"system:masters"}, true};
  apiserver::WriteContext ctx;
  ctx.user = &system;
  ctx.field_manager = "converge-server";
  const std::string g = "rbac.authorization.k8s.io";
  json::object labels{{"kubernetes.io/bootstrapping", "rbac-defaults"}};
  json::object role{
      {"apiVersion", g + "/v1"},
      {"kind", "ClusterRole"},
      {"metadata", json::object{{"name", kNodeSimulatorRole}, {"labels", labels}}},
      {"rules", json::array{json::object{{"apiGroups", json::array{""}},
                                         {"resources", json::array{"pods", "nodes"}},
                                         {"verbs", json::array{"get", "list", "watch"}}}}}};
  json::object binding{
      {"apiVersion", g + "/v1"},
      {"kind", "ClusterRoleBinding"},
      {"metadata", json::object{{"name", kNodeSimulatorRole}, {"labels", labels}}},
      {"roleRef",
       json::object{{"apiGroup", g}, {"kind", "ClusterRole"}, {"name", kNodeSimulatorRole}}},
      {"subjects",
       json::array{json::object{{"apiGroup", g}, {"kind", "User"}, {"name", kNodeSimulatorUser}}}}};
  struct Want {
    apiserver::ResourceStorage* storage;
    api::Object object;
    std::vector<std::string> fields;  // replaced when the stored object differs
  };
  Want wants[] = {{api.Storage({g, "v1", "clusterroles"}), api::Object(std::move(role)), {"rules"}},
                  {api.Storage({g, "v1", "clusterrolebindings"}),
                   api::Object(std::move(binding)),
                   {"roleRef", "subjects"}}};
  for (Want& w : wants) {
    if (w.storage == nullptr) return util::Internal("RBAC resources are not registered");
    const std::string name(w.object.name());
    auto created = w.storage->Create("", w.object, ctx);
    if (created.ok()) continue;
    if (created.error().reason != "AlreadyExists") {
      return util::Internal("creating " + name + ": " + created.error().message);
    }
    auto updated = w.storage->Update(
        "", name,
        [&](const api::Object* current) -> apiserver::ApiOr<api::Object> {
          if (current == nullptr) return w.object;
          api::Object next = *current;
          for (const std::string& f : w.fields) next.mutable_doc()[f] = w.object.doc().at(f);
          return next;
        },
        ctx);
    if (!updated.ok()) return util::Internal("updating " + name + ": " + updated.error().message);
  }
  return util::Status();
}

}  // namespace

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
    o.leader_election = options_.leader_election;
    o.node_monitor_grace_period = options_.node_monitor_grace_period;
    o.node_monitor_period = options_.node_monitor_period;
    o.root_ca_pem = cp_->pki().ca.cert_pem;
    // A manager that lost its lease is a candidate again: the process also serves the API, so it
    // does not exit as a lone controller manager would.
    for (;;) {
      controllers::ControllerManager manager(o);
      spdlog::info("controller-manager: starting");
      util::Status s = manager.Run(stop_.get_token());
      if (client::IsLeadershipLost(s)) {
        spdlog::warn("controller-manager: {}; standing as a candidate again", s.message());
        continue;
      }
      if (!s.ok()) spdlog::error("controller-manager: {}", s.ToString());
      break;
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
    o.leader_election = options_.leader_election;
    for (;;) {
      spdlog::info("scheduler: starting");
      util::Status s = scheduler::Run(o, stop_.get_token());
      if (client::IsLeadershipLost(s)) {
        spdlog::warn("scheduler: {}; standing as a candidate again", s.message());
        continue;
      }
      if (!s.ok() && !stop_.stop_requested()) spdlog::error("scheduler: {}", s.ToString());
      break;
    }
  });

  // One kubelet carries every simulated node: one watch of the scheduled pods and one of the
  // nodes, one sync loop and a few writer threads, whatever N is (a kubelet per node cost ~17
  // threads and a filtered watch each: 5,000 nodes were 85,000 threads and 5,000 watchers that
  // every pod event was matched against). Each node still writes as system:node:<name> in
  // system:nodes, so the node authorizer and NodeRestriction bound it exactly as they bound a
  // kubelet process (its own Node, Lease and pods only). The shared watches read every scheduled
  // pod and every node, which no single node may do: they run as system:converge:node-simulator,
  // whom RBAC allows to get, list and watch pods and nodes, and nothing else.
  if (options_.nodes > 0) {
    CONVERGE_RETURN_IF_ERROR(EnsureNodeSimulatorReader(cp_->api()));
    spdlog::info("kubelet: starting {} simulated node(s)", options_.nodes);
    kubelet::KubeletOptions ko;
    ko.nodes = options_.nodes;
    ko.first_node_index = 0;
    ko.listen = "127.0.0.1:0";
    ko.status_workers = options_.kubelet_status_workers;
    ko.lease_duration_seconds = options_.node_lease_duration_seconds;
    ko.lease_renew_interval = kubelet::NodeLeaseRenewInterval(options_.node_lease_duration_seconds);
    clients_.push_back(cp_->InProcessClient(kNodeSimulatorUser, {}, "kubelet"));
    ko.client = clients_.back().get();
    node_clients_.reserve(options_.nodes);
    for (int i = 0; i < options_.nodes; ++i) {
      std::string node = ko.node_prefix + "-" + std::to_string(i);
      node_clients_.emplace(
          node, cp_->InProcessClient("system:node:" + node, {"system:nodes"}, "kubelet"));
    }
    ko.client_for_node = [this](std::string_view node) -> client::RestClient* {
      auto it = node_clients_.find(std::string(node));
      return it == node_clients_.end() ? nullptr : it->second.get();
    };
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
  node_clients_.clear();
  clients_.clear();
  if (cp_) cp_->Stop();
}

}  // namespace converge::server
