// ControllerExpectations: what a controller has asked the API server to do and has not yet seen
// in its informer cache (upstream's ControllerExpectations and UIDTrackingControllerExpectations).
//
// Why: the cache lags the server. A ReplicaSet controller that creates 3 pods and is woken again
// before the pod watch events arrive would count 0 pods and create 3 more. So before acting it
// records "expect 3 creations" under the controller's key; the pod handler lowers the count as
// each creation is observed; a sync acts only once the expectations are satisfied:
//
//   sync:   ExpectCreations(rs, 3) → create, create, create
//   watch:  CreationObserved(rs)  ×3       (add 3 → 0)
//   sync:   SatisfiedExpectations(rs) == true → count pods again, act if needed.
//
// A create that fails is never observed: the caller lowers the count itself (CreationObserved).
// Deletions are tracked by the key of each pod to delete (ExpectDeletions with keys), so that a
// pod observed as deleted twice (its deletionTimestamp set, then the delete itself) is counted
// once. Expectations expire after `ttl` (5 minutes upstream): a watch event lost for good must not
// wedge the controller forever.
//
// Satisfied when: no record for the key (never set, or deleted), or adds <= 0 and dels <= 0, or
// the record is older than ttl.
//
// Thread-safety: safe for concurrent use (one mutex; no callbacks).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "api/types.h"
#include "util/clock.h"

namespace converge::controllers {

inline constexpr std::chrono::minutes kExpectationsTimeout{5};

struct ExpectationsOptions {
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
  util::Clock::Duration ttl = kExpectationsTimeout;
};

class ControllerExpectations {
 public:
  explicit ControllerExpectations(ExpectationsOptions options = {});

  // True when the controller may act (see the header comment).
  bool SatisfiedExpectations(const api::ObjectKey& controller) const;

  // Replace any record for `controller` with `adds` expected creations (and no deletions).
  void ExpectCreations(const api::ObjectKey& controller, int adds);
  // Replace any record with deletions of exactly these dependents; they are counted once each
  // when DeletionObserved reports them.
  void ExpectDeletions(const api::ObjectKey& controller,
                       const std::vector<api::ObjectKey>& dependents);
  // Replace any record with `adds` creations and `dels` anonymous deletions (no keys tracked).
  void SetExpectations(const api::ObjectKey& controller, int adds, int dels);

  // A creation was observed (or will never be: the create failed).
  void CreationObserved(const api::ObjectKey& controller);
  // The deletion of `dependent` was observed (or will never be). Ignored unless `dependent` is
  // one of the keys ExpectDeletions recorded (and it is counted only once).
  void DeletionObserved(const api::ObjectKey& controller, const api::ObjectKey& dependent);
  // Lower (or raise, with negative values) the counts directly.
  void LowerExpectations(const api::ObjectKey& controller, int adds, int dels);
  void RaiseExpectations(const api::ObjectKey& controller, int adds, int dels);

  // Forget the controller (it was deleted).
  void DeleteExpectations(const api::ObjectKey& controller);

  // The current counts, for tests and logs; nullopt when there is no record.
  struct Counts {
    int64_t adds = 0;
    int64_t dels = 0;
    util::Clock::TimePoint set_at;
  };
  std::optional<Counts> Get(const api::ObjectKey& controller) const;

 private:
  struct Record {
    int64_t adds = 0;
    int64_t dels = 0;
    util::Clock::TimePoint set_at;
    std::set<api::ObjectKey> pending_deletes;  // keys not yet observed deleted
  };

  util::Clock* const clock_;
  const util::Clock::Duration ttl_;
  mutable std::mutex mu_;
  std::map<api::ObjectKey, Record> records_;  // guarded by mu_
};

}  // namespace converge::controllers
