// pod_writes_bench: the API writes that carry one pod to Running in `converge bench e2e`, one by
// one, each through the in-process transport and the whole handler chain (authentication, RBAC
// and the node authorizer, admission, managedFields, validation, the store): the ReplicaSet
// controller's create, the scheduler's binding, the kubelet's two status patches
// (ContainerCreating, then Running and Ready) and a Lease renewal of the pod's node.
//
// Made to be read under callgrind, whose instruction counts a noisy host cannot move: each kind
// of write is its own function (PodWrites*), so its inclusive cost divided by its calls is the
// cost of one such write on the calling thread (the store's threads are counted apart).
//
//   build/bench/pod_writes_bench [--pods 2000] [--nodes 50] [--dir /tmp]
//   valgrind --tool=callgrind --callgrind-out-file=cg.out build/bench/pod_writes_bench --pods 300
//
// The store runs without fsync and with a 1 GiB map (valgrind cannot map the default 64 GiB).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "client/api_errors.h"
#include "client/rest_client.h"
#include "kubelet/node_object.h"
#include "kubelet/pod_status.h"
#include "server/control_plane.h"
#include "util/time_format.h"

namespace converge {
namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

const api::GroupVersionResource kPods{"", "v1", "pods"};
const api::GroupVersionResource kNodes{"", "v1", "nodes"};
const api::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};

struct Flags {
  int pods = 2000;
  int nodes = 50;
  std::string dir = std::filesystem::temp_directory_path().string();
};

struct Node {
  std::string name;
  std::string uid;
  std::string lease_rv;
  std::unique_ptr<client::RestClient> client;
};

// The pod a ReplicaSet controller creates for a one-container Deployment (as in bench e2e).
api::Object ReplicaSetPod(const std::string& name) {
  json::object pod = json::parse(R"({
    "apiVersion":"v1","kind":"Pod",
    "metadata":{"labels":{"app":"web","pod-template-hash":"7fdb69d896"},
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7fdb69d896",
        "uid":"c410e9d3-c911-48a9-a2a1-2176caf2b5ed","controller":true,
        "blockOwnerDeletion":true}]},
    "spec":{"containers":[{"name":"pause","image":"registry.k8s.io/pause:3.9",
      "imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log",
      "terminationMessagePolicy":"File","resources":{}}],
      "restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
      "securityContext":{},"schedulerName":"default-scheduler"}})")
                         .as_object();
  pod["metadata"].as_object()["name"] = name;
  return api::Object(std::move(pod));
}

json::object Condition(const char* type, const char* status, const std::string& at,
                       const char* reason = nullptr, const char* message = nullptr) {
  json::object c{
      {"type", type}, {"status", status}, {"lastProbeTime", nullptr}, {"lastTransitionTime", at}};
  if (reason) c["reason"] = reason;
  if (message) c["message"] = message;
  return c;
}

// The statuses the simulated kubelet writes: the container being created, then running.
json::object KubeletStatus(bool running, int i, const std::string& now) {
  const char* unready = "containers with unready status: [pause]";
  json::object st;
  st["phase"] = running ? "Running" : "Pending";
  json::array conds;
  conds.push_back(Condition("PodReadyToStartContainers", running ? "True" : "False", now));
  conds.push_back(Condition("Initialized", "True", now));
  conds.push_back(running ? Condition("Ready", "True", now)
                          : Condition("Ready", "False", now, "ContainersNotReady", unready));
  conds.push_back(running
                      ? Condition("ContainersReady", "True", now)
                      : Condition("ContainersReady", "False", now, "ContainersNotReady", unready));
  conds.push_back(Condition("PodScheduled", "True", now));
  st["conditions"] = std::move(conds);
  st["hostIP"] = "127.0.0.1";
  st["hostIPs"] = json::array{json::object{{"ip", "127.0.0.1"}}};
  if (running) {
    const std::string ip = "10.245." + std::to_string(i / 250) + "." + std::to_string(i % 250);
    st["podIP"] = ip;
    st["podIPs"] = json::array{json::object{{"ip", ip}}};
  }
  st["startTime"] = now;
  json::object cs{{"name", "pause"},
                  {"image", "registry.k8s.io/pause:3.9"},
                  {"imageID", ""},
                  {"ready", running},
                  {"restartCount", 0},
                  {"started", running},
                  {"lastState", json::object{}}};
  if (running) {
    cs["containerID"] = "converge-sim://" + std::string(64, 'a');
    cs["imageID"] =
        "registry.k8s.io/pause@sha256:"
        "4e9b2c80d00db0d0031cb867d206850394d97cae0447ce58368056ebcd0ee1aa";
    cs["state"] = json::object{{"running", json::object{{"startedAt", now}}}};
  } else {
    cs["state"] = json::object{{"waiting", json::object{{"reason", "ContainerCreating"}}}};
  }
  st["containerStatuses"] = json::array{std::move(cs)};
  st["qosClass"] = "BestEffort";
  return st;
}

