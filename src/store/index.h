// Index: the in-memory map from key to KeyIndex (etcd's treeIndex).
//
// The index answers "which revision of which key is visible at revision R" without touching
// the disk; the values are then read from the history db by revision. It holds every revision
// that is in the history db: the committer adds each committed group, the compactor removes
// what compaction drops, and Open rebuilds it from the history db.
//
// Memory: a key is one allocation holding its KeyIndex and its text, a node of the ordered set
// that points to it, and a slot of the hash that finds it (8 bytes): 193 bytes for an Event's
// ~75-byte key with its revision (index_bench's BM_IndexBytesPerKey), against 282 as a
// std::map<std::string, KeyIndex> beside a hash of views. 150,000 pods bring ~670,000 keys, three
// quarters of them their Events, which the API server keeps no other copy of.
//
// Thread-safety: every method may be called concurrently. Readers share one lock; Apply and
// CompactChunk hold it exclusively for one group or one chunk of keys.
#pragma once

#include <boost/unordered/unordered_flat_set.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
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
  using VisitFn = std::function<bool(std::string_view key, const KeyState& state)>;
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

  Index() = default;
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;
  ~Index();

 private:
  // One key: its revisions and, in the same allocation, its text (key_size bytes after the
  // struct). Made by NewEntry, freed by FreeEntry; its address never changes.
  struct Entry {
    KeyIndex index;
    uint32_t key_size = 0;
    std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_size}; }
  };
  static Entry* NewEntry(std::string_view key);
  static void FreeEntry(Entry* e);

  struct ByKey {
    using is_transparent = void;
    static std::string_view View(const Entry* e) { return e->key(); }
    static std::string_view View(std::string_view k) { return k; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return View(a) < View(b);
    }
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return std::hash<std::string_view>()(k); }
    size_t operator()(const Entry* e) const { return (*this)(e->key()); }
  };
  struct KeyEqual {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return ByKey::View(a) == ByKey::View(b);
    }
  };
  using KeySet = std::set<Entry*, ByKey>;

  Entry* FindLocked(std::string_view key) const;
  Entry* FindOrAddLocked(std::string_view key);

  mutable std::shared_mutex mu_;
  KeySet keys_;  // in key order; owns the entries; guarded by mu_
  // The same entries by key, hashed: a lookup of one key, which every write does three times
  // (its compare, its put, Apply), probes this instead of walking the tree through cold nodes;
  // only a new key walks it, to be inserted. Open addressing (no node per key). Guarded by mu_.
  boost::unordered_flat_set<Entry*, KeyHash, KeyEqual> by_key_;
};

}  // namespace converge::store
