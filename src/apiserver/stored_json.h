// Where metadata.resourceVersion goes in an object's stored JSON, found without parsing it.
//
// The store keeps objects without metadata.resourceVersion (EncodeObject); a read from the store
// (a paginated LIST, the watch cache filling at start) needs the same bytes with the revision
// spliced in. Scanning the bytes for the splice point costs a fraction of parsing them into a
// document and serializing that again.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "apiserver/cached_object.h"

namespace converge::apiserver {

// The splice point of `json`, a valid JSON object (check that first: a scan of invalid text
// answers nothing useful), as EncodeObject would have recorded it: just before the closing brace
// of the top-level "metadata" object, or, without one, a metadata object added before the
// document's closing brace. The returned EncodedObject has everything but `json` filled in.
//
// nullopt where a scan cannot be sure: metadata already holds a resourceVersion, a key is
// written with escapes, "metadata" appears twice or is not an object. Callers then parse and
// encode the object instead.
std::optional<EncodedObject> FindResourceVersionSlot(std::string_view json);

}  // namespace converge::apiserver
