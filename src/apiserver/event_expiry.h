// EventExpiry: Events live a limited time after their last write (upstream's --event-ttl, one
// hour), so that a long-running cluster does not keep every Event it ever recorded.
//
// Upstream attaches each Event to an etcd lease. The store interface has no leases, so the API
// server sweeps instead. Each sweep notes (time, current revision). An Event whose mod_revision
// is at or below the newest revision noted at least `ttl` ago was last written at least `ttl`
// ago, and is deleted — on the condition that its mod_revision is unchanged, so that one written
// meanwhile stays. An Event therefore lives between ttl and ttl + one sweep period after its last
// write. The notes are not persisted: after a restart every stored Event's time starts again at
// the start. Deletions go straight to the store, as an etcd lease's expiry does: watchers see
// DELETED, and nothing else (admission, finalizers) is involved.
//
// A sweep reads the Events' keys (no values) a page at a time; it reads nothing when no revision
// has come of age since the last complete sweep.
//
// Thread-safety: Start, Sweep and Run are called from one thread at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "store/kv.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::apiserver {

struct EventExpiryOptions {
  store::KV* kv = nullptr;  // not owned
  util::Clock* clock = &util::RealClock();
  std::chrono::milliseconds ttl{std::chrono::hours(1)};
  // Storage prefix of the Events (core/v1 and events.k8s.io/v1 share it).
  std::string prefix = "/registry/events/";
  // Between sweeps; 0: a tenth of the ttl, within [1 s, 1 min].
  std::chrono::milliseconds sweep_period{0};
  // Keys read per range request.
  int64_t page = 10000;
  // Deletes per transaction.
  size_t batch = 128;
};

class EventExpiry {
 public:
  explicit EventExpiry(EventExpiryOptions options);

  // Notes the time and revision of the start: Events stored before it expire ttl after it.
  void Start();
  // Notes the time and revision, then deletes the Events that expired. Returns how many.
  util::StatusOr<size_t> Sweep();
  // Sweeps every sweep period until `stop`; errors are logged and the next sweep tries again.
  void Run(std::stop_token stop);

  std::chrono::milliseconds sweep_period() const { return sweep_period_; }

 private:
  struct Expired {
    std::string key;
    store::Revision mod_revision;
  };
  // Deletes `batch` (each only if unchanged); the number deleted.
  util::StatusOr<size_t> Delete(const std::vector<Expired>& batch);

  const EventExpiryOptions options_;
  const std::chrono::milliseconds sweep_period_;
  // (time, the store's revision then), oldest first; the front is the newest note at least ttl
  // old once one is.
  std::deque<std::pair<util::Clock::TimePoint, store::Revision>> notes_;
  // Every Event at or below it has been dealt with by a complete sweep.
  store::Revision swept_through_ = 0;
};

}  // namespace converge::apiserver
