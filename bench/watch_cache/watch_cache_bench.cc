// The watch cache's filters on their hot paths: a LIST with a label selector over many pods, and
// one event matched against many watchers' label selectors. "Dom" matches the labels as a parsed
// object (LabelSelector::Matches, what entries held before they packed their labels), "Packed"
// as CachedObject::MatchesLabels on the packed form the cache holds now.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "api/builtin_resources.h"
#include "api/labels.h"
#include "apiserver/cached_object.h"
#include "apiserver/watch_cache.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

std::shared_ptr<const api::ResourceInfo> Pods() {
  for (const api::ResourceInfo& info : api::BuiltinResources()) {
    if (info.gvr.group.empty() && info.gvr.resource == "pods") {
      return std::make_shared<api::ResourceInfo>(info);
    }
  }
  return nullptr;
}

// Pod i: app=web-<i % 100>, tier fe or be, pod-template-hash, in namespace ns-<i % 10>.
CachedObjectPtr Pod(const api::ResourceInfo& info, int i) {
  std::string name = "web-7c9f8d6b5-" + std::to_string(100000 + i);
  std::string ns = "ns-" + std::to_string(i % 10);
  json::object doc = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{}})").as_object();
  json::object& m = doc["metadata"].as_object();
  m["name"] = name;
  m["namespace"] = ns;
  m["labels"] = json::object{{"app", "web-" + std::to_string(i % 100)},
                             {"tier", i % 2 ? "fe" : "be"},
                             {"pod-template-hash", "7c9f8d6b5"}};
  json::object spec;
  spec["nodeName"] = "node-" + std::to_string(i % 500);
  doc["spec"] = spec;
  return CachedObject::FromObject(info, StorageKey(info, ns, name), api::Object(doc), i + 1);
}

const char kSelector[] = "app=web-7,tier in (fe,x)";

void BM_MatchLabelsDom(benchmark::State& state) {
  auto info = Pods();
  auto sel = *api::LabelSelector::Parse(kSelector);
  // Each on the heap, allocated between entries, as entries held them.
  std::vector<CachedObjectPtr> pods;
  std::vector<std::shared_ptr<const json::object>> labels;
  for (int i = 0; i < 1000; ++i) {
    pods.push_back(Pod(*info, i));
    labels.push_back(std::make_shared<const json::object>(pods.back()->LabelsObject()));
  }
  for (auto _ : state) {
    int n = 0;
    for (const auto& l : labels) n += sel.Matches(l.get());
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_MatchLabelsDom);

void BM_MatchLabelsPacked(benchmark::State& state) {
  auto info = Pods();
  auto sel = *api::LabelSelector::Parse(kSelector);
  std::vector<CachedObjectPtr> pods;
  std::vector<std::shared_ptr<const json::object>> labels;  // allocated between, as above
  for (int i = 0; i < 1000; ++i) {
    pods.push_back(Pod(*info, i));
    labels.push_back(std::make_shared<const json::object>(pods.back()->LabelsObject()));
  }
  for (auto _ : state) {
    int n = 0;
    for (const CachedObjectPtr& p : pods) n += p->MatchesLabels(sel);
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_MatchLabelsPacked);

// LIST of every namespace with a label selector over 100,000 pods (1,000 match).
void BM_ListWithLabelSelector(benchmark::State& state) {
  auto info = Pods();
  WatchCache cache(info, {});
  std::vector<CachedObjectPtr> pods;
  for (int i = 0; i < 100000; ++i) pods.push_back(Pod(*info, i));
  cache.Reset(std::move(pods), 100000);
  WatchFilter filter;
  filter.labels = *api::LabelSelector::Parse("app=web-7");
  for (auto _ : state) {
    auto result = cache.List(filter);
    benchmark::DoNotOptimize(result.items.size());
  }
  state.SetItemsProcessed(state.iterations() * 100000);
}
BENCHMARK(BM_ListWithLabelSelector)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace converge::apiserver

BENCHMARK_MAIN();
