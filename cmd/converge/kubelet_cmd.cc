// converge kubelet: simulated nodes against any API server.
#include <spdlog/spdlog.h>

#include <condition_variable>
#include <mutex>
#include <sstream>
#include <thread>

#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "commands.h"
#include "kubelet/kubelet.h"
#include "kubelet/pod_spec.h"

namespace converge::cmd {

namespace {

struct KubeletFlags {
  std::string kubeconfig;
  int nodes = 1;
  std::string node_prefix = "converge-node";
  int first_node_index = 0;
  std::string node_ip;
  std::string listen = "127.0.0.1:0";
  std::string cpu = "16";
  std::string memory = "64Gi";
  int max_pods = 110;
  std::string node_labels;
  double pull_seconds = 0.2;
  int node_lease_duration_seconds = 40;
  int heartbeat_workers = 4;
  int status_workers = 4;
  bool pod_events = true;
  bool node_events = true;
  int stats_interval = 0;
  bool enable_fault_injection = false;
};

int RunKubelet(const KubeletFlags& f) {
  if (f.node_lease_duration_seconds <= 0) {
    spdlog::error("kubelet: --node-lease-duration-seconds must be greater than 0, got {}",
                  f.node_lease_duration_seconds);
    return 1;
  }
  BlockShutdownSignals();
  auto config = client::LoadRestConfig(f.kubeconfig);
  if (!config.ok()) {
    spdlog::error("loading {}: {}", f.kubeconfig, config.status().ToString());
    return 1;
  }
  config->user_agent = "kubelet/v1.32.0 (linux/amd64) kubernetes/converge";
  auto rest = client::RestClient::ForConfig(*config);
  if (!rest.ok()) {
    spdlog::error("{}", rest.status().ToString());
    return 1;
  }
  kubelet::KubeletOptions o;
  o.client = rest->get();
  o.nodes = f.nodes;
  o.node_prefix = f.node_prefix;
  o.first_node_index = f.first_node_index;
  o.node_ip = f.node_ip;
  o.listen = f.listen;
  auto cpu = kubelet::ParseQuantityMilli(f.cpu);
  auto memory = kubelet::ParseQuantityMilli(f.memory);
  if (!cpu || !memory || *cpu <= 0 || *memory <= 0 || f.max_pods <= 0 || f.nodes <= 0) {
    spdlog::error("--nodes, --cpu, --memory and --max-pods must be positive quantities");
    return 1;
  }
  o.capacity.cpu_milli = *cpu;
  o.capacity.memory_bytes = *memory / 1000;
  o.capacity.pods = f.max_pods;
  std::stringstream labels(f.node_labels);
  std::string item;
  while (std::getline(labels, item, ',')) {
    size_t eq = item.find('=');
    if (item.empty()) continue;
    if (eq == std::string::npos) {
      spdlog::error("--node-labels: expected key=value, got {}", item);
      return 1;
    }
    o.node_labels[item.substr(0, eq)] = item.substr(eq + 1);
  }
  o.machine.default_pull_duration = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(f.pull_seconds));
  o.lease_duration_seconds = f.node_lease_duration_seconds;
  o.lease_renew_interval = kubelet::NodeLeaseRenewInterval(f.node_lease_duration_seconds);
  o.heartbeat_workers = f.heartbeat_workers;
  o.status_workers = f.status_workers;
  o.pod_events = f.pod_events;
  o.node_events = f.node_events;
  o.enable_fault_injection = f.enable_fault_injection;

