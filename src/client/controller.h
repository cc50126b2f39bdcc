// Controller: runs a Reconciler over a rate-limited work queue of object keys with N workers
// (controller-runtime's controller and its reconcileHandler; seed §十's worker loop).
//
// Level-based: event handlers only enqueue keys (EnqueueHandler, EnqueueOwnerHandler, Enqueue);
// the reconciler re-reads current state from the informer caches. The queue guarantees one worker
// per key at a time and de-duplicates keys added while waiting.
//
// One place decides what happens after a reconcile (HandleResult), as controller-runtime does:
//   error (non-terminal)   → AddRateLimited: retry with per-key exponential backoff;
//   terminal error         → Forget, no retry, a Warning event on the object (reason
//                            "ReconcileError") when a recorder is configured;
//   requeue_after > 0      → Forget, then AddAfter(requeue_after): a timed re-check that does not
//                            grow the backoff;
//   requeue                → AddRateLimited;
//   success                → Forget: the key's failure history ends.
// A reconciler that throws is treated as returning an error (logged; retried with backoff).
//
// Run(stop): waits for the configured caches to sync, starts the queue's delay loop and the
// workers, and blocks until stop. Shutdown, in this order: (1) the queue shuts down: no new keys,
// delayed keys dropped; (2) each worker finishes the reconcile it is in (the reconciler sees the
// stop token) and takes no new one — keys still queued are handed back unprocessed; (3) the
// workers and the delay loop are joined; (4) Run returns.
//
// Thread-safety: Enqueue* and the handlers may be called from any thread; Run once.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "api/object.h"
#include "api/types.h"
#include "client/event_recorder.h"
#include "client/rate_limiting_queue.h"
#include "client/resource_event_handler.h"
#include "client/shared_informer.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::client {

struct ReconcileResult {
  util::Status error;     // non-OK: the reconcile failed
  bool terminal = false;  // with an error: retrying cannot help (e.g. an invalid spec)
  bool requeue = false;   // on success: reconcile again, rate limited
  util::Clock::Duration requeue_after{0};  // on success: reconcile again after this long

  static ReconcileResult Done() { return {}; }
  static ReconcileResult Requeue() { return {.requeue = true}; }
  static ReconcileResult RequeueAfter(util::Clock::Duration d) { return {.requeue_after = d}; }
  static ReconcileResult Error(util::Status s) { return {.error = std::move(s)}; }
  static ReconcileResult Terminal(util::Status s) {
    return {.error = std::move(s), .terminal = true};
  }
};

// Brings the object named by `key` towards its desired state. Never called concurrently for one
// key. `stop` fires at shutdown: return soon (an error is fine; it is not retried then).
using ReconcileFunc = std::function<ReconcileResult(const api::ObjectKey& key, std::stop_token)>;

struct ControllerOptions {
  std::string name;         // names the queue's metrics and the logs; required
  ReconcileFunc reconcile;  // required
  int workers = 1;
  // nullptr: client-go's default (max of per-key 5 ms·2ⁿ up to 1000 s, and 10 qps / burst 100).
  std::unique_ptr<RateLimiter<api::ObjectKey>> rate_limiter;
  util::Clock* clock = nullptr;       // nullptr: util::RealClock()
  util::Registry* metrics = nullptr;  // nullptr: util::DefaultRegistry()
  // Caches to sync before the first reconcile (controllers must not act on a partial cache).
  std::vector<const SharedInformer*> wait_for_sync;
  // For terminal errors: where the Warning event goes, and how to find the object it is about
  // (typically the primary informer's cache). Both optional.
  EventRecorder* recorder = nullptr;
  std::function<api::ObjectPtr(const api::ObjectKey&)> lookup;
};

class Controller {
 public:
  explicit Controller(ControllerOptions options);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  void Enqueue(const api::ObjectKey& key) { queue_.Add(key); }
  void EnqueueAfter(const api::ObjectKey& key, util::Clock::Duration d) { queue_.AddAfter(key, d); }

  // A handler that enqueues the key of every object it hears about (added, updated, deleted).
  std::shared_ptr<ResourceEventHandler> EnqueueHandler();
  // A handler for owned objects: enqueues the key of the controlling owner (ownerReference with
  // controller: true) when it is of `owner_kind` (and `owner_group`, the apiVersion's group).
  std::shared_ptr<ResourceEventHandler> EnqueueOwnerHandler(std::string owner_group,
                                                            std::string owner_kind);

  // See the header comment. Blocks until stop.
  void Run(std::stop_token stop);

  RateLimitingQueue<api::ObjectKey>& queue() { return queue_; }

  // What HandleResult did with a key (tests and metrics).
  struct Stats {
    int64_t reconciles = 0;
    int64_t errors = 0;
    int64_t terminal_errors = 0;
    int64_t requeue_after = 0;
    int64_t panics = 0;  // exceptions caught around the reconciler
  };
  Stats stats() const;

 private:
  void Worker(std::stop_token stop);
  ReconcileResult ReconcileGuarded(const api::ObjectKey& key, std::stop_token stop);
  // The one place that decides retries (see the header comment).
  void HandleResult(const api::ObjectKey& key, const ReconcileResult& result);

  const std::string name_;
  const ReconcileFunc reconcile_;
  const int workers_;
  const std::vector<const SharedInformer*> wait_for_sync_;
  EventRecorder* const recorder_;
  const std::function<api::ObjectPtr(const api::ObjectKey&)> lookup_;
  RateLimitingQueue<api::ObjectKey> queue_;

  mutable std::mutex stats_mu_;
  Stats stats_;  // guarded by stats_mu_
};

}  // namespace converge::client
