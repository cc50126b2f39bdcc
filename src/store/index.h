// Index: the in-memory map from key to KeyIndex (etcd's treeIndex).
//
// The index answers "which revision of which key is visible at revision R" without touching
// the disk; the values are then read from the history db by revision. It holds every revision
// that is in the history db: the committer adds each committed group, the compactor removes
// what compaction drops, and Open rebuilds it from the history db.
//
// Thread-safety: every method may be called concurrently. Readers share one lock; Apply and
// CompactChunk hold it exclusively for one group or one chunk of keys.
#pragma once

#include <boost/unordered/unordered_flat_map.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "store/key_index.h"
#include "store/record.h"
#include "util/status.h"

namespace converge::store {

class Index {
 public:
  // Revision meaning "the newest state" for Get and Visit.
  static constexpr Revision kLatest = INT64_MAX;

  std::optional<KeyState> Get(std::string_view key, Revision at) const;

  // Calls fn(key, state) for every key live at `at` in the etcd range (start, end) (kv.h), in
  // key order, until fn returns false. fn runs under the read lock: it must be quick and must
  // not call into the Index.
  using VisitFn = std::function<bool(const std::string& key, const KeyState& state)>;
  void Visit(std::string_view start, std::string_view end, Revision at, const VisitFn& fn) const;

  // One committed change. A put of a key that is not live starts a new generation.
  struct Change {
    std::string key;
    RevisionPair rev;
    bool tombstone = false;
  };
  void Apply(const std::vector<Change>& changes);

  // Rebuild: adds the record found in the history db at `rev` (records must come in revision
  // order). Checks that it continues the key's history consistently; a record at or below
  // `lenient_upto` (the scheduled compact revision) may follow a gap that an interrupted
  // compaction left. Returns DataLoss on an inconsistency.
  util::Status Restore(RevisionPair rev, const RecordView& record, Revision lenient_upto);

  // Compacts (KeyIndex::Compact) at most `max_keys` keys starting at `from` (inclusive),
  // forgetting keys left empty; appends dropped revisions to `dropped`. Returns the key to
  // resume at, or nullopt when the end was reached.
  std::optional<std::string> CompactChunk(Revision at, const std::string& from, size_t max_keys,
                                          std::vector<RevisionPair>* dropped);

  size_t KeyCount() const;
  // Every revision held for `key`, ascending (tests).
  std::vector<RevisionPair> RevisionsForTest(std::string_view key) const;

 private:
  using KeyMap = std::map<std::string, KeyIndex, std::less<>>;
  KeyMap::const_iterator FindLocked(std::string_view key) const;
  KeyMap::iterator FindOrAddLocked(std::string_view key);

  mutable std::shared_mutex mu_;
  KeyMap keys_;  // guarded by mu_
  // keys_'s entries by key, hashed (the views are of keys_'s own keys, whose nodes never move):
  // a lookup of one key, which every write does three times (its compare, its put, Apply),
  // probes this instead of walking the tree through cold nodes; only a new key walks it, to be
  // inserted. Open addressing (no node per key): ~28 bytes per key. Guarded by mu_.
  boost::unordered_flat_map<std::string_view, KeyMap::iterator> by_key_;
};

}  // namespace converge::store
