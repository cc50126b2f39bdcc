// Strategic merge patch (`application/strategic-merge-patch+json`): a JSON merge patch whose list
// handling is driven by the schema, as upstream's k8s.io/apimachinery/pkg/util/strategicpatch
// applies it server-side (StrategicMergeMapPatch).
//
// Rules, for each member of a patch object:
//   - null deletes the member; members the original lacks are added (with null members of their
//     objects removed); members whose JSON type differs from the original's replace it.
//   - objects merge recursively, unless the field's patchStrategy is "replace".
//   - lists whose field has patchStrategy "merge" are merged: lists of objects by the field's
//     patchMergeKey (an element whose key matches an existing element merges into the first such
//     element, others are added), lists of scalars as sets. All other lists are replaced.
//   - fields the schema does not know (or a null schema) behave as plain JSON merge patch: objects
//     merge, lists are replaced; the directives below still work.
// Directives:
//   - `"$patch": "replace"` in an object: the object replaces the original's (minus the marker);
//     `"$patch": "delete"`: the object becomes {}. Any other value is an error, "merge" included
//     (upstream rejects it too).
//   - in a merging list of objects, an element {"<mergeKey>": k, "$patch": "delete"} deletes
//     every element with key k; an element {"$patch": "replace"} makes the list exactly the
//     patch's other elements; "$patch": "merge" is an error (upstream: "merging lists cannot yet
//     be specified in the patch").
//   - `"$setElementOrder/<field>": [...]` fixes the order of the merged list: the listed elements
//     (objects by merge key, or scalars) come in that order; elements only the server has keep
//     their place relative to them. It must list the patch's elements in the patch's order.
//   - `"$retainKeys": [...]` in an object: members of the original not listed are cleared first;
//     every non-null member of the patch must be listed.
//   - `"$deleteFromPrimitiveList/<field>": [...]`: removes those scalars from the list.
// A value the original lacks (a new member, a replaced list, an appended list element) is taken as
// it is, directives nested inside it included, as upstream does; its strict decoding then reports
// them as unknown fields, which is the validation stage's job here too.
//
// Element order of merged lists (no $setElementOrder): patch elements come in the patch's order;
// elements only in the original keep their relative order and are interleaved by their positions
// relative to patch elements that were also in the original. A new element has no such position,
// so, as upstream, new elements go BEFORE the original's remaining elements. Worked example
// (merge key "name"): original [a, b, c], patch [c', d] gives [a, b, c', d]: a and b precede c in
// the original, so they come before c'; d follows c' as in the patch. Patch [d] alone gives
// [d, a, b, c]. kubectl always sends $setElementOrder when it changes a merging list, so it never
// sees this prepending.
//
// Deliberate differences from upstream (each where upstream panics or answers 500 for a client's
// mistake, or stores a value that its typed decoding would lose anyway):
//   - null members are removed from every value taken from the patch (upstream keeps some and
//     drops them when decoding into the Go type; Converge stores JSON, so we drop them here).
//   - `$deleteFromPrimitiveList` always deletes (upstream replaces a non-merging list with the
//     deletion list); its value must be a list.
//   - a field missing from the schema falls back to merge-patch semantics (upstream: 500 "unable
//     to find api field").
//   - values compare as JSON (numbers by value), never by Go identity (upstream panics on
//     object-valued merge keys).
//
// Errors and the HTTP outcome:
//   kInvalidArgument     400 BadRequest. The patch is not an object, nests deeper than
//                        kMaxPatchNestingDepth (ParsePatchBody rejects deeper bodies with the same
//                        code), or has a malformed directive: upstream's 400s
//                        ("invalid patch format of primitive list", "... of retainKeys", "... of
//                        setElementOrder list") and what upstream answers with a reason-less 500
//                        (a merging-list element without its merge key, an unknown `$patch`, an
//                        order list that does not match the patch, mixed element types): we answer
//                        400 because the request is at fault.
//   kFailedPrecondition  422 Invalid: "lists of lists are not supported" (upstream's 422).
// A `null` patch changes nothing (upstream decodes it as an empty patch).
//
// Thread-safety: pure functions; safe to call concurrently. TypeSchemas are immutable.
#pragma once

#include <boost/json/value.hpp>

#include "api/schema.h"
#include "util/status.h"

namespace converge::api {

// Applies `patch` to a copy of `original` (an object) using `schema`, the TypeSchema of the
// object's kind (null: no schema, every field merges as in a JSON merge patch).
util::StatusOr<boost::json::value> ApplyStrategicMergePatch(const boost::json::value& original,
                                                            const boost::json::value& patch,
                                                            const TypeSchema* schema);
// The same, patching `original` itself (no copy): for callers that own a copy already.
util::StatusOr<boost::json::value> ApplyStrategicMergePatch(boost::json::value&& original,
                                                            const boost::json::value& patch,
                                                            const TypeSchema* schema);

}  // namespace converge::api
