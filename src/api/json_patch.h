// JSON patch (RFC 6902, `application/json-patch+json`): an array of add/remove/replace/move/copy/
// test operations addressed by JSON pointers (RFC 6901: "/a/b", "~1" is "/", "~0" is "~", "-" is
// the end of an array).
//
// Behaviour follows what the apiserver does with evanphx/json-patch v4, including its departures
// from the RFC that clients can observe and may rely on:
//   - `replace` of a missing object member adds it (the RFC says fail). Scripts rely on this.
//   - `test` of a missing member against null succeeds (null and absent are the same to upstream).
//   - an `add`/`replace` without "value" uses null.
//   - negative array indices count from the end (-1 is the last element; for `add`, -1 appends);
//     indices may carry a sign or leading zeros ("+1", "01"), as Go's strconv.Atoi allows.
//   - `replace` and `test` with the empty path act on the whole document (a `replace` there must
//     carry an object or array); `add`/`remove`/`move`/`copy` with the empty path fail.
//   - copies may add at most kMaxJsonPatchCopyBytes (serialized) in total.
//   - a `null` patch has no operations; unknown members of an operation are ignored (RFC A.11).
//     Upstream's fieldValidation=Strict additionally rejects unknown and duplicate members with
//     422; that check belongs to the handler's strict decoding.
// Where upstream does something accidental we follow the RFC instead, and fail: `copy` from a
// missing member (upstream copies null) and pointers without a leading "/" (upstream ignores
// their first segment).
// All operations apply to a copy: the result is either the fully patched document or an error,
// never a partial state.
//
// Errors and the HTTP outcome upstream gives them:
//   kInvalidArgument    400 BadRequest: the patch is not an array of objects (message as
//                       upstream's, e.g. "json: cannot unmarshal object into Go value of type
//                       jsonpatch.Patch") or nests deeper than kMaxPatchNestingDepth.
//                       (Parse request bodies with ParsePatchBody, merge_patch.h: same code.)
//   kResourceExhausted  413 RequestEntityTooLarge: more than kMaxJsonPatchOperations operations.
//                       The message is upstream's Status message verbatim.
//   kFailedPrecondition 422 Invalid: an operation does not apply (missing path, bad index, failed
//                       `test`, unknown op, copy limit, result too deep). The message is the
//                       upstream library's wording; upstream's Status hides it and says
//                       kJsonPatchApplyFailedMessage with empty details, which the handler should
//                       send to match upstream exactly.
//
// Thread-safety: pure functions; safe to call concurrently on unshared or const arguments.
#pragma once

#include <cstdint>
#include <string_view>

#include <boost/json/value.hpp>

#include "util/status.h"

namespace converge::api {

// Upstream's cap on operations in one JSON patch (apiserver maxJSONPatchOperations).
inline constexpr std::size_t kMaxJsonPatchOperations = 10000;
// Upstream's cap on the bytes `copy` operations may add (apiserver JSONPatchMaxCopyBytes, 3 MiB).
inline constexpr std::int64_t kMaxJsonPatchCopyBytes = 3 * 1024 * 1024;
// The message of upstream's 422 Status for any operation that does not apply.
inline constexpr std::string_view kJsonPatchApplyFailedMessage =
    "the server rejected our request due to an error in our request";

// Applies the operations of `patch` (a JSON array) to a copy of `document`, in order.
util::StatusOr<boost::json::value> ApplyJsonPatch(const boost::json::value& document,
                                                  const boost::json::value& patch);

}  // namespace converge::api
