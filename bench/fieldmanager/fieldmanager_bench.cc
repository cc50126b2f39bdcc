// What managedFields tracking and server-side apply add to a write: every create, update and
// patch pays UpdateManagedFields; every apply pays ServerSideApply. The BM_Handle* cases run whole
// requests through APIServer::Handle in-process (routing, decoding, the read-modify-write) on an
// embedded store; they are no-op writes, so no fsync hides the CPU cost.
//   build/bench/fieldmanager/fieldmanager_bench
#include <benchmark/benchmark.h>

#include <chrono>
#include <string_view>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "api/object.h"
#include "api/schema_registry.h"
#include "apiserver/fieldmanager.h"
#include "apiserver/server.h"
#include "store/embedded_store.h"
#include "store/store_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

// `kubectl create deployment web --image=nginx:1.27` after defaulting (about 1 KB of JSON).
constexpr std::string_view kDeployment = R"({
  "apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"web","namespace":"default","uid":"u-1","resourceVersion":"1","generation":1,
    "creationTimestamp":"2025-01-01T00:00:00Z","labels":{"app":"web"}},
  "spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},
    "template":{"metadata":{"labels":{"app":"web"}},
      "spec":{"containers":[{"name":"nginx","image":"nginx:1.27","resources":{},
          "ports":[{"containerPort":80,"protocol":"TCP"}],
          "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
          "imagePullPolicy":"IfNotPresent"}],
        "restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
        "securityContext":{},"schedulerName":"default-scheduler"}},
    "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},
    "revisionHistoryLimit":10,"progressDeadlineSeconds":600},
  "status":{}})";

constexpr std::string_view kApplied = R"({"apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},
  "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
    "template":{"metadata":{"labels":{"app":"web"}},
      "spec":{"containers":[{"name":"nginx","image":"nginx:1.27",
        "ports":[{"containerPort":80}]}]}}}})";

const api::TypeSchema* Schema() {
  return api::BuiltinSchemas().FindType("io.k8s.api.apps.v1.Deployment");
}

ManagedFieldsContext Ctx(std::string manager) {
  return ManagedFieldsContext{
      std::move(manager), "", "apps/v1", std::chrono::system_clock::now(), {}};
}

api::Object Parse(std::string_view s) {
  return api::Object(json::parse(s).as_object());
}

void BM_UpdateManagedFieldsCreate(benchmark::State& state) {
  const api::Object obj = Parse(kDeployment);
  for (auto _ : state) {
    api::Object o = obj;
    UpdateManagedFields(Schema(), nullptr, o, Ctx("kubectl-create"));
    benchmark::DoNotOptimize(o);
  }
}
BENCHMARK(BM_UpdateManagedFieldsCreate)->Unit(benchmark::kMicrosecond);

void BM_UpdateManagedFieldsScale(benchmark::State& state) {
  api::Object created = Parse(kDeployment);
  UpdateManagedFields(Schema(), nullptr, created, Ctx("kubectl-create"));
  api::Object scaled = created;
  scaled.mutable_doc()["spec"].as_object()["replicas"] = 3;
  for (auto _ : state) {
    api::Object o = scaled;
    UpdateManagedFields(Schema(), &created, o, Ctx("kubectl"));
    benchmark::DoNotOptimize(o);
  }
}
BENCHMARK(BM_UpdateManagedFieldsScale)->Unit(benchmark::kMicrosecond);

// A pod as the ReplicaSet controller created it and the scheduler bound it, and the kubelet's
// status write that makes it Running and Ready (about 2 KB of JSON each).
constexpr std::string_view kPendingPod = R"({
  "apiVersion":"v1","kind":"Pod",
  "metadata":{"name":"web-7d4b9c-x2x9q","generateName":"web-7d4b9c-","namespace":"default",
    "uid":"u-2","resourceVersion":"7","creationTimestamp":"2025-01-01T00:00:00Z",
    "labels":{"app":"web","pod-template-hash":"7d4b9c"},
    "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d4b9c",
      "uid":"u-3","controller":true,"blockOwnerDeletion":true}]},
  "spec":{"containers":[{"name":"nginx","image":"nginx:1.27","resources":{},
      "ports":[{"containerPort":80,"protocol":"TCP"}],
      "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
      "imagePullPolicy":"IfNotPresent"}],
    "restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
    "securityContext":{},"schedulerName":"default-scheduler","nodeName":"node-17",
    "serviceAccountName":"default","enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority",
    "priority":0,"tolerations":[
      {"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",
       "tolerationSeconds":300},
      {"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute",
       "tolerationSeconds":300}]},
  "status":{"phase":"Pending","qosClass":"BestEffort","conditions":[
    {"type":"PodScheduled","status":"True","lastProbeTime":null,
     "lastTransitionTime":"2025-01-01T00:00:00Z"}]}})";

