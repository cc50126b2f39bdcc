// YAML → JSON for request bodies (application/yaml, application/apply-patch+yaml).
//
// Scalars follow the YAML 1.2 core schema: plain true/false, null/~, integers and floats become
// JSON booleans, null and numbers; quoted scalars stay strings. Keys become strings.
//
// Hostile input is bounded: nesting depth is limited by the parser, and alias expansion by a
// budget of output nodes proportional to the input size, so a "billion laughs" document fails
// fast with InvalidArgument instead of exhausting memory.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace converge::api {

// Converts the first YAML document of `text`. An empty document converts to null. A key given
// twice in one mapping keeps its last value; with `duplicate_keys`, each repetition is also
// reported as go-yaml v2's strict decoder words it, in its order (a duplicate's own value first):
//   line 12: key "paused" already set in map
// (the line of the repeated key's value, 1-based; non-string keys unquoted: `key 1 already...`).
util::StatusOr<boost::json::value> YamlToJson(std::string_view text,
                                              std::vector<std::string>* duplicate_keys = nullptr);

// The same reports for a JSON document read as YAML (upstream reads apply-patch bodies, which
// kubectl sends as JSON, with its YAML decoder), without the cost of the YAML parser.
// InvalidArgument when `text` is not valid JSON.
util::StatusOr<std::vector<std::string>> JsonDuplicateKeysAsYaml(std::string_view text);

// go-yaml v2's TypeError text for those reports: "yaml: unmarshal errors:\n  line 5: ...\n  line 9:
// ...".
std::string YamlUnmarshalErrors(const std::vector<std::string>& errors);

}  // namespace converge::api
