// Field validation of JSON request bodies against a kind's TypeSchema, worded as upstream's
// decoder words it (fieldValidation=Strict|Warn|Ignore).
//
// Upstream decodes a JSON body into Go structs with sigs.k8s.io/json: a value of the wrong JSON
// type stops decoding with Go's UnmarshalTypeError
//   json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32
// (the path lists struct fields only, no list indices or map keys); fields the type lacks and keys
// given twice are "strict" problems
//   unknown field "spec.template.spec.containers[0].foo"
//   duplicate field "metadata.name"
// that Strict rejects ("strict decoding error: " + the problems, joined by ", "), Warn returns as
// warnings and Ignore drops. Unknown fields never reach storage: they are pruned (also the CRD
// pruning primitive). null is accepted anywhere (it means unset). At the root, apiVersion and
// kind are always known.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "api/schema.h"
#include "util/status.h"

namespace converge::api {

enum class FieldValidation { kIgnore, kWarn, kStrict };

// Parses the fieldValidation query parameter: "Ignore", "Warn", "Strict", or "" (absent), which
// upstream treats as Warn. Anything else is InvalidArgument with the detail of upstream's 422
// (field "fieldValidation"): `Unsupported value: "foo": supported values: "", "Ignore", "Strict",
// "Warn"`.
util::StatusOr<FieldValidation> ParseFieldValidation(std::string_view param);

// Paths ("spec.foo", "spec.template.spec.containers[0].foo") of the fields of `obj` that `type`
// does not declare, in document order. With `prune`, also removes them from `obj`.
std::vector<std::string> FindUnknownFields(boost::json::object& obj, const TypeSchema& type,
                                           bool prune);
// Removes every unknown field; returns their paths.
inline std::vector<std::string> PruneUnknownFields(boost::json::object& obj,
                                                   const TypeSchema& type) {
  return FindUnknownFields(obj, type, /*prune=*/true);
}

// Paths of keys that appear twice in one JSON object of `text` ("metadata.name", "a.b[1].c").
// InvalidArgument when `text` is not valid JSON.
util::StatusOr<std::vector<std::string>> FindDuplicateFields(std::string_view text);

// The first value whose JSON type does not fit the field (document order), as the Go decoder
// reports it; OK when every value fits. Also checks the special types' own formats (RFC 3339
// times, durations, quantities, base64 bytes).
util::Status CheckFieldTypes(const boost::json::object& obj, const TypeSchema& type);

// A decoded request body.
struct DecodedBody {
  boost::json::object object;         // unknown fields removed
  std::vector<std::string> warnings;  // Warn: `unknown field "x"` / `duplicate field "x"`
};

// Decodes a JSON request body for `type` as upstream does under `mode`:
//   malformed JSON or not an object     -> InvalidArgument (parser message)
//   a type mismatch                     -> InvalidArgument (Go's message, see above)
//   Strict and unknown/duplicate fields -> InvalidArgument("strict decoding error: unknown
//                                          field \"spec.foo\", duplicate field \"x\"")
// Unknown fields are reported first, then duplicates.
util::StatusOr<DecodedBody> DecodeJsonBody(std::string_view text, const TypeSchema& type,
                                           FieldValidation mode);

}  // namespace converge::api
