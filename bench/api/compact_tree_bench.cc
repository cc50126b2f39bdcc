// compact_tree_bench: what making a shared object compact costs (api/json_view.h), against the
// plain copy and the parse it follows, and what reading it costs against reading the Boost.JSON
// tree: each build iteration makes the tree and frees it, as the watch cache does for every
// version of a pod it hands to informers; the reads are the path reads a component makes of a
// pod it is handed (the scheduler's, the kubelet's, the ReplicaSet controller's).
//
//   build/bench/compact_tree_bench --benchmark_repetitions=3
//
// The pod is one `converge bench e2e` runs (Running and Ready), as informers hold it: without
// metadata.managedFields. Linked with jemalloc (as the server is) to see the server's allocation
// costs.

#include <benchmark/benchmark.h>

#include <string>

#include "api/object.h"

namespace converge::api {
namespace {

const std::string& PodJson() {
  static const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"creationTimestamp":"2026-12-06T18:13:40Z","ge)"
      R"(nerateName":"web-7fdb69d896-","labels":{"app":"web","pod-template-hash":"7fdb69d896"},"nam)"
      R"(e":"web-7fdb69d896-2xrlk","namespace":"default","ownerReferences":[{"apiVersion":"apps/v1")"
      R"(,"blockOwnerDeletion":true,"controller":true,"kind":"ReplicaSet","name":"web-7fdb69d896",")"
      R"(uid":"bf3834a7-514a-45ea-90ec-abeec90424be"}],"resourceVersion":"305","uid":"c3bb408f-2087)"
      R"(-452d-8738-508357d54718"},"spec":{"containers":[{"image":"registry.k8s.io/pause:3.9","imag)"
      R"(ePullPolicy":"IfNotPresent","name":"pause","terminationMessagePath":"/dev/termination-log")"
      R"(,"terminationMessagePolicy":"File","volumeMounts":[{"mountPath":"/var/run/secrets/kubernet)"
      R"(es.io/serviceaccount","name":"kube-api-access-dqpfn","readOnly":true}]}],"dnsPolicy":"Clus)"
      R"(terFirst","enableServiceLinks":true,"nodeName":"converge-node-8","restartPolicy":"Always",)"
      R"("schedulerName":"default-scheduler","securityContext":{},"serviceAccount":"default","servi)"
      R"(ceAccountName":"default","terminationGracePeriodSeconds":30,"tolerations":[{"effect":"NoEx)"
      R"(ecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},{)"
      R"("effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","toleratio)"
      R"(nSeconds":300}],"volumes":[{"name":"kube-api-access-dqpfn","projected":{"defaultMode":420,)"
      R"("sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":)"
      R"({"items":[{"key":"ca.crt","path":"ca.crt"}],"name":"kube-root-ca.crt"}},{"downwardAPI":{"i)"
      R"(tems":[{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"},"path":"namespace")"
      R"(}]}}]}}]},"status":{"conditions":[{"lastTransitionTime":"2026-12-06T18:13:40Z","status":"T)"
      R"(rue","type":"PodReadyToStartContainers"},{"lastTransitionTime":"2026-12-06T18:13:40Z","sta)"
      R"(tus":"True","type":"Initialized"},{"lastTransitionTime":"2026-12-06T18:13:41Z","status":"T)"
      R"(rue","type":"Ready"},{"lastTransitionTime":"2026-12-06T18:13:41Z","status":"True","type":")"
      R"(ContainersReady"},{"lastTransitionTime":"2026-12-06T18:13:40Z","status":"True","type":"Pod)"
      R"(Scheduled"}],"containerStatuses":[{"containerID":"converge-sim://4831e3f1061bb024a9b2f2782)"
      R"(9a3d3b1f98fa673e7032c8683a14ec2e6f139af","image":"registry.k8s.io/pause:3.9","imageID":"re)"
      R"(gistry.k8s.io/pause@sha256:4e9b2c80d00db0d0031cb867d206850394d97cae0447ce58368056ebcd0ee1a)"
      R"(a","lastState":{},"name":"pause","ready":true,"restartCount":0,"started":true,"state":{"ru)"
      R"(nning":{"startedAt":"2026-12-06T18:13:41Z"}}}],"hostIP":"127.0.0.1","hostIPs":[{"ip":"127.)"
      R"(0.0.1"}],"phase":"Running","podIP":"10.244.8.2","podIPs":[{"ip":"10.244.8.2"}],"qosClass":)"
      R"("BestEffort","startTime":"2026-12-06T18:13:40Z"}})";
  return pod;
}

const Object& Pod() {
  static const Object pod = *Object::Parse(PodJson());
  return pod;
}

void BM_Parse(benchmark::State& state) {
  for (auto _ : state) {
    auto parsed = Object::Parse(PodJson());
    benchmark::DoNotOptimize(parsed);
  }
}
BENCHMARK(BM_Parse);

void BM_Copy(benchmark::State& state) {
  for (auto _ : state) {
    Object copy = Pod();
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_Copy);

void BM_CompactBuild(benchmark::State& state) {
  for (auto _ : state) {
    Object compact = Object::Compact(Pod().doc());
    benchmark::DoNotOptimize(compact);
  }
  state.counters["compact_bytes"] = static_cast<double>(CompactTree::Build(Pod().doc()).bytes());
}
BENCHMARK(BM_CompactBuild);

// The reads a component makes of a pod it is handed: a dozen paths, one array walked.
int64_t ReadPod(ObjectView pod) {
  int64_t n = 0;
  n += FindString(pod, {"metadata", "name"}).size();
  n += FindString(pod, {"metadata", "namespace"}).size();
  n += FindString(pod, {"spec", "nodeName"}).size();
  n += FindString(pod, {"spec", "schedulerName"}).size();
  n += FindInt(pod, {"spec", "terminationGracePeriodSeconds"});
  n += FindString(pod, {"status", "phase"}).size();
  n += FindString(pod, {"status", "podIP"}).size();
  for (View c : FindArray(pod, {"status", "conditions"})) {
    n += GetString(c.if_object(), "type").size() + GetString(c.if_object(), "status").size();
  }
  for (View c : FindArray(pod, {"spec", "containers"})) {
    n += GetString(c.if_object(), "image").size();
    n += FindObject(c.if_object(), {"resources", "requests"}).size();
  }
  for (View r : FindArray(pod, {"metadata", "ownerReferences"})) {
    n += FindBool(r.if_object(), {"controller"}) ? 1 : 0;
  }
  return n;
}

void BM_ReadTree(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ReadPod(Pod().doc()));
}
BENCHMARK(BM_ReadTree);

void BM_ReadCompact(benchmark::State& state) {
  const Object compact = Object::Compact(Pod().doc());
  for (auto _ : state) benchmark::DoNotOptimize(ReadPod(compact.view()));
}
BENCHMARK(BM_ReadCompact);

// A copy taken from a compact object and made writable (a controller editing what its informer
// holds): the tree is built from the compact form.
void BM_CopyFromCompact(benchmark::State& state) {
  const Object compact = Object::Compact(Pod().doc());
  for (auto _ : state) {
    Object copy = compact;
    benchmark::DoNotOptimize(copy.mutable_doc());
  }
}
BENCHMARK(BM_CopyFromCompact);

}  // namespace
}  // namespace converge::api

BENCHMARK_MAIN();
