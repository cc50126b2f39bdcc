// Client library micro-benchmarks: watch decoding, the informer pipeline (reflector → DeltaFIFO →
// indexer → handler), indexer queries and HTTP keep-alive round trips.
//
//   build/bench/client/client_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <atomic>
#include <condition_variable>
#include <thread>

#include "client/fake_list_watch.h"
#include "client/http_test_server.h"
#include "client/http_transport.h"
#include "client/indexer.h"
#include "client/shared_informer.h"
#include "client/watch.h"

namespace converge::client {
namespace {

// A pod of about 1.5 KB, as a watch event.
std::string PodJson(int i) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-)" + std::to_string(i) +
         R"(","namespace":"team-)" + std::to_string(i % 10) +
         R"(","uid":"6c2b6f1e-8f3a-4b8e-9d8e-)" + std::to_string(100000000000 + i) +
         R"(","resourceVersion":")" + std::to_string(1000 + i) +
         R"(","labels":{"app":"web","tier":"frontend","pod-template-hash":"7d4b9c8f5"},)"
         R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d4b9c8f5",)"
         R"("uid":"0b1c2d3e","controller":true,"blockOwnerDeletion":true}]},)"
         R"("spec":{"nodeName":"node-)" +
         std::to_string(i % 100) +
         R"(","containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,)"
         R"("protocol":"TCP"}],"resources":{"requests":{"cpu":"100m","memory":"128Mi"}},)"
         R"("env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}],"restartPolicy":"Always",)"
         R"("terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","schedulerName":)"
         R"("default-scheduler"},"status":{"phase":"Running","podIP":"10.0.0.1","conditions":[)"
         R"({"type":"Ready","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"}]}})";
}

void BM_WatchDecode(benchmark::State& state) {
  std::string stream;
  for (int i = 0; i < 1000; ++i) {
    stream += R"({"type":"MODIFIED","object":)" + PodJson(i) + "}\n";
  }
  const size_t chunk = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    WatchDecoder d;
    std::deque<WatchEvent> out;
    for (size_t off = 0; off < stream.size(); off += chunk) {
      if (!d.Feed(std::string_view(stream).substr(off, chunk), &out).ok()) state.SkipWithError("x");
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(stream.size()));
}
BENCHMARK(BM_WatchDecode)->Arg(1 << 20)->Arg(4096);

// Events pushed into a running informer until one handler has seen them all.
void BM_InformerPipeline(benchmark::State& state) {
  const int n = 10000;
  std::vector<api::ObjectPtr> objs;
  for (int i = 0; i < n; ++i) {
    objs.push_back(std::make_shared<const api::Object>(*api::Object::Parse(PodJson(i))));
  }
  for (auto _ : state) {
    auto lw_owned = std::make_unique<FakeListerWatcher>();
    FakeListerWatcher* lw = lw_owned.get();
    SharedInformer informer({.lister_watcher = std::move(lw_owned)});
    std::mutex mu;
    std::condition_variable cv;
    int seen = 0;
    auto h = std::make_shared<ResourceEventHandlerFuncs>();
    h->add = [&](const api::ObjectPtr&, bool) {
      std::lock_guard lock(mu);
      if (++seen == n) cv.notify_all();
    };
    (void)informer.AddEventHandler(h);
    lw->PushList(MakeList("1", {}));
    std::shared_ptr<FakeWatcher> w = lw->PushWatch();
    std::jthread run([&](std::stop_token st) { informer.Run(st); });
    for (const api::ObjectPtr& o : objs) w->Push(EventType::kAdded, o);
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return seen == n; });
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_InformerPipeline)->Unit(benchmark::kMillisecond)->UseRealTime();

// 100,000 pods in 10 namespaces on 100 nodes, indexed by namespace and by node; built once.
const Indexer& HundredThousandPods() {
  static Indexer idx({{std::string(kNamespaceIndex), NamespaceIndexFunc},
                      {std::string(kNodeNameIndex), FieldIndexFunc("spec.nodeName")}});
  static const bool filled = [] {
    for (int i = 0; i < 100000; ++i) {
      idx.Upsert(std::make_shared<const api::Object>(*api::Object::Parse(PodJson(i))));
    }
    return true;
  }();
  (void)filled;
  return idx;
}

void BM_IndexerByNode(benchmark::State& state) {
  const Indexer& idx = HundredThousandPods();
  int i = 0;
  for (auto _ : state) {
    auto pods = idx.ByIndex(kNodeNameIndex, "node-" + std::to_string(i++ % 100));
    benchmark::DoNotOptimize(pods);
  }
}
BENCHMARK(BM_IndexerByNode);

// A controller's list of one namespace (a ReplicaSet's sync lists its namespace's pods): 10,000
// of the 100,000 pods.
void BM_IndexerByNamespace(benchmark::State& state) {
  const Indexer& idx = HundredThousandPods();
  int i = 0;
  for (auto _ : state) {
    auto pods = idx.ByIndex(kNamespaceIndex, "team-" + std::to_string(i++ % 10));
    benchmark::DoNotOptimize(pods);
  }
}
BENCHMARK(BM_IndexerByNamespace)->Unit(benchmark::kMillisecond);

void BM_IndexerUpsert(benchmark::State& state) {
  Indexer idx({{std::string(kNamespaceIndex), NamespaceIndexFunc},
               {std::string(kNodeNameIndex), FieldIndexFunc("spec.nodeName")},
               {std::string(kLabelsIndex), LabelsIndexFunc}});
  std::vector<api::ObjectPtr> objs;
  for (int i = 0; i < 10000; ++i) {
    objs.push_back(std::make_shared<const api::Object>(*api::Object::Parse(PodJson(i))));
  }
  size_t i = 0;
  for (auto _ : state) idx.Upsert(objs[i++ % objs.size()]);
}
BENCHMARK(BM_IndexerUpsert);

void BM_HttpKeepAliveGet(benchmark::State& state) {
  testing::TestHttpServer server([](const testing::TestRequest&) {
    testing::TestResponse r;
    r.body = PodJson(1);
    return r;
  });
  server.Start();
  auto t = HttpTransport::New({.config = {.server = server.url()}});
  for (auto _ : state) {
    auto resp = (*t)->Do({.path = "/api/v1/namespaces/team-1/pods/web-1"});
    if (!resp.ok()) state.SkipWithError("request failed");
  }
  state.counters["connections"] = static_cast<double>((*t)->connections_opened());
}
BENCHMARK(BM_HttpKeepAliveGet)->UseRealTime();

}  // namespace
}  // namespace converge::client

BENCHMARK_MAIN();