// One function per kind of write (noinline: callgrind attributes each its own cost).
[[gnu::noinline]] bool PodWritesCreate(client::RestClient& c, const std::string& name,
                                       std::string* uid) {
  auto created = c.Create(kPods, "default", ReplicaSetPod(name));
  if (!created.ok()) {
    std::fprintf(stderr, "create %s: %s\n", name.c_str(), created.status().ToString().c_str());
    return false;
  }
  *uid = std::string(created->uid());
  return true;
}

[[gnu::noinline]] bool PodWritesBind(client::RestClient& c, const std::string& name,
                                     const std::string& uid, const std::string& node) {
  json::object binding{
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", json::object{{"name", name}, {"namespace", "default"}, {"uid", uid}}},
      {"target", json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  client::HttpRequest req;
  req.method = "POST";
  req.path = client::ResourcePath(kPods, "default", name, "binding");
  req.headers = {{"content-type", "application/json"}, {"accept", "application/json"}};
  req.body = json::serialize(binding);
  auto resp = c.Do(std::move(req));
  return resp.ok() && resp->status == 201;
}

// A raw PATCH of pods/status, as the kubelet's status writer sends it. Forbidden until the node
// authorizer sees the binding (it reads the watch cache): retried then, and counted.
[[gnu::noinline]] bool PodWritesStatus(client::RestClient& c, const std::string& name,
                                       const std::string& patch, int* forbidden) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    client::HttpRequest r;
    r.method = "PATCH";
    r.path = client::ResourcePath(kPods, "default", name, "status");
    r.headers = {{"accept", "application/json"},
                 {"content-type", "application/strategic-merge-patch+json"}};
    r.body = patch;
    auto resp = c.Do(std::move(r));
    if (!resp.ok()) return false;
    if (resp->status == 200) return true;
    if (resp->status != 403) return false;
    ++*forbidden;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

[[gnu::noinline]] bool PodWritesLease(Node& n) {
  auto updated = n.client->Update(kLeases, kubelet::BuildLease(n.name, n.uid, n.lease_rv, 40,
                                                               std::chrono::system_clock::now()));
  if (!updated.ok()) return false;
  n.lease_rv = std::string(updated->resource_version());
  return true;
}

int Run(const Flags& f) {
  const std::string dir = f.dir + "/pod-writes-bench-" + std::to_string(getpid());
  server::ControlPlaneOptions cpo;
  cpo.data_dir = dir;
  cpo.listen = "127.0.0.1:0";
  cpo.fsync = false;
  cpo.store_map_size = size_t{1} << 30;
  int rc = 0;
  {
    server::ControlPlane cp(cpo);
    if (auto s = cp.Start(); !s.ok()) {
      std::fprintf(stderr, "control plane: %s\n", s.ToString().c_str());
      return 1;
    }
    // As in the all-in-one server: the ReplicaSet controller writes as its ServiceAccount.
    auto controllers =
        cp.InProcessClient("system:serviceaccount:kube-system:replicaset-controller",
                           {"system:serviceaccounts", "system:serviceaccounts:kube-system"});
    auto scheduler = cp.InProcessClient("system:kube-scheduler", {});
    std::vector<Node> nodes(f.nodes);
    const auto now = std::chrono::system_clock::now();
    for (int i = 0; i < f.nodes; ++i) {
      Node& n = nodes[i];
      n.name = "converge-node-" + std::to_string(i);
      n.client = cp.InProcessClient("system:node:" + n.name, {"system:nodes"});
      kubelet::NodeConfig config{.name = n.name, .index = i, .internal_ip = "127.0.0.1"};
      auto node = n.client->Create(kNodes, "", kubelet::BuildNode(config, now));
      if (!node.ok()) {
        std::fprintf(stderr, "node %s: %s\n", n.name.c_str(), node.status().ToString().c_str());
        return 1;
      }
      n.uid = std::string(node->uid());
      auto lease = n.client->Create(kLeases, "kube-node-lease",
                                    kubelet::BuildLease(n.name, n.uid, "", 40, now));
      if (!lease.ok()) return 1;
      n.lease_rv = std::string(lease->resource_version());
    }

    struct Count {
      const char* what;
      int ok = 0;
      int failed = 0;
      double seconds = 0;
    };
    Count creates{"create"}, binds{"binding"}, pending{"status (creating)"},
        running{"status (running)"}, leases{"lease renewal"};
    int forbidden = 0;
    auto timed = [](Count& c, auto&& write) {
      const Clock::time_point a = Clock::now();
      write() ? ++c.ok : ++c.failed;
      c.seconds += std::chrono::duration<double>(Clock::now() - a).count();
    };
    // Phase by phase, as the components see each other's writes through watches: the next
    // write to a pod starts from a version the watch cache holds (a pause lets it catch up),
    // not from one the cache has yet to see (which would send the update and the node
    // authorizer to the store).
    auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(500)); };
    std::vector<std::string> names(f.pods), uids(f.pods);
    for (int i = 0; i < f.pods; ++i) {
      names[i] = "web-7fdb69d896-" + std::to_string(i);
      timed(creates, [&] { return PodWritesCreate(*controllers, names[i], &uids[i]); });
    }
    settle();
    for (int i = 0; i < f.pods; ++i) {
      const Node& node = nodes[i % f.nodes];
      timed(binds, [&] { return PodWritesBind(*scheduler, names[i], uids[i], node.name); });
    }
    settle();
    const std::string at = util::FormatRfc3339(std::chrono::system_clock::now());
    for (bool run : {false, true}) {
      Count& count = run ? running : pending;
      for (int i = 0; i < f.pods; ++i) {
        Node& node = nodes[i % f.nodes];
        const std::string patch = kubelet::BuildStatusPatch(uids[i], KubeletStatus(run, i, at));
        timed(count, [&] { return PodWritesStatus(*node.client, names[i], patch, &forbidden); });
      }
      settle();
    }
    for (int i = 0; i < f.pods; ++i) {
      timed(leases, [&] { return PodWritesLease(nodes[i % f.nodes]); });
    }
    for (const Count* c : {&creates, &binds, &pending, &running, &leases}) {
      std::printf("%-18s %6d ok %4d failed  %8.1f us each (wall)\n", c->what, c->ok, c->failed,
                  c->ok ? c->seconds * 1e6 / c->ok : 0.0);
      if (c->failed) rc = 1;
    }
    std::printf("status patches retried after 403 (node authorizer not yet aware): %d\n",
                forbidden);
    cp.Stop();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}

}  // namespace
}  // namespace converge

int main(int argc, char** argv) {
  converge::Flags f;
  CLI::App app{"The API writes of one pod's start, for callgrind"};
  app.add_option("--pods", f.pods, "Pods to carry through create, binding and status")
      ->capture_default_str();
  app.add_option("--nodes", f.nodes, "Nodes (each with its Lease)")->capture_default_str();
  app.add_option("--dir", f.dir, "Where the store lives")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);
  return converge::Run(f);
}
