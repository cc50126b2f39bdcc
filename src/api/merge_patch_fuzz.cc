// libFuzzer target for the JSON merge patch: `document NUL patch`, or the whole input as a patch to
// a sample object. Beyond "no crash, no leak, no undefined behaviour" it checks RFC 7386 laws:
// applying a patch twice changes nothing more, and CreateMergePatch round-trips.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "api/field_validation.h"
#include "api/merge_patch.h"

namespace {

namespace json = boost::json;
using converge::api::ApplyMergePatch;
using converge::api::CreateMergePatch;
using converge::api::JsonEqual;
using converge::api::ParsePatchBody;

constexpr std::string_view kSample =
    R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"a":"1"}},
        "spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}})";

void Check(bool condition) {
  if (!condition) std::abort();
}

bool HasNullMember(const json::value& v) {
  std::vector<const json::value*> stack{&v};
  while (!stack.empty()) {
    const json::value* node = stack.back();
    stack.pop_back();
    if (const json::object* o = node->if_object()) {
      for (const auto& m : *o) {
        if (m.value().is_null()) return true;
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
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  json::value document = json::parse(kSample);
  std::string_view patch_text = input;
  if (split != std::string_view::npos) {
    converge::util::StatusOr<json::value> parsed = ParsePatchBody(input.substr(0, split));
    if (parsed.ok()) document = std::move(*parsed);
    patch_text = input.substr(split + 1);
  }
  std::vector<std::string> duplicates;
  converge::util::StatusOr<json::value> patch = ParsePatchBody(patch_text, &duplicates);
  if (!patch.ok()) return 0;
  // The repeated keys found while parsing are those the separate scan finds.
  converge::util::StatusOr<std::vector<std::string>> scanned =
      converge::api::FindDuplicateFields(patch_text);
  Check(scanned.ok() && *scanned == duplicates);

  const json::value before = document;
  converge::util::StatusOr<json::value> result = ApplyMergePatch(document, *patch);
  Check(document == before);  // inputs are never modified
  if (!result.ok()) return 0;
  converge::util::StatusOr<json::value> reparsed = ParsePatchBody(json::serialize(*result));
  // Not `== *result`: Boost.JSON 1.81's number parser is not correctly rounded, so a double
  // may come back a few ULPs off (e.g. 4.444444444444444E38).
  Check(reparsed.ok());

  // Idempotence: a merge patch's members are already in place after one application.
  converge::util::StatusOr<json::value> again = ApplyMergePatch(*result, *patch);
  Check(again.ok() && JsonEqual(*again, *result));

  // Round trip, exact whenever the result has no null members (RFC 7386 cannot set a null).
  if (document.is_object() && result->is_object() && !HasNullMember(*result)) {
    converge::util::StatusOr<json::value> diff = CreateMergePatch(document, *result);
    Check(diff.ok());
    converge::util::StatusOr<json::value> rebuilt = ApplyMergePatch(document, *diff);
    Check(rebuilt.ok() && JsonEqual(*rebuilt, *result));
  }
  return 0;
}
