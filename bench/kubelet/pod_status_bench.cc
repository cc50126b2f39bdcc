// The kubelet's per-sync status work: StatusFingerprint of a running pod's status (every status
// the kubelet builds and every pod version it sees is fingerprinted), and the patch it sends.
//
//   build/bench/kubelet/pod_status_bench
#include <benchmark/benchmark.h>
#include <boost/json.hpp>

#include "kubelet/pod_status.h"

namespace {

namespace json = boost::json;

// A running, ready pod's status as the simulated kubelet writes it.
const json::object& RunningStatus() {
  static const json::object status = json::parse(R"({
    "phase":"Running",
    "conditions":[
      {"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-30T22:10:12Z"},
      {"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-30T22:10:11Z"},
      {"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-30T22:10:12Z"},
      {"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-30T22:10:12Z"},
      {"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-30T22:10:11Z"}],
    "hostIP":"10.0.0.42","hostIPs":[{"ip":"10.0.0.42"}],
    "podIP":"10.244.3.17","podIPs":[{"ip":"10.244.3.17"}],
    "startTime":"2026-11-30T22:10:11Z",
    "containerStatuses":[{"name":"c","image":"registry.k8s.io/pause:3.9",
      "imageID":"registry.k8s.io/pause@sha256:7031c1b283388d2c2e09b57badb803c05ebed362dc88d84b480cc47f72a21097",
      "containerID":"containerd://4f3c2b1a09876543210fedcba9876543210fedcba9876543210fedcba987654",
      "state":{"running":{"startedAt":"2026-11-30T22:10:12Z"}},"lastState":{},
      "ready":true,"restartCount":0,"started":true}],
    "qosClass":"BestEffort"})")
                                         .as_object();
  return status;
}

void BM_StatusFingerprint(benchmark::State& state) {
  const json::object& status = RunningStatus();
  for (auto _ : state) {
    benchmark::DoNotOptimize(converge::kubelet::StatusFingerprint(status));
  }
}
BENCHMARK(BM_StatusFingerprint);

void BM_BuildStatusPatch(benchmark::State& state) {
  const json::object& status = RunningStatus();
  for (auto _ : state) {
    benchmark::DoNotOptimize(converge::kubelet::BuildStatusPatch("uid-1", status));
  }
}
BENCHMARK(BM_BuildStatusPatch);

}  // namespace

BENCHMARK_MAIN();
