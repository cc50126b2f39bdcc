// Costs on the server's start-up and request paths that the schema registry owns.
//   build/bench/api_schema/api_schema_bench
#include <benchmark/benchmark.h>

#include <string_view>
#include <vector>

#include "api/builtin_resources.h"
#include "api/embedded_data.h"
#include "api/field_validation.h"
#include "api/protobuf.h"
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

constexpr std::string_view kPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-5d8f7c9b4-abcde",
  "namespace":"default","labels":{"app":"web","pod-template-hash":"5d8f7c9b4"},
  "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d8f7c9b4",
  "uid":"0b7e2c1e-3f4a-4c2b-9d8e-1a2b3c4d5e6f","controller":true,"blockOwnerDeletion":true}]},
  "spec":{"containers":[{"name":"nginx","image":"nginx:1.27","ports":[{"containerPort":80,
  "protocol":"TCP"}],"resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"250m",
  "memory":"64Mi"}},"env":[{"name":"A","value":"1"},{"name":"NODE","valueFrom":{"fieldRef":
  {"fieldPath":"spec.nodeName"}}}],"livenessProbe":{"httpGet":{"path":"/healthz","port":80},
  "periodSeconds":10},"terminationMessagePath":"/dev/termination-log","imagePullPolicy":
  "IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":
  "ClusterFirst","serviceAccountName":"default","schedulerName":"default-scheduler",
  "volumes":[{"name":"cache","emptyDir":{}}],"tolerations":[{"key":"node.kubernetes.io/not-ready",
  "operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]},
  "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True",
  "lastTransitionTime":"2024-05-06T07:08:09Z"}],"podIP":"10.0.0.12",
  "startTime":"2024-05-06T07:08:00Z"}})";

// Strict decoding of a typical Pod body: parse, type check, unknown and duplicate fields.
void BM_DecodeJsonBodyStrict(benchmark::State& state) {
  const TypeSchema* pod = BuiltinSchemas().FindType("io.k8s.api.core.v1.Pod");
  for (auto _ : state) {
    auto d = DecodeJsonBody(kPod, *pod, FieldValidation::kStrict);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kPod.size()));
}
BENCHMARK(BM_DecodeJsonBodyStrict);

// The same Pod as a protobuf body (as kubectl's typed clients send it) decoded to JSON.
void BM_DecodeProtobufPod(benchmark::State& state) {
  const TypeSchema* pod = BuiltinSchemas().FindType("io.k8s.api.core.v1.Pod");
  auto body = EncodeProtobufObject(boost::json::parse(kPod).as_object(), *pod,
                                   {.write_empty_fields = true});
  for (auto _ : state) {
    auto d = DecodeProtobufObject(*body);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body->size()));
}
BENCHMARK(BM_DecodeProtobufPod);

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
