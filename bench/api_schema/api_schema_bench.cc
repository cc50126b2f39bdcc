// Costs on the server's start-up and request paths that the schema registry owns.
//   build/bench/api_schema/api_schema_bench
#include <benchmark/benchmark.h>

#include <string_view>
#include <vector>

#include "api/builtin_resources.h"
#include "api/embedded_data.h"
#include "api/schema_registry.h"
#include "apiserver/discovery.h"
#include "apiserver/openapi.h"

namespace converge::api {
namespace {

// Parsing every embedded schema document and the overrides (what BuiltinSchemas() does once).
void BM_ParseBuiltinSchemas(benchmark::State& state) {
  std::vector<std::string_view> docs;
  for (const EmbeddedFile& f : EmbeddedApiFiles()) {
    if (f.path.starts_with("schema/")) docs.push_back(f.contents);
  }
  std::string_view overrides = *FindEmbeddedApiFile("overrides.json");
  for (auto _ : state) {
    auto reg = SchemaRegistry::Parse(docs, overrides);
    benchmark::DoNotOptimize(reg);
  }
}
BENCHMARK(BM_ParseBuiltinSchemas)->Unit(benchmark::kMillisecond);

void BM_ParseBuiltinResources(benchmark::State& state) {
  std::string_view doc = *FindEmbeddedApiFile("resources.json");
  const SchemaRegistry& schemas = BuiltinSchemas();
  for (auto _ : state) {
    auto res = ParseResources(doc, schemas);
    benchmark::DoNotOptimize(res);
  }
}
BENCHMARK(BM_ParseBuiltinResources)->Unit(benchmark::kMicrosecond);

void BM_FieldLookupByName(benchmark::State& state) {
  const TypeSchema* spec = BuiltinSchemas().FindType("io.k8s.api.core.v1.PodSpec");
  for (auto _ : state) {
    benchmark::DoNotOptimize(spec->Field("containers"));
    benchmark::DoNotOptimize(spec->Field("terminationGracePeriodSeconds"));
  }
}
BENCHMARK(BM_FieldLookupByName);

void BM_FieldLookupByNumber(benchmark::State& state) {
  const TypeSchema* spec = BuiltinSchemas().FindType("io.k8s.api.core.v1.PodSpec");
  for (auto _ : state) {
    benchmark::DoNotOptimize(spec->FieldByNumber(2));
    benchmark::DoNotOptimize(spec->FieldByNumber(34));
  }
}
BENCHMARK(BM_FieldLookupByNumber);

// Every discovery document kubectl may ask for, rendered from scratch (once per registry change).
void BM_RenderAllDiscovery(benchmark::State& state) {
  ResourceRegistry reg;
  LoadBuiltins(&reg);
  auto table = reg.Snapshot();
  using namespace apiserver;
  for (auto _ : state) {
    size_t bytes = 0;
    for (DiscoveryRoot root : {DiscoveryRoot::kCore, DiscoveryRoot::kGroups}) {
      bytes += RenderAggregatedDiscovery(*table, root, DiscoveryFormat::kAggregatedV2).size();
    }
    bytes += RenderApiGroupList(*table).size();
    for (const auto& r : table->resources)
      bytes += RenderApiResourceList(*table, r->gvr.Gv())->size();
    benchmark::DoNotOptimize(bytes);
  }
}
BENCHMARK(BM_RenderAllDiscovery)->Unit(benchmark::kMicrosecond);

// Every OpenAPI v3 document plus the index (what the first GET /openapi/v3 costs after start-up
// or a CRD change).
void BM_RenderAllOpenApi(benchmark::State& state) {
  ResourceRegistry reg;
  LoadBuiltins(&reg);
  size_t bytes = 0;
  for (auto _ : state) {
    apiserver::OpenApiService svc(&reg, &BuiltinSchemas());
    bytes = svc.Index().body->size();
    benchmark::DoNotOptimize(bytes);
  }
}
BENCHMARK(BM_RenderAllOpenApi)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace converge::api

BENCHMARK_MAIN();
