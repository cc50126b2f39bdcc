// converge scheduler: the scheduler alone, against any API server.
#include <spdlog/spdlog.h>

#include <thread>

#include "apiserver/http_server.h"
#include "client/kubeconfig.h"
#include "client/leader_elector.h"
#include "client/rest_client.h"
#include "commands.h"
#include "scheduler/scheduler.h"
#include "util/metrics.h"

namespace converge::cmd {

namespace {

struct SchedulerFlags {
  std::string kubeconfig;
  std::string scheduler_name = "default-scheduler";
  bool leader_elect = true;
  client::LeaderElectionTimings leader_election;
  int percentage_of_nodes_to_score = 0;
  int bind_workers = 16;
  double pod_initial_backoff_seconds = 1;
  double pod_max_backoff_seconds = 10;
  std::string metrics_bind_address;
};

// /metrics, /healthz, /livez and /readyz (ready once the caches synced and scheduling runs).
apiserver::Response Serve(const apiserver::Request& req) {
  apiserver::Response resp;
  if (req.path == "/metrics") {
    resp.content_type = std::string(util::kPrometheusContentType);
    resp.body = util::DefaultRegistry().Render();
  } else if (req.path == "/healthz" || req.path == "/livez" || req.path == "/readyz") {
    resp.content_type = "text/plain";
    resp.body = "ok";
  } else {
    resp.status = 404;
    resp.content_type = "text/plain";
    resp.body = "404 page not found\n";
  }
  return resp;
}

int RunScheduler(const SchedulerFlags& f) {
  if (f.leader_elect && !CheckLeaderElectionFlags("scheduler", f.leader_election)) return 1;
  BlockShutdownSignals();
  auto config = client::LoadRestConfig(f.kubeconfig);
  if (!config.ok()) {
    spdlog::error("loading {}: {}", f.kubeconfig, config.status().ToString());
    return 1;
  }
  config->user_agent = "kube-scheduler/v1.32.0 (linux/amd64) kubernetes/converge";
  auto rest = client::RestClient::ForConfig(*config);
  if (!rest.ok()) {
    spdlog::error("{}", rest.status().ToString());
    return 1;
  }
  std::unique_ptr<apiserver::HttpServer> http;
  if (!f.metrics_bind_address.empty()) {
    apiserver::HttpServerOptions ho;
    ho.listen = f.metrics_bind_address;
    ho.io_threads = 1;
    ho.worker_threads = 2;
    ho.handler = [](apiserver::Request& r) { return Serve(r); };
    http = std::make_unique<apiserver::HttpServer>(ho);
    if (util::Status s = http->Start(); !s.ok()) {
      spdlog::error("serving metrics on {}: {}", f.metrics_bind_address, s.ToString());
      return 1;
    }
    spdlog::info("scheduler: metrics on port {}", http->port());
  }
  scheduler::SchedulerOptions o;
  o.client = rest->get();
  o.scheduler_name = f.scheduler_name;
  o.leader_elect = f.leader_elect;
  o.leader_election = f.leader_election;
  o.percentage_of_nodes_to_score = f.percentage_of_nodes_to_score;
  o.bind_workers = f.bind_workers;
  o.pod_initial_backoff = std::chrono::duration_cast<util::Clock::Duration>(
      std::chrono::duration<double>(f.pod_initial_backoff_seconds));
  o.pod_max_backoff = std::chrono::duration_cast<util::Clock::Duration>(
      std::chrono::duration<double>(f.pod_max_backoff_seconds));
  scheduler::Scheduler sched(o);
  std::stop_source stop;
  util::Status result;
  std::thread runner([&] {
    result = sched.Run(stop.get_token());
    // Ended on its own (a leader that lost its lease): the process exits 1, as upstream's does.
    if (!stop.stop_requested()) RequestShutdown();
  });
  spdlog::info("scheduler: running as {}", f.scheduler_name);
  WaitForShutdownSignal();
  stop.request_stop();
  runner.join();
  if (http) http->Stop();
  if (!result.ok()) {
    spdlog::error("scheduler: {}", result.ToString());
    return 1;
  }
  return 0;
}

}  // namespace

void RegisterScheduler(CLI::App& app) {
  auto flags = std::make_shared<SchedulerFlags>();
  CLI::App* sub = app.add_subcommand("scheduler", "Run the scheduler alone");
  sub->add_option("--kubeconfig", flags->kubeconfig, "Kubeconfig of the API server")->required();
  sub->add_option("--scheduler-name", flags->scheduler_name,
                  "Schedule the pods whose spec.schedulerName is this")
      ->capture_default_str();
  sub->add_option("--leader-elect", flags->leader_elect,
                  "Elect a leader among replicas through the kube-system/kube-scheduler Lease")
      ->capture_default_str();
  AddLeaderElectionFlags(sub, &flags->leader_election);
  sub->add_option("--percentage-of-nodes-to-score", flags->percentage_of_nodes_to_score,
                  "Stop filtering once this share of nodes fits (0: adaptive, as upstream)")
      ->capture_default_str();
  sub->add_option("--bind-workers", flags->bind_workers, "Bindings written in parallel")
      ->capture_default_str();
  sub->add_option("--pod-initial-backoff-seconds", flags->pod_initial_backoff_seconds,
                  "Backoff after a pod's first failed attempt")
      ->capture_default_str();
  sub->add_option("--pod-max-backoff-seconds", flags->pod_max_backoff_seconds,
                  "Largest backoff between attempts")
      ->capture_default_str();
  sub->add_option("--metrics-bind-address", flags->metrics_bind_address,
                  "HOST:PORT serving /metrics and /healthz (empty: off; port 0 picks one)");
  sub->callback([flags] { SetExitCode(RunScheduler(*flags)); });
}

}  // namespace converge::cmd
