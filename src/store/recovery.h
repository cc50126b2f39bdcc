// Recovery: rebuilds the in-memory index from the history db at Open, and proves the files
// intact while doing so.
//
// One pass over the history db in revision order checks that
//   - every record's checksum matches (when verify_checksums) and it parses;
//   - every record continues its key's history: a put is the next version of the live
//     generation (same create_revision, prev pointing at the previous change) or creates a new
//     one; a tombstone ends a live generation (Index::Restore). Gaps are allowed only at or
//     below the scheduled compact revision, where an interrupted compaction may leave them;
//   - no record lies above the current revision, and the newest one is exactly at it (records
//     at the current revision are never compacted);
//   - the number of records equals the meta record count and LMDB's own count;
//   - the meta values parse and finished <= scheduled <= current.
// Any violation is DataLoss naming what is wrong; the store is then not opened.
#pragma once

#include <cstdint>

#include "store/backend.h"
#include "store/index.h"
#include "util/status.h"

namespace converge::store {

struct RecoveredState {
  Revision current = 0;
  Revision scheduled_compact = 0;
  Revision finished_compact = 0;
  uint64_t record_count = 0;
};

util::StatusOr<RecoveredState> Recover(Backend& backend, Index* index, bool verify_checksums);

}  // namespace converge::store