constexpr std::string_view kRunningStatus = R"({"phase":"Running","qosClass":"BestEffort",
  "hostIP":"10.0.0.17","hostIPs":[{"ip":"10.0.0.17"}],"podIP":"10.244.17.5",
  "podIPs":[{"ip":"10.244.17.5"}],"startTime":"2025-01-01T00:00:01Z","conditions":[
  {"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,
   "lastTransitionTime":"2025-01-01T00:00:02Z"},
  {"type":"Initialized","status":"True","lastProbeTime":null,
   "lastTransitionTime":"2025-01-01T00:00:01Z"},
  {"type":"Ready","status":"True","lastProbeTime":null,
   "lastTransitionTime":"2025-01-01T00:00:02Z"},
  {"type":"ContainersReady","status":"True","lastProbeTime":null,
   "lastTransitionTime":"2025-01-01T00:00:02Z"},
  {"type":"PodScheduled","status":"True","lastProbeTime":null,
   "lastTransitionTime":"2025-01-01T00:00:00Z"}],
  "containerStatuses":[{"name":"nginx","state":{"running":{"startedAt":"2025-01-01T00:00:02Z"}},
    "lastState":{},"ready":true,"restartCount":0,"image":"nginx:1.27",
    "imageID":"docker-pullable://nginx@sha256:0123456789abcdef","containerID":"containerd://c1",
    "started":true}]})";

void BM_UpdateManagedFieldsPodStatus(benchmark::State& state) {
  const api::TypeSchema* schema = api::BuiltinSchemas().FindType("io.k8s.api.core.v1.Pod");
  api::Object pending = Parse(kPendingPod);
  UpdateManagedFields(
      schema, nullptr, pending,
      ManagedFieldsContext{
          "kube-controller-manager", "", "v1", std::chrono::system_clock::now(), {}});
  api::Object running = pending;
  running.mutable_doc()["status"] = json::parse(kRunningStatus);
  const ManagedFieldsContext kubelet{
      "kubelet", "status", "v1", std::chrono::system_clock::now(), {}};
  for (auto _ : state) {
    api::Object o = running;
    UpdateManagedFields(schema, &pending, o, kubelet);
    benchmark::DoNotOptimize(o);
  }
}
BENCHMARK(BM_UpdateManagedFieldsPodStatus)->Unit(benchmark::kMicrosecond);

void BM_ServerSideApplyChange(benchmark::State& state) {
  api::Object live = Parse(kDeployment);
  UpdateManagedFields(Schema(), nullptr, live, Ctx("kubectl-create"));
  const api::Object applied = Parse(kApplied);
  for (auto _ : state) {
    auto r = ServerSideApply(Schema(), &live, applied, Ctx("ci"), /*force=*/true);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ServerSideApplyChange)->Unit(benchmark::kMicrosecond);

void BM_ServerSideApplyNoop(benchmark::State& state) {
  api::Object live = Parse(kDeployment);
  UpdateManagedFields(Schema(), nullptr, live, Ctx("kubectl-create"));
  const api::Object applied = Parse(kApplied);
  auto first = ServerSideApply(Schema(), &live, applied, Ctx("ci"), /*force=*/true);
  if (!first.ok()) {
    state.SkipWithError("first apply failed");
    return;
  }
  for (auto _ : state) {
    auto r = ServerSideApply(Schema(), &*first, applied, Ctx("ci"), /*force=*/false);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ServerSideApplyNoop)->Unit(benchmark::kMicrosecond);

// An API server on a fresh embedded store holding the Deployment `web`.
class InProcessServer {
 public:
  InProcessServer() {
    auto kv = store::OpenEmbeddedStore({.dir = dir_.path()});
    if (!kv.ok()) return;
    kv_ = std::move(*kv);
    APIServerOptions options;
    options.kv = kv_.get();
    options.compaction_interval = std::chrono::milliseconds(0);
    server_ = std::make_unique<APIServer>(options);
    if (!server_->Start().ok()) server_.reset();
  }
  ~InProcessServer() {
    if (server_) server_->Stop();
  }
  bool ok() const { return server_ != nullptr; }
  int Do(const std::string& method, const std::string& path, const std::string& query,
         const std::string& body, const std::string& content_type) {
    Request req;
    req.method = method;
    req.path = path;
    if (!query.empty()) req.query = {{"fieldManager", query}};
    req.headers = {{"user-agent", "bench/1"}, {"content-type", content_type}};
    req.body = body;
    req.in_process = true;
    req.user.name = "system:admin";
    req.user.groups = {"system:masters", "system:authenticated"};
    req.user.authenticated = true;
    return server_->Handle(req).status;
  }

 private:
  store::TempDir dir_;
  std::unique_ptr<store::KV> kv_;
  std::unique_ptr<APIServer> server_;
};

constexpr char kWeb[] = "/apis/apps/v1/namespaces/default/deployments/web";

void BM_HandleApplyNoop(benchmark::State& state) {
  InProcessServer s;
  const std::string body(kApplied);
  if (!s.ok() || s.Do("PATCH", kWeb, "ci", body, "application/apply-patch+yaml") != 201) {
    state.SkipWithError("setup failed");
    return;
  }
  for (auto _ : state) {
    if (s.Do("PATCH", kWeb, "ci", body, "application/apply-patch+yaml") != 200) {
      state.SkipWithError("apply failed");
      break;
    }
  }
}
BENCHMARK(BM_HandleApplyNoop)->Unit(benchmark::kMicrosecond);

void BM_HandleMergePatchNoop(benchmark::State& state) {
  InProcessServer s;
  if (!s.ok() ||
      s.Do("PATCH", kWeb, "ci", std::string(kApplied), "application/apply-patch+yaml") != 201) {
    state.SkipWithError("setup failed");
    return;
  }
  const std::string patch = R"({"spec":{"replicas":3}})";
  for (auto _ : state) {
    if (s.Do("PATCH", kWeb, "", patch, "application/merge-patch+json") != 200) {
      state.SkipWithError("patch failed");
      break;
    }
  }
}
BENCHMARK(BM_HandleMergePatchNoop)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace converge::apiserver

BENCHMARK_MAIN();
