// libFuzzer target for the JSON patch: `document NUL patch`, or the whole input as a patch to a
// sample object. Checks: no crash, inputs untouched, results within the nesting limit and
// serializable, and a patch of only `test` operations never changes the document.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "api/json_patch.h"
#include "api/merge_patch.h"

namespace {

namespace json = boost::json;
using converge::api::ApplyJsonPatch;
using converge::api::JsonNestingDepth;
using converge::api::kMaxPatchNestingDepth;
using converge::api::ParsePatchBody;

constexpr std::string_view kSample =
    R"({"metadata":{"name":"web","labels":{"a/b":"1","c~d":"2"},"finalizers":["x","y"]},
        "spec":{"replicas":1,"list":[0,1,[2,3],{"k":null}],"template":{"spec":{}}}})";

void Check(bool condition) {
  if (!condition) std::abort();
}

bool OnlyTests(const json::value& patch) {
  const json::array* ops = patch.if_array();
  if (ops == nullptr) return false;
  for (const json::value& op : *ops) {
    const json::object* o = op.if_object();
    if (o == nullptr) return false;
    const json::value* kind = o->if_contains("op");
    if (kind == nullptr || !kind->is_string() || kind->get_string() != "test") return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  json::value document = json::parse(kSample);
  std::string_view patch_text = input;
  if (split != std::string_view::npos) {
    converge::util::StatusOr<json::value> parsed = ParsePatchBody(input.substr(0, split));
    if (parsed.ok()) document = std::move(*parsed);
    patch_text = input.substr(split + 1);
  }
  converge::util::StatusOr<json::value> patch = ParsePatchBody(patch_text);
  if (!patch.ok()) return 0;

  const json::value before = document;
  converge::util::StatusOr<json::value> result = ApplyJsonPatch(document, *patch);
  Check(document == before);
  if (!result.ok()) return 0;
  Check(JsonNestingDepth(*result) <= kMaxPatchNestingDepth);
  converge::util::StatusOr<json::value> reparsed = ParsePatchBody(json::serialize(*result));
  // Not `== *result`: Boost.JSON 1.81's number parser is not correctly rounded, so a double
  // may come back a few ULPs off (e.g. 4.444444444444444E38).
  Check(reparsed.ok());
  if (OnlyTests(*patch)) Check(*result == document);
  return 0;
}
