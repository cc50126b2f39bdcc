// compress_bench: a stored value's compression with the store's built-in dictionary
// (store::CompressValue / DecompressValue) beside plain zstd level 1, as builds before the
// dictionary compressed (docs/PERFORMANCE.md, "A dictionary for stored values").
//
//   build/bench/compress_bench [--benchmark_repetitions=5]
//
// The values are a running pod of a Deployment and a node Lease as the API server stores them
// (compact JSON with managedFields, without resourceVersion), with names, images and labels that
// scripts/train-store-dictionary.sh does not use. The counters give each frame's size.
#include <benchmark/benchmark.h>
#include <zstd.h>

#include <string>

#include "store/record.h"

namespace converge::store {
namespace {

const std::string& Pod() {
  static const std::string pod =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"ledger-6f9d8c7b5-q4x2n",)"
      R"("generateName":"ledger-6f9d8c7b5-","namespace":"finance",)"
      R"("uid":"7a1c2e9f-3b4d-4f8a-9c61-0e2d5b7f8a13","creationTimestamp":"2026-12-06T12:00:01Z",)"
      R"("labels":{"app":"ledger","pod-template-hash":"6f9d8c7b5"},"ownerReferences":[)"
      R"({"apiVersion":"apps/v1","kind":"ReplicaSet","name":"ledger-6f9d8c7b5",)"
      R"("uid":"0b3e5d7f-9a1c-4e2b-8d4f-6a8c0e2b4d6f","controller":true,"blockOwnerDeletion":true}],)"
      R"("managedFields":[{"manager":"kube-controller-manager","operation":"Update",)"
      R"("apiVersion":"v1","time":"2026-12-06T12:00:01Z","fieldsType":"FieldsV1","fieldsV1":)"
      R"({"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},)"
      R"("f:pod-template-hash":{}},"f:ownerReferences":{".":{},)"
      R"("k:{\"uid\":\"0b3e5d7f-9a1c-4e2b-8d4f-6a8c0e2b4d6f\"}":{}}},"f:spec":{"f:containers":)"
      R"({"k:{\"name\":\"ledger\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},)"
      R"("f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},)"
      R"("f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},)"
      R"("f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}},{"manager":"kubelet",)"
      R"("operation":"Update","apiVersion":"v1","time":"2026-12-06T12:00:03Z",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{)"
      R"("k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},)"
      R"("f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":)"
      R"({".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},)"
      R"("f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}},)"
      R"("subresource":"status"}]},"spec":{"volumes":[{"name":"kube-api-access-x7k2p",)"
      R"("projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},)"
      R"({"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},)"
      R"({"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1",)"
      R"("fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],"containers":[)"
      R"({"name":"ledger","image":"quay.io/acme/ledger:4.2.0","resources":{},)"
      R"("volumeMounts":[{"name":"kube-api-access-x7k2p","readOnly":true,)"
      R"("mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],)"
      R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",)"
      R"("imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always",)"
      R"("terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",)"
      R"("serviceAccountName":"default","serviceAccount":"default","nodeName":"worker-0417",)"
      R"("securityContext":{},"schedulerName":"default-scheduler","tolerations":[)"
      R"({"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",)"
      R"("tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists",)"
      R"("effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,)"
      R"("preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Running","conditions":[)"
      R"({"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,)"
      R"("lastTransitionTime":"2026-12-06T12:00:02Z"},{"type":"Initialized","status":"True",)"
      R"("lastProbeTime":null,"lastTransitionTime":"2026-12-06T12:00:02Z"},{"type":"Ready",)"
      R"("status":"True","lastProbeTime":null,"lastTransitionTime":"2026-12-06T12:00:03Z"},)"
      R"({"type":"ContainersReady","status":"True","lastProbeTime":null,)"
      R"("lastTransitionTime":"2026-12-06T12:00:03Z"},{"type":"PodScheduled","status":"True",)"
      R"("lastProbeTime":null,"lastTransitionTime":"2026-12-06T12:00:01Z"}],)"
      R"("hostIP":"10.64.1.161","hostIPs":[{"ip":"10.64.1.161"}],"podIP":"10.96.33.7",)"
      R"("podIPs":[{"ip":"10.96.33.7"}],"startTime":"2026-12-06T12:00:02Z",)"
      R"("containerStatuses":[{"name":"ledger","state":{"running":{"startedAt":)"
      R"("2026-12-06T12:00:03Z"}},"lastState":{},"ready":true,"restartCount":0,)"
      R"("image":"quay.io/acme/ledger:4.2.0","imageID":"quay.io/acme/ledger@sha256:)"
      R"(9f1c3e5a7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a",)"
      R"("containerID":"converge-sim://4e6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f6a",)"
      R"("started":true}],"qosClass":"BestEffort"}})";
  return pod;
}

