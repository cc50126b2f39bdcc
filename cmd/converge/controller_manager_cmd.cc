// converge controller-manager: the controllers alone, against any API server.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <boost/json.hpp>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "api/special_types.h"
#include "client/kubeconfig.h"
#include "client/leader_elector.h"
#include "client/rest_client.h"
#include "commands.h"
#include "controllers/manager/controller_manager.h"
#include "server/delayed_watch_transport.h"

namespace converge::cmd {

namespace {

struct ControllerManagerFlags {
  std::string kubeconfig;
  std::string controllers = "*";
  int workers = 5;
  bool leader_elect = true;
  client::LeaderElectionTimings leader_election;
  std::chrono::seconds node_monitor_grace_period{50};
  std::chrono::milliseconds node_monitor_period{std::chrono::seconds(5)};
  double fault_watch_delay_seconds = 0;
  bool use_service_account_credentials = false;
  std::string root_ca_file;
};

// Upstream's --use-service-account-credentials: each controller acts as the ServiceAccount
// kube-system/<name>, created if missing, with a token from the TokenRequest API (the manager's
// own identity, system:kube-controller-manager, may do both). Tokens are asked for the longest
// lifetime the server allows and are not refreshed.
class ServiceAccountClients {
 public:
  ServiceAccountClients(client::RestConfig base, client::RestClient* root)
      : base_(std::move(base)), root_(root) {}

  util::StatusOr<client::RestClient*> For(const std::string& name) {
    std::lock_guard lock(mu_);
    if (auto it = clients_.find(name); it != clients_.end()) return it->second.get();
    const std::string sa_path = "/api/v1/namespaces/kube-system/serviceaccounts";
    client::HttpRequest create;
    create.method = "POST";
    create.path = sa_path;
    create.headers = {{"content-type", "application/json"}, {"accept", "application/json"}};
    create.body =
        R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":")" + name + R"("}})";
    CONVERGE_ASSIGN_OR_RETURN(client::HttpResponse created, root_->Do(std::move(create)));
    if (created.status != 201 && created.status != 409) {
      return util::Unavailable("creating ServiceAccount kube-system/" + name + ": HTTP " +
                               std::to_string(created.status) + " " + created.body);
    }
    client::HttpRequest token;
    token.method = "POST";
    token.path = sa_path + "/" + name + "/token";
    token.headers = create.headers;
    token.body = R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest",)"
                 R"("spec":{"expirationSeconds":4294967296}})";
    CONVERGE_ASSIGN_OR_RETURN(client::HttpResponse issued, root_->Do(std::move(token)));
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(issued.body, ec);
    const boost::json::value* t =
        !ec && issued.status == 201 ? v.find_pointer("/status/token", ec) : nullptr;
    if (!t || !t->is_string()) {
      return util::Unavailable("a token for ServiceAccount kube-system/" + name + ": HTTP " +
                               std::to_string(issued.status) + " " + issued.body);
    }
    client::RestConfig config = base_;
    config.tls.client_cert_pem.clear();
    config.tls.client_key_pem.clear();
    config.bearer_token_file.clear();
    config.bearer_token = std::string(t->get_string());
    config.user_agent += "/" + name;
    CONVERGE_ASSIGN_OR_RETURN(auto rest, client::RestClient::ForConfig(config));
    client::RestClient* raw = rest.get();
    clients_.emplace(name, std::move(rest));
    return raw;
  }

