// libFuzzer target for the strategic merge patch, against the real Pod and Deployment schemas:
// `document NUL patch`, or the whole input as a patch to a sample Deployment. Checks: no crash,
// inputs untouched, results are objects within the nesting limit, and a differential law: with no
// schema and no `$` keys in the patch, a strategic merge patch is exactly a JSON merge patch.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "api/merge_patch.h"
#include "api/schema_registry.h"
#include "api/strategic_merge_patch.h"

namespace {

namespace json = boost::json;
using converge::api::ApplyMergePatch;
using converge::api::ApplyStrategicMergePatch;
using converge::api::JsonEqual;
using converge::api::JsonNestingDepth;
using converge::api::kMaxPatchNestingDepth;
using converge::api::ParsePatchBody;
using converge::api::TypeSchema;

constexpr std::string_view kSample = R"({"apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"web","labels":{"app":"web"},"finalizers":["a","b"],
              "ownerReferences":[{"uid":"1","name":"o"}]},
  "spec":{"replicas":2,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}},
    "template":{"metadata":{"labels":{"app":"web"}},"spec":{
      "containers":[{"name":"nginx","image":"nginx","ports":[{"containerPort":80},{"containerPort":443}],
                     "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
                     "volumeMounts":[{"name":"v","mountPath":"/v"}]},
                    {"name":"sidecar","image":"busybox","args":["sleep","1"]}],
      "volumes":[{"name":"v","emptyDir":{}},{"name":"w","hostPath":{"path":"/w"}}],
      "tolerations":[{"key":"k","operator":"Exists"}]}}}})";

void Check(bool condition) {
  if (!condition) std::abort();
}

bool HasDollarKey(const json::value& v) {
  std::vector<const json::value*> stack{&v};
  while (!stack.empty()) {
    const json::value* node = stack.back();
    stack.pop_back();
    if (const json::object* o = node->if_object()) {
      for (const auto& m : *o) {
        if (!m.key().empty() && m.key()[0] == '$') return true;
        stack.push_back(&m.value());
      }
    } else if (const json::array* a = node->if_array()) {
      for (const json::value& e : *a) stack.push_back(&e);
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const TypeSchema* const kSchemas[] = {
      converge::api::BuiltinSchemas().FindType("io.k8s.api.apps.v1.Deployment"),
      converge::api::BuiltinSchemas().FindType("io.k8s.api.core.v1.Pod"),
      nullptr,
  };
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  json::value document = json::parse(kSample);
  std::string_view patch_text = input;
  if (split != std::string_view::npos) {
    converge::util::StatusOr<json::value> parsed = ParsePatchBody(input.substr(0, split));
    if (parsed.ok() && parsed->is_object()) document = std::move(*parsed);
    patch_text = input.substr(split + 1);
  }
  converge::util::StatusOr<json::value> patch = ParsePatchBody(patch_text);
  if (!patch.ok()) return 0;

  const json::value before = document;
  for (const TypeSchema* schema : kSchemas) {
    converge::util::StatusOr<json::value> result =
        ApplyStrategicMergePatch(document, *patch, schema);
    Check(document == before);
    if (schema == nullptr && patch->is_object() && !HasDollarKey(*patch)) {
      converge::util::StatusOr<json::value> merged = ApplyMergePatch(document, *patch);
      Check(result.ok() && merged.ok() && JsonEqual(*merged, *result));
    }
    if (!result.ok()) continue;
    Check(result->is_object());
    Check(JsonNestingDepth(*result) <= kMaxPatchNestingDepth);
    converge::util::StatusOr<json::value> reparsed = ParsePatchBody(json::serialize(*result));
    // Not `== *result`: Boost.JSON 1.81's number parser is not correctly rounded, so a double
    // may come back a few ULPs off (e.g. 4.444444444444444E38).
    Check(reparsed.ok());
  }
  return 0;
}
