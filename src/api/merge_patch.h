// JSON merge patch (RFC 7386, `application/merge-patch+json`), plus the JSON helpers that all three
// patch types share (nesting limit, equality, null pruning, parsing a patch body).
//
// Semantics (RFC 7386 section 2): an object patch is merged member by member into the target; a
// null member deletes that member; an object member merges recursively into an object member of
// the target; every other value replaces what was there. Upstream (evanphx/json-patch v4, used by
// the apiserver) adds one rule, which we follow: a value taken from the patch has the null members
// of its objects removed, also inside arrays (null array elements are kept). A patch whose top
// level is an array replaces the whole target, with the same pruning.
//
// Errors and the HTTP outcome upstream gives them (the handler maps codes to Status reasons):
//   kInvalidArgument  400 BadRequest. The patch is not a JSON object or array ("Invalid JSON
//   Patch",
//                     upstream's message), cannot be parsed ("error decoding patch: ..."), or nests
//                     deeper than kMaxPatchNestingDepth.
// Applying never fails otherwise. The result may be a non-object when the patch is an array or the
// target is not an object; upstream then fails decoding it into the kind: 422 Invalid, field
// "patch". The handler must check that the result is an object.
//
// Thread-safety: every function here is pure; concurrent calls are safe as long as no one mutates
// the arguments meanwhile. Nothing is ever modified in place: results are fresh values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "util/status.h"

namespace converge::api {

// Documents and patches nested deeper than this many containers are rejected by every patch type.
// 10,000 is the nesting limit of Go's encoding/json, i.e. of upstream's decoders; real objects stay
// below 30. The patch algorithms are iterative (their C++ stack use does not grow with nesting);
// what does grow is Boost.JSON's own recursive copy and destruction of values: at the limit,
// applying any patch type runs in a 2 MiB stack (measured, release and ASan builds), so threads
// with the default 8 MiB stack have ample room.
inline constexpr int kMaxPatchNestingDepth = 10000;

// Applies `patch` to `original` (RFC 7386 plus upstream's null pruning, see above).
util::StatusOr<boost::json::value> ApplyMergePatch(const boost::json::value& original,
                                                   const boost::json::value& patch);

// Returns a merge patch that turns `original` into `modified`: changed and added members carry
// their new value, removed members are null, objects present in both are diffed recursively,
// arrays are compared whole. Both must be objects (InvalidArgument otherwise). The round trip
// ApplyMergePatch(original, CreateMergePatch(original, modified)) == modified is exact whenever
// `modified` has no null members (RFC 7386 cannot express "set to null").
util::StatusOr<boost::json::value> CreateMergePatch(const boost::json::value& original,
                                                    const boost::json::value& modified);

// ---- Shared by the three patch types ----------------------------------------------------------

// Container nesting depth: 0 for scalars, 1 for `{}` or `[1]`, 2 for `{"a":[]}`. Iterative, so it
// is safe on arbitrarily deep input. Stops counting at `cap` + 1 (returns that) to bound work.
int JsonNestingDepth(const boost::json::value& v, int cap = kMaxPatchNestingDepth);

// Structural equality where numbers compare by value (1 == 1.0 == 1u, as upstream's decoder turns
// integral floats into integers) and object member order is irrelevant. Iterative.
bool JsonEqual(const boost::json::value& a, const boost::json::value& b);
bool JsonEqual(const boost::json::object& a, const boost::json::object& b);

// Removes every null member of every object inside `v` (through arrays too); null array elements
// stay. This is what upstream does to values it takes verbatim from a patch. Iterative.
void RemoveNullMembers(boost::json::value& v);

// Parses a patch request body, allowing kMaxPatchNestingDepth levels. InvalidArgument
// ("error decoding patch: <reason>") when it is not valid JSON, too deep, or has a number too
// large for a double (Boost.JSON would read it as infinity; Go's decoder rejects it).
// With `duplicates`: the paths of repeated keys are appended to it (FindDuplicateFields,
// field_validation.h), found in the same pass.
util::StatusOr<boost::json::value> ParsePatchBody(std::string_view body,
                                                  std::vector<std::string>* duplicates = nullptr);

}  // namespace converge::api