 private:
  const client::RestConfig base_;
  client::RestClient* const root_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<client::RestClient>> clients_;  // guarded by mu_
};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int RunControllerManager(const ControllerManagerFlags& f) {
  if (f.leader_elect && !CheckLeaderElectionFlags("controller-manager", f.leader_election)) {
    return 1;
  }
  BlockShutdownSignals();
  auto config = client::LoadRestConfig(f.kubeconfig);
  if (!config.ok()) {
    spdlog::error("loading {}: {}", f.kubeconfig, config.status().ToString());
    return 1;
  }
  config->user_agent = "kube-controller-manager/v1.32.0 (linux/amd64) kubernetes/converge";
  auto transport = client::NewTransportForConfig(*config);
  if (!transport.ok()) {
    spdlog::error("{}", transport.status().ToString());
    return 1;
  }
  if (f.fault_watch_delay_seconds > 0) {
    // Fault injection: this process's informers run behind the API server (docs/FAULTS.md).
    auto delay = std::make_shared<server::WatchDelay>();
    delay->Set(std::chrono::milliseconds(static_cast<int64_t>(f.fault_watch_delay_seconds * 1000)));
    *transport = std::make_shared<server::DelayedWatchTransport>(std::move(*transport), delay);
    spdlog::warn("controller-manager: watch events arrive {}s late (--fault-watch-delay)",
                 f.fault_watch_delay_seconds);
  }
  client::RestClient rest(client::RestClientOptions{.transport = std::move(*transport)});
  controllers::ControllerManagerOptions o;
  o.client = &rest;
  o.controllers = SplitCommas(f.controllers);
  o.workers = f.workers;
  o.leader_elect = f.leader_elect;
  o.leader_election = f.leader_election;
  o.node_monitor_grace_period = f.node_monitor_grace_period;
  o.node_monitor_period = f.node_monitor_period;
  o.root_ca_pem = config->tls.ca_pem;
  if (!f.root_ca_file.empty()) {
    std::ifstream in(f.root_ca_file, std::ios::binary);
    std::stringstream pem;
    pem << in.rdbuf();
    o.root_ca_pem = pem.str();
    if (!in || o.root_ca_pem.empty()) {
      spdlog::error("controller-manager: --root-ca-file {}: unreadable or empty", f.root_ca_file);
      return 1;
    }
  }
  ServiceAccountClients sa_clients(*config, &rest);
  if (f.use_service_account_credentials) {
    o.client_for = [&sa_clients](const std::string& name) { return sa_clients.For(name); };
  }
  controllers::ControllerManager manager(o);
  std::stop_source stop;
  util::Status result;
  std::thread runner([&] {
    result = manager.Run(stop.get_token());
    // Ended on its own (a leader that lost its lease): the process exits 1, as upstream's does.
    if (!stop.stop_requested()) RequestShutdown();
  });
  spdlog::info("controller-manager: running");
  WaitForShutdownSignal();
  stop.request_stop();
  runner.join();
  if (!result.ok()) {
    spdlog::error("controller-manager: {}", result.ToString());
    return 1;
  }
  return 0;
}

}  // namespace

void AddNodeMonitorGracePeriodFlag(CLI::App* sub, std::chrono::seconds* grace) {
  AddDurationFlag(sub, "--node-monitor-grace-period", grace, std::chrono::nanoseconds(1),
                  "How long a node may stop heartbeating before it is marked Unknown and tainted")
      ->default_str("50s");
}

void AddLeaderElectionFlags(CLI::App* sub, client::LeaderElectionTimings* timings) {
  // Any duration parses here; CheckLeaderElectionFlags says what is wrong with the three together.
  auto add = [sub](const std::string& name, std::chrono::milliseconds* out,
                   const std::string& help) {
    AddDurationFlag(sub, name, out, std::chrono::nanoseconds::min(), help)
        ->default_str(
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(*out).count()) + "s");
  };
  add("--leader-elect-lease-duration", &timings->lease_duration,
      "How long a standby waits, after the leader's last renewal it saw, before taking over "
      "(whole seconds are recorded in the Lease)");
  add("--leader-elect-renew-deadline", &timings->renew_deadline,
      "How long the leader keeps retrying a renewal before it steps down; less than the lease "
      "duration");
  add("--leader-elect-retry-period", &timings->retry_period,
      "How often candidates try to acquire and the leader renews");
}

bool CheckLeaderElectionFlags(const char* component, const client::LeaderElectionTimings& timings) {
  util::Status s = client::ValidateLeaderElectionTimings(timings);
  if (s.ok()) return true;
  spdlog::error(
      "{}: {} (flags --leader-elect-lease-duration, --leader-elect-renew-deadline, "
      "--leader-elect-retry-period)",
      component, s.message());
  return false;
}

void AddNodeMonitorPeriodFlag(CLI::App* sub, std::chrono::milliseconds* period) {
  AddDurationFlag(sub, "--node-monitor-period", period, std::chrono::milliseconds(1),
                  "How often the node lifecycle controller checks node health (at least 1ms)")
      ->default_str("5s");
}

void RegisterControllerManager(CLI::App& app) {
  auto flags = std::make_shared<ControllerManagerFlags>();
  CLI::App* sub = app.add_subcommand("controller-manager", "Run the controllers alone");
  sub->add_option("--kubeconfig", flags->kubeconfig, "Kubeconfig of the API server")->required();
  sub->add_option("--controllers", flags->controllers,
                  "Comma-separated controllers to run; * = all, -name = all but name")
      ->capture_default_str();
  sub->add_option("--workers", flags->workers, "Workers per controller")->capture_default_str();
  sub->add_option("--use-service-account-credentials", flags->use_service_account_credentials,
                  "Run each controller as the ServiceAccount kube-system/<controller> (upstream's "
                  "system:controller:* roles)")
      ->capture_default_str();
  sub->add_option("--root-ca-file", flags->root_ca_file,
                  "CA bundle (PEM) published in every namespace as the ConfigMap kube-root-ca.crt "
                  "(default: the CA the kubeconfig trusts)");
  sub->add_option("--leader-elect", flags->leader_elect,
                  "Elect a leader among replicas through a Lease")
      ->capture_default_str();
  AddLeaderElectionFlags(sub, &flags->leader_election);
  AddNodeMonitorGracePeriodFlag(sub, &flags->node_monitor_grace_period);
  AddNodeMonitorPeriodFlag(sub, &flags->node_monitor_period);
  sub->add_option("--fault-watch-delay", flags->fault_watch_delay_seconds,
                  "Fault injection: deliver every watch event this many seconds late (a stale "
                  "informer cache; docs/FAULTS.md)")
      ->capture_default_str();
  sub->callback([flags] { SetExitCode(RunControllerManager(*flags)); });
}

}  // namespace converge::cmd
