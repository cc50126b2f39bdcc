// PodFacts: what a ReplicaSet sync reads from each Pod — activity, readiness, its controller's
// uid, its labels — extracted from the object once per object version instead of once per sync.
//
// A ReplicaSet sync looks at every pod of its namespace (claiming, counting ready and available
// replicas), and a scale-up to N pods runs about N / 500 syncs (one per create burst), so the
// per-pod cost of a sync is paid O(N²) times. Reading a fact from the pod's JSON DOM means several
// hash-table and string lookups through memory that is cold by then; reading it from a
// PodFactsCache entry is one pointer-keyed lookup. Objects are immutable once shared (DESIGN.md,
// principle 5), so a version's facts never change.
//
// The views in PodFacts (controller_uid, labels) point into the pod object, or, in facts from a
// PodFactsCache, controller_uid points at the cache's one copy of that uid: either way they are
// valid while the caller holds the api::ObjectPtr the facts came from.
//
// A sync of a ReplicaSet with N pods reads N pods' facts, so what it touches per pod should be hot:
// at 100k pods, comparing each pod's controller uid where it lies in the pod's DOM (a cache miss
// per pod) and hashing each pod's label string were most of the sync's own time (perf, 2026-12-01).
// A cache therefore keeps one copy of each controller uid (shared by all pods of a ReplicaSet)
// and numbers each distinct set of labels (label_id), which LabelMemo answers selectors by.
//
// Thread-safety: ComputePodFacts is a pure function; PodFactsCache is safe to use from any
// thread (one mutex).
#pragma once

#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/labels.h"
#include "api/object.h"
#include "util/clock.h"

namespace converge::controllers {

struct PodFacts {
  bool active = false;         // IsPodActive
  bool being_deleted = false;  // metadata.deletionTimestamp set
  bool ready = false;          // IsPodReady
  // PodReadyTime: when the pod became ready; nullopt when not ready or the time is missing.
  std::optional<util::Clock::WallTime> ready_since;
  // The uid of GetControllerOf(pod); nullopt when the pod has no (valid) controller reference.
  std::optional<std::string_view> controller_uid;
  api::ObjectView labels;  // metadata.labels, or absent
  // The labels as one string (each key and value length-prefixed, in the object's order; "n"
  // when there are none): pods with equal keys have equal labels, so a selector's answer for
  // one holds for all of them. Set by ComputePodFacts; empty in a PodFactsCache's facts, where
  // label_id stands for it.
  std::string label_key;
  // In a PodFactsCache's facts: a small number (from 1) for label_key, equal for equal label sets
  // among the facts of that cache (a number is reused only once no cached pod has its labels).
  // 0 outside a cache.
  uint32_t label_id = 0;
};

PodFacts ComputePodFacts(const api::Object& pod);

// IsPodAvailable over facts.
bool IsPodAvailable(const PodFacts& pod, int64_t min_ready_seconds, util::Clock::WallTime now);

// A memo of ComputePodFacts keyed by object identity. An entry remembers its object weakly: it
// matches a pod only while that very object (the same control block) is alive, so an address
// reused by a later object never returns stale facts, and the memo never keeps a pod alive.
// Entries of objects that are gone are swept when the memo has doubled since the last sweep
// (amortized O(1) per insert).
//
// The cached facts' controller_uid views point at the cache's shared copy of the uid, and their
// label_key is replaced by label_id (see PodFacts).
class PodFactsCache {
 public:
  PodFactsCache() = default;
  PodFactsCache(const PodFactsCache&) = delete;
  PodFactsCache& operator=(const PodFactsCache&) = delete;

  // The facts of `pod` (not null). The reference, and the views in the facts, are valid while
  // the caller holds `pod`: an entry is replaced or swept only once its object is gone.
  const PodFacts& Get(const api::ObjectPtr& pod);
  size_t size() const;
  // How many distinct controller uids and label sets the cached facts hold.
  size_t distinct_controllers() const;
  size_t distinct_label_sets() const;

 private:
  // Strings held by reference count, each with a number (from 1; a number whose string is
  // released is handed out again). The strings never move while held.
  class Interned {
   public:
    struct Handle {
      uint32_t id;
      std::string_view text;  // the interned copy
    };
    Handle Acquire(std::string_view s);
    void Release(std::string_view s);
    size_t size() const { return slots_.size(); }

   private:
    struct Hash {
      using is_transparent = void;
      size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
    };
    struct Slot {
      uint32_t id;
      size_t refs;
    };
    std::unordered_map<std::string, Slot, Hash, std::equal_to<>> slots_;
    std::vector<uint32_t> free_ids_;
    uint32_t next_id_ = 1;
  };
  struct Entry {
    std::weak_ptr<const api::Object> object;
    PodFacts facts;
    std::string_view label_key;  // the interned copy of the facts' label_key
  };
  // An entry for `object` with its facts in the interned form (controller_uid on the shared
  // copy, label_key replaced by label_id), and the release of what an entry holds.
  Entry InternLocked(const api::ObjectPtr& object, PodFacts facts);
  void ReleaseLocked(const Entry& entry);
  void MaybeSweepLocked();

  mutable std::mutex mu_;
  std::unordered_map<const api::Object*, Entry> entries_;  // guarded by mu_
  size_t size_after_sweep_ = 0;                            // guarded by mu_
  Interned controllers_;                                   // guarded by mu_
  Interned label_sets_;                                    // guarded by mu_; ids are label_ids
};

// A selector's answers over PodFacts, asked once per label set: once per label_id for a
// PodFactsCache's facts, once per pod for facts without one (label_id 0). For the loop of one sync
// over many pods; not thread-safe. The selector must outlive the memo, and the caller must hold
// the pods whose facts it asked about while it uses the memo: a held pod keeps its label set's
// number from being handed to another set.
class LabelMemo {
 public:
  explicit LabelMemo(const api::LabelSelector& selector) : selector_(selector) {}
  bool Matches(const PodFacts& pod);

 private:
  const api::LabelSelector& selector_;
  std::vector<int8_t> by_id_;  // by label_id: -1 not asked yet, else the answer
};

}  // namespace converge::controllers