const std::string& Lease() {
  static const std::string lease =
      R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"worker-0417",)"
      R"("namespace":"kube-node-lease","uid":"3c5e7a9b-1d3f-4a5c-8e7b-9d1f3a5c7e9b",)"
      R"("creationTimestamp":"2026-12-06T11:58:40Z","ownerReferences":[{"apiVersion":"v1",)"
      R"("kind":"Node","name":"worker-0417","uid":"5e7a9c1e-3f5b-4d7f-9b1d-3f5a7c9e1b3d"}],)"
      R"("managedFields":[{"manager":"kubelet","operation":"Update",)"
      R"("apiVersion":"coordination.k8s.io/v1","time":"2026-12-06T12:00:10Z",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:ownerReferences":{".":{},)"
      R"("k:{\"uid\":\"5e7a9c1e-3f5b-4d7f-9b1d-3f5a7c9e1b3d\"}":{}}},"f:spec":)"
      R"({"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:renewTime":{}}}}]},)"
      R"("spec":{"holderIdentity":"worker-0417","leaseDurationSeconds":40,)"
      R"("renewTime":"2026-12-06T12:00:10.123456Z"}})";
  return lease;
}

const std::string& Value(int which) {
  return which == 0 ? Pod() : Lease();
}

void BM_CompressWithDictionary(benchmark::State& state) {
  const std::string& value = Value(static_cast<int>(state.range(0)));
  std::string frame;
  for (auto _ : state) benchmark::DoNotOptimize(CompressValue(value, &frame));
  state.counters["value_bytes"] = static_cast<double>(value.size());
  state.counters["frame_bytes"] = static_cast<double>(frame.size());
}
BENCHMARK(BM_CompressWithDictionary)->Arg(0)->Arg(1);

void BM_CompressPlainLevel1(benchmark::State& state) {
  const std::string& value = Value(static_cast<int>(state.range(0)));
  ZSTD_CCtx* context = ZSTD_createCCtx();
  std::string frame(ZSTD_compressBound(value.size()), '\0');
  size_t n = 0;
  for (auto _ : state) {
    n = ZSTD_compressCCtx(context, frame.data(), frame.size(), value.data(), value.size(),
                          kCompressLevel);
    benchmark::DoNotOptimize(n);
  }
  ZSTD_freeCCtx(context);
  state.counters["value_bytes"] = static_cast<double>(value.size());
  state.counters["frame_bytes"] = static_cast<double>(n);
}
BENCHMARK(BM_CompressPlainLevel1)->Arg(0)->Arg(1);

void BM_DecompressWithDictionary(benchmark::State& state) {
  const std::string& value = Value(static_cast<int>(state.range(0)));
  std::string frame;
  if (!CompressValue(value, &frame)) {
    state.SkipWithError("not compressed");
    return;
  }
  std::string out(value.size(), '\0');
  for (auto _ : state) benchmark::DoNotOptimize(DecompressValue(frame, out.data(), out.size()));
}
BENCHMARK(BM_DecompressWithDictionary)->Arg(0)->Arg(1);

void BM_DecompressPlainLevel1(benchmark::State& state) {
  const std::string& value = Value(static_cast<int>(state.range(0)));
  std::string frame(ZSTD_compressBound(value.size()), '\0');
  frame.resize(
      ZSTD_compress(frame.data(), frame.size(), value.data(), value.size(), kCompressLevel));
  // The store reads frames without a dictionary the same way (DecompressValue).
  std::string out(value.size(), '\0');
  for (auto _ : state) benchmark::DoNotOptimize(DecompressValue(frame, out.data(), out.size()));
}
BENCHMARK(BM_DecompressPlainLevel1)->Arg(0)->Arg(1);

}  // namespace
}  // namespace converge::store

BENCHMARK_MAIN();
