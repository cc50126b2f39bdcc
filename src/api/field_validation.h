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

// PruneUnknownFields for an object that had no unknown field before a merge patch or strategic
// merge patch `changed` was applied to it: looks only where the patch reaches (its members, and
// below them where it holds an object for a struct; lists and maps it touches are walked whole),
// as anything else is as it was.
std::vector<std::string> PruneUnknownFieldsWhere(boost::json::object& obj, const TypeSchema& type,
                                                 const boost::json::object& changed);

// Paths of keys that appear twice in one JSON object of `text` ("metadata.name", "a.b[1].c").
// InvalidArgument when `text` is not valid JSON.
util::StatusOr<std::vector<std::string>> FindDuplicateFields(std::string_view text);

// boost::json::parse(text, ec, {}, options), which also appends to `duplicates` (when not null)
// what FindDuplicateFields(text) would return, in the same pass over the text: a request body is
// read once, not once for the document and once more for its repeated keys.
boost::json::value ParseJsonFindingDuplicates(std::string_view text,
                                              const boost::json::parse_options& options,
                                              boost::system::error_code& ec,
                                              std::vector<std::string>* duplicates);

// Every key of JSON `text` in document order: its strict path, and whether it repeats a key of its
// object. InvalidArgument when `text` is not valid JSON.
struct JsonKey {
  std::string path;
  bool duplicate = false;
};
util::StatusOr<std::vector<JsonKey>> ScanJsonKeys(std::string_view text);

// The strict problems of JSON `text` decoded into a typed object, given the unknown fields
// (FindUnknownFields) and repeated keys (FindDuplicateFields) it has, in sigs.k8s.io/json's order:
// document order, an unknown field where it first appears (its value and its repetitions are not
// looked at), a known field where it repeats:
//   unknown field "spec.unknown1", duplicate field "spec.paused"
util::StatusOr<std::vector<std::string>> TypedStrictProblems(
    std::string_view text, const std::vector<std::string>& unknown,
    const std::vector<std::string>& duplicates);

// Orders strict paths as upstream reports the unknown fields of an object it re-encoded before
// decoding (a patch result, a YAML body): keys sorted at every level, list items by index.
void SortFieldPaths(std::vector<std::string>& paths);

// The strict problems of a JSON patch document (upstream decodes it into []jsonPatchOp{op, path,
// from, value}): `json patch unknown field "[0].foo"`, `json patch duplicate field "[1].path"`,
// in document order.
util::StatusOr<std::vector<std::string>> JsonPatchStrictProblems(std::string_view text);

// What strict decoding found, in upstream's order: the parts of the Strict error, and the Warn
// warnings. They differ only for YAML duplicate keys, which are one go-yaml error ("yaml:
// unmarshal errors:\n  line 5: ...\n  line 9: ...") but one warning per line.
struct StrictReport {
  std::vector<std::string> errors;
  std::vector<std::string> warnings;

  void Add(std::string problem);
  // The reports of YamlToJson's duplicate_keys (nothing when empty).
  void AddYamlDuplicates(const std::vector<std::string>& reports);
  bool empty() const { return errors.empty(); }
  // "strict decoding error: " + errors joined by ", ".
  std::string Message() const;
};

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
// in TypedStrictProblems' order. For a body that was YAML, `text` is the JSON YamlToJson made and
// `yaml_duplicates` its duplicate-key reports: they come first (StrictReport), then the unknown
// fields in SortFieldPaths order.
util::StatusOr<DecodedBody> DecodeJsonBody(
    std::string_view text, const TypeSchema& type, FieldValidation mode,
    const std::vector<std::string>* yaml_duplicates = nullptr);

}  // namespace converge::api