  kubelet::Kubelet k(o);
  std::stop_source stop;
  util::Status result;
  std::thread runner([&] { result = k.Run(stop.get_token()); });
  std::jthread stats;
  if (f.stats_interval > 0) {
    stats = std::jthread([&k, interval = f.stats_interval](std::stop_token st) {
      std::mutex m;
      std::condition_variable_any cv;
      std::unique_lock lock(m);
      while (!cv.wait_for(lock, st, std::chrono::seconds(interval), [] { return false; })) {
        if (st.stop_requested()) break;
        kubelet::Kubelet::Stats s = k.stats();
        spdlog::info(
            "kubelet: stats pods={} lease_renewals={} lease_failures={} node_status_posts={} "
            "pod_status_patches={} pod_deletes={} write_retries={} syncs={} events_dropped={}",
            s.pods, s.heartbeats.lease_renewals, s.heartbeats.lease_failures,
            s.heartbeats.status_posts, s.writes.patches, s.writes.deletes, s.writes.retries,
            s.syncs, s.events_dropped);
      }
    });
  }
  WaitForShutdownSignal();
  stats = std::jthread();
  spdlog::info("kubelet: shutting down");
  stop.request_stop();
  runner.join();
  if (!result.ok()) {
    spdlog::error("kubelet: {}", result.ToString());
    return 1;
  }
  return 0;
}

}  // namespace

void AddNodeLeaseDurationFlag(CLI::App* sub, int* seconds) {
  sub->add_option("--node-lease-duration-seconds", *seconds,
                  "leaseDurationSeconds of each node's Lease (upstream's kubelet "
                  "nodeLeaseDurationSeconds); the Lease is renewed every quarter of it")
      ->capture_default_str();
}

void RegisterKubelet(CLI::App& app) {
  auto f = std::make_shared<KubeletFlags>();
  CLI::App* sub = app.add_subcommand("kubelet", "Run simulated nodes (a kubelet per node)");
  sub->add_option("--kubeconfig", f->kubeconfig, "Kubeconfig of the API server")->required();
  sub->add_option("--nodes", f->nodes, "How many nodes to carry")->capture_default_str();
  sub->add_option("--node-prefix", f->node_prefix, "Nodes are named <prefix>-<index>")
      ->capture_default_str();
  sub->add_option("--first-node-index", f->first_node_index,
                  "Index of the first node (also picks pod CIDRs: keep ranges of kubelets "
                  "sharing a cluster apart)")
      ->capture_default_str();
  sub->add_option("--node-ip", f->node_ip, "InternalIP of every node (default: the --listen host)");
  sub->add_option("--listen", f->listen,
                  "HOST:PORT of the kubelet API (logs); the API server proxies `kubectl logs` "
                  "here")
      ->capture_default_str();
  sub->add_option("--cpu", f->cpu, "CPU capacity of each node")->capture_default_str();
  sub->add_option("--memory", f->memory, "Memory capacity of each node")->capture_default_str();
  sub->add_option("--max-pods", f->max_pods, "Pod capacity of each node")->capture_default_str();
  sub->add_option("--node-labels", f->node_labels, "Extra labels: k1=v1,k2=v2");
  sub->add_option("--pull-seconds", f->pull_seconds,
                  "How long an image pull takes (sim.converge.io/pull-seconds overrides)")
      ->capture_default_str();
  AddNodeLeaseDurationFlag(sub, &f->node_lease_duration_seconds);
  sub->add_option("--heartbeat-workers", f->heartbeat_workers,
                  "Threads renewing leases and posting node status")
      ->capture_default_str();
  sub->add_option("--status-workers", f->status_workers, "Threads writing pod status")
      ->capture_default_str();
  sub->add_flag("!--no-pod-events", f->pod_events,
                "Do not record pod events (Pulling, Created, Started, ...)");
  sub->add_flag("!--no-node-events", f->node_events, "Do not record node events");
  sub->add_option("--stats-interval", f->stats_interval,
                  "Log counters (leases renewed, status writes, ...) every this many seconds; 0: "
                  "never")
      ->capture_default_str();
  sub->add_flag("--enable-fault-injection", f->enable_fault_injection,
                "Serve POST /converge/faults/heartbeats?node=N&paused=true|false on --listen "
                "(docs/FAULTS.md)");
  sub->callback([f] { SetExitCode(RunKubelet(*f)); });
}

}  // namespace converge::cmd
