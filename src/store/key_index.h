// KeyIndex: the revisions of one key, grouped into generations (etcd's keyIndex).
//
// A generation is one lifetime of a key: it starts with the put that creates the key and ends
// with the delete (the tombstone) that removes it. The last generation is the open one; it is
// empty while the key does not exist. Every revision held here has a record in the history db;
// compaction deletes from the db exactly what Compact() drops here.
//
// Reads: Get(at) finds the newest generation that started at or before `at`; if that generation
// was closed by a tombstone at or before `at`, the key did not exist at `at`; otherwise the answer
// is the newest revision <= at in it. Versions are consecutive inside a generation, so a
// generation stores only the version of its first remaining revision.
//
// Compaction at revision C keeps exactly what a read at any revision >= C and a watch starting
// at any revision >= C (with prev_kv) can need:
//   - a closed generation whose tombstone is below C is dropped whole;
//   - in every other generation, let r be its newest revision <= C (if any). Everything older
//     than r is dropped, except that when r is exactly at C its predecessor is kept too: it is
//     the prev_kv of the event at C. (etcd keeps only r, so a watch from its compact revision
//     loses prev_kv, and a tombstone at exactly C vanishes from watches that start at C; we keep
//     both so that a watch from any retained revision is exact.)
//   A key whose only generation is empty and open is forgotten (IsEmpty()).
//
// Worked example: put@1, put@2, delete@3, put@4 on one key ("t" marks the tombstone).
//
//   generations: {created 1, versions from 1: [1 2 3t]}  {created 4, versions from 1: [4]}
//   Get(1) = rev 1, version 1, created 1     Get(3) = not found (deleted at 3)
//   Get(2) = rev 2, version 2, created 1     Get(4) = rev 4, version 1, created 4
//
//   Compaction, each time starting from the index above:
//   Compact(1): newest <= 1 in gen 0 is 1, nothing older.   -> [1 2 3t] [4]      drops nothing
//   Compact(2): newest <= 2 is 2, exactly at C: keep its    -> [1 2 3t] [4]      drops nothing
//               predecessor 1 (prev_kv of the event at 2).
//   Compact(3): tombstone exactly at C: keep it and 2.      -> [2 3t] [4]        drops 1
//               Get(3) is still "not found"; a watch from 3 sees the delete with prev_kv = rev 2.
//   Compact(4): gen 0's tombstone 3 < 4: dropped whole.     -> [4]               drops 1 2 3
//   Then put@5, put@6 (gen: created 4, versions from 1: [4 5 6]):
//   Compact(6): newest <= 6 is 6, at C: keep 5 too.          -> [5 6] versions from 2, drops 4
//
// Thread-safety: none; Index guards every KeyIndex with its lock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "store/revision.h"

namespace converge::store {

// What a read at some revision sees for one key.
struct KeyState {
  RevisionPair mod;              // the put that produced this state
  Revision create_revision = 0;  // main revision of the put that created the generation
  int64_t version = 0;           // 1 for the creating put
};

class KeyIndex {
 public:
  // A put at `rev`. Starts a new generation (created at rev.main, version 1) if the key is not
  // live. `rev` must be newer than every revision held.
  void Put(RevisionPair rev);
  // The first record of a generation seen while rebuilding from disk, whose earlier records may
  // have been compacted: starts a generation that was created at `created` and whose first
  // remaining revision `rev` has `version`. The key must not be live.
  void Restore(RevisionPair rev, Revision created, int64_t version);
  // Ends the live generation with a tombstone at `rev`. Returns false (and changes nothing) if
  // the key is not live.
  bool Tombstone(RevisionPair rev);
  // Rebuild only: a tombstone whose generation's puts were already compacted away (a crash in
  // the middle of a compaction leaves such records); it becomes a one-entry closed generation.
  void RestoreTombstone(RevisionPair rev);

  std::optional<KeyState> Get(Revision at) const;
  // The newest state if the key is live.
  std::optional<KeyState> Latest() const;
  bool IsLive() const {
    return large_ ? !large_->empty() && !large_->back().revs.empty() : !rev_.IsZero();
  }
  // The newest revision held (a tombstone if the key is deleted); zero if none.
  RevisionPair LastRevision() const;

  // Drops every revision that no read at >= at and no watch from >= at needs (see the file
  // comment), appending them to `dropped` in ascending order.
  void Compact(Revision at, std::vector<RevisionPair>* dropped);
  // True when nothing is held: the key may be forgotten.
  bool IsEmpty() const {
    return large_ ? large_->empty() || (large_->size() == 1 && (*large_)[0].revs.empty())
                  : rev_.IsZero();
  }

  // Every revision held, ascending (for tests and consistency checks).
  std::vector<RevisionPair> AllRevisions() const;

 private:
  struct Generation {
    Revision created = 0;
    int64_t first_version = 0;  // version of revs[0]
    // Ascending. In a closed generation (every one but the last) the last entry is the tombstone.
    std::vector<RevisionPair> revs;
  };

  // The general form: invariant, empty or its last element is open (holds no tombstone).
  std::vector<Generation>& Large();
  // Back to the small form when the general one holds no more than it can.
  void Normalize();

  // Most keys hold one revision: an Event is written once, and compaction leaves any other key
  // its newest revision. Such a key is held in the small form, here, without an allocation:
  // large_ null, and one open generation created at created_ whose only revision is rev_ with
  // version first_version_ — or nothing, when rev_ is zero (no write has revision 0). Anything
  // else lives in *large_. (The general form alone costs ~90 bytes more per key: a generation
  // and its revisions are two allocations.)
  Revision created_ = 0;
  int64_t first_version_ = 0;
  RevisionPair rev_;
  std::unique_ptr<std::vector<Generation>> large_;
};

}  // namespace converge::store
