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
// The views in PodFacts (controller_uid, labels) point into the pod object: they are valid while
// the caller holds the api::ObjectPtr the facts came from.
//
// Thread-safety: ComputePodFacts is a pure function; PodFactsCache is safe to use from any
// thread (one mutex).
#pragma once

#include <boost/json.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

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
  const boost::json::object* labels = nullptr;  // metadata.labels, or null
  // The labels as one string (each key and value length-prefixed, in the object's order; "n"
  // when there are none): pods with equal keys have equal labels, so a selector's answer for
  // one holds for all of them.
  std::string label_key;
};

PodFacts ComputePodFacts(const api::Object& pod);

// IsPodAvailable over facts.
bool IsPodAvailable(const PodFacts& pod, int64_t min_ready_seconds, util::Clock::WallTime now);

// A memo of ComputePodFacts keyed by object identity. An entry remembers its object weakly: it
// matches a pod only while that very object (the same control block) is alive, so an address
// reused by a later object never returns stale facts, and the memo never keeps a pod alive.
// Entries of objects that are gone are swept when the memo has doubled since the last sweep
// (amortized O(1) per insert).
class PodFactsCache {
 public:
  PodFactsCache() = default;
  PodFactsCache(const PodFactsCache&) = delete;
  PodFactsCache& operator=(const PodFactsCache&) = delete;

  // The facts of `pod` (not null). The reference, and the views in the facts, are valid while
  // the caller holds `pod`: an entry is replaced or swept only once its object is gone.
  const PodFacts& Get(const api::ObjectPtr& pod);
  size_t size() const;

 private:
  struct Entry {
    std::weak_ptr<const api::Object> object;
    PodFacts facts;
  };
  void MaybeSweepLocked();

  mutable std::mutex mu_;
  std::unordered_map<const api::Object*, Entry> entries_;  // guarded by mu_
  size_t size_after_sweep_ = 0;                            // guarded by mu_
};

}  // namespace converge::controllers
