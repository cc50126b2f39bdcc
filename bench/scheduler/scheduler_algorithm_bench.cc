// One scheduling cycle — snapshot refresh, filter, score, select — on clusters of 500 to 5,000
// nodes holding 10 pods each: the in-memory cost of the algorithm, without the API.
#include <benchmark/benchmark.h>

#include "scheduler/cache.h"
#include "scheduler/schedule_algorithm.h"

namespace converge::scheduler {
namespace {

namespace json = boost::json;

api::ObjectPtr MakeNode(int i) {
  json::object resources{{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}};
  json::object doc{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       json::object{{"name", "node-" + std::to_string(i)},
                    {"labels", json::object{{"kubernetes.io/hostname", "node-" + std::to_string(i)},
                                            {"topology.kubernetes.io/zone",
                                             "zone-" + std::to_string(i % 3)}}}}},
      {"spec", json::object{}},
      {"status", json::object{{"allocatable", resources}, {"capacity", resources}}}};
  return std::make_shared<const api::Object>(std::move(doc));
}

api::ObjectPtr MakePod(int i, const std::string& node) {
  json::object spec{
      {"schedulerName", "default-scheduler"},
      {"containers",
       json::array{json::object{
           {"name", "c"},
           {"image", "registry.k8s.io/pause:3.9"},
           {"resources",
            json::object{{"requests", json::object{{"cpu", "100m"}, {"memory", "128Mi"}}}}}}}}};
  if (!node.empty()) spec["nodeName"] = node;
  json::object doc{{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata", json::object{{"name", "pod-" + std::to_string(i)},
                                             {"namespace", "default"},
                                             {"uid", "uid-" + std::to_string(i)}}},
                   {"spec", std::move(spec)}};
  return std::make_shared<const api::Object>(std::move(doc));
}

// Each iteration schedules one pod and assumes it, as the scheduling thread does.
void BM_ScheduleOne(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  Cache cache;
  for (int i = 0; i < nodes; ++i) cache.AddOrUpdateNode(NewNodeFacts(MakeNode(i)));
  int pod = 0;
  for (int i = 0; i < nodes; ++i) {
    for (int j = 0; j < 10; ++j)
      cache.AddPod(NewPodInfo(MakePod(pod++, "node-" + std::to_string(i))));
  }
  std::vector<PodInfoPtr> pending;
  for (int i = 0; i < 20000; ++i) pending.push_back(NewPodInfo(MakePod(pod++, "")));
  Snapshot snapshot;
  ScheduleAlgorithm algorithm({.seed = 1});
  size_t next = 0;
  int64_t evaluated = 0;
  for (auto _ : state) {
    const PodInfoPtr& p = pending[next++ % pending.size()];
    cache.UpdateSnapshot(&snapshot);
    ScheduleResult r = algorithm.Schedule(*p, snapshot);
    evaluated += r.evaluated_nodes;
    state.PauseTiming();
    // Keep the cluster from filling up: forget what was assumed a while ago.
    cache.ForgetPod(p->key);
    state.ResumeTiming();
    if (!cache.AssumePod(p, r.suggested_host).ok()) state.SkipWithError("assume failed");
  }
  state.counters["nodes_evaluated"] =
      benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kAvgIterations);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ScheduleOne)->Arg(500)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

// Parsing a pod as the informer handler does (NewPodInfo).
void BM_NewPodInfo(benchmark::State& state) {
  api::ObjectPtr pod = MakePod(1, "");
  for (auto _ : state) benchmark::DoNotOptimize(NewPodInfo(pod));
}
BENCHMARK(BM_NewPodInfo);

}  // namespace
}  // namespace converge::scheduler

BENCHMARK_MAIN();
