// ProcessorListener: one handler of a SharedInformer with its own buffer and thread (client-go's
// processorListener). The informer appends notifications; the listener's thread delivers them in
// order. Because appending never waits for the handler, a slow or stuck handler delays only its
// own notifications — unless the listener is bounded (buffer_limit > 0), which trades that
// isolation for bounded memory: Add then waits for room, holding up the informer.
//
// An inline listener (HandlerOptions::inline_delivery) has neither buffer nor thread: Add calls
// the handler at once, on the informer's thread. client-go gives every handler a goroutine of its
// own, which costs little; a thread here costs a wake-up and a context switch per notification,
// for handlers that mostly just put a key on a work queue.
//
// Thread-safety: Add, Run's stop, HasSynced and the resync methods may be called from any
// thread; Run occupies one thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <stop_token>

#include "client/resource_event_handler.h"
#include "util/clock.h"

namespace converge::client {

struct Notification {
  enum class Kind { kAdd, kUpdate, kDelete };
  Kind kind = Kind::kAdd;
  api::ObjectPtr old_obj;  // kUpdate
  api::ObjectPtr obj;      // kAdd, kUpdate (new)
  DeletedObject deleted;   // kDelete
  // Part of the informer's initial list (or of the replay for a late handler). OnAdd gets it
  // as its flag; every kind counts towards HasSynced.
  bool is_initial_list = false;
};

struct HandlerOptions {
  // How often the handler gets every cached object again as OnUpdate(obj, obj); zero: never.
  // Values below the informer's resync check period are raised to it.
  util::Clock::Duration resync_period{0};
  // Largest number of undelivered notifications; zero: unbounded (the default, as client-go).
  size_t buffer_limit = 0;
  // Deliver on the informer's own thread, as each change is applied to its cache, instead of
  // through a buffer and a thread of the handler's own. For handlers that only look things up
  // and enqueue (every built-in controller's): it saves a thread wake-up per notification. The
  // handler then runs while the informer holds its delivery lock, so it must not block, and must
  // not add or remove handlers of the same informer (that deadlocks); a slow one holds up the
  // informer's cache and its other handlers. buffer_limit does not apply.
  bool inline_delivery = false;
};

class ProcessorListener {
 public:
  ProcessorListener(std::shared_ptr<ResourceEventHandler> handler, HandlerOptions options,
                    util::Clock* clock);

  // Queues a notification. Unbounded listeners never wait; bounded ones wait for room (or for
  // the listener to stop, then the notification is dropped). An inline listener delivers it
  // before returning (callers serialize their Adds: the informer holds its delivery lock).
  void Add(Notification n);

  // Delivers notifications until stop; undelivered ones are dropped then. A handler that throws
  // is logged and skipped, never stops the listener. Not called for an inline listener.
  void Run(std::stop_token stop);
  // Stops the listener: later Adds are dropped, undelivered notifications too (Run's stop does
  // this; an inline listener, which has no Run, is stopped by its informer).
  void Stop();
  bool is_inline() const { return options_.inline_delivery; }

  // Synced (client-go's handler HasSynced): the informer has handed over its whole initial list
  // (MarkUpstreamSynced) and this listener has delivered every notification of it (those Added
  // with is_initial_list).
  void MarkUpstreamSynced();
  bool HasSynced() const;

  // Resync bookkeeping, driven by the informer's resync check.
  bool ShouldResync(util::Clock::TimePoint now);
  void DetermineNextResync(util::Clock::TimePoint now);
  util::Clock::Duration resync_period() const;
  void set_resync_period(util::Clock::Duration d);

  size_t pending() const;
  int64_t delivered() const;

 private:
  void Deliver(const Notification& n);

  const std::shared_ptr<ResourceEventHandler> handler_;
  HandlerOptions options_;  // resync_period guarded by mu_ after construction
  util::Clock* const clock_;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;        // notified on Add (and stop)
  std::condition_variable_any room_cv_;   // notified when a bounded buffer drains
  std::deque<Notification> buffer_;       // guarded by mu_
  bool stopped_ = false;                  // guarded by mu_
  int64_t initial_pending_ = 0;           // guarded by mu_
  bool upstream_synced_ = false;          // guarded by mu_
  util::Clock::TimePoint next_resync_{};  // guarded by mu_
  int64_t delivered_ = 0;                 // guarded by mu_
};

}  // namespace converge::client
