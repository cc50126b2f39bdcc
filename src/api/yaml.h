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

#include <string_view>

#include "util/status.h"

namespace converge::api {

// Converts the first YAML document of `text`. An empty document converts to null.
util::StatusOr<boost::json::value> YamlToJson(std::string_view text);

}  // namespace converge::api
