// SharedInformer: one cache of one collection, kept current by a Reflector, shared by any number
// of event handlers (client-go's sharedIndexInformer).
//
// Guarantees (client-go's, restated):
//   - The cache (indexer()) converges to the server's state: after the informer has processed a
//     list or watch event at resourceVersion R, the cache equals the collection at R (modulo
//     events still queued). Reads are of some recent state, never a consistent read.
//   - Each handler sees every change of every object in order, possibly compressed (several
//     changes of one key may arrive as one update); deletions that happened while disconnected
//     arrive as tombstones (DeletedObject::final_state_unknown).
//   - Before HasSynced() is true the cache may be incomplete; controllers wait for it
//     (WaitForCacheSync) before acting on absence.
//   - Handlers are isolated: each has its own buffer and thread (processor_listener.h), unless
//     it asks to be called inline on the informer's thread (HandlerOptions::inline_delivery).
//   - Objects are immutable; the cache hands out shared_ptr<const Object>.
//
// Lifecycle: construct, add indexers and handlers, Run(stop) on a thread of your own (it blocks);
// handlers may also be added while it runs (they get the current cache as initial adds). Run
// once. The reflector lists and watches on Run's thread, and what it stores in the DeltaFIFO is
// popped, applied to the cache and handed to the handlers' buffers right there, before it reads
// the next event (client-go pops on a goroutine of its own; here that would cost a thread wake-up
// per event). Shutdown order, when stop fires: (1) the reflector's list/watch is cancelled and
// it returns; (2) every handler thread stops (undelivered notifications are dropped) and is
// joined, and inline handlers are stopped; (3) Run returns.
//
// Thread-safety: every method is safe to call concurrently. Lock order: the DeltaFIFO's lock
// before delivery_mu_ (taken inside a pop) before the Indexer's.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "client/delta_fifo.h"
#include "client/index_funcs.h"
#include "client/indexer.h"
#include "client/list_watch.h"
#include "client/processor_listener.h"
#include "client/reflector.h"
#include "client/resource_event_handler.h"
#include "util/clock.h"

namespace converge::client {

struct SharedInformerOptions {
  std::string name = "informer";                  // for logs
  std::unique_ptr<ListerWatcher> lister_watcher;  // required
  // Resync period for handlers that do not set their own; zero: none.
  util::Clock::Duration default_resync{0};
  Indexers indexers = DefaultIndexers();
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
  // Reflector settings (lister_watcher, store, clock, resync are filled in by the informer).
  ReflectorOptions reflector;
};

class SharedInformer;

// Returned by AddEventHandler: tells whether that handler has seen the whole initial list.
class HandlerRegistration {
 public:
  bool HasSynced() const;

 private:
  friend class SharedInformer;
  std::shared_ptr<ProcessorListener> listener_;
  const SharedInformer* informer_ = nullptr;
};

class SharedInformer {
 public:
  explicit SharedInformer(SharedInformerOptions options);
  ~SharedInformer();
  SharedInformer(const SharedInformer&) = delete;
  SharedInformer& operator=(const SharedInformer&) = delete;

  // Adds a handler. On a running informer the handler first gets every cached object as an
  // initial OnAdd. FailedPrecondition once the informer has stopped.
  util::StatusOr<HandlerRegistration> AddEventHandler(std::shared_ptr<ResourceEventHandler> handler,
                                                      HandlerOptions options = {});
  // Stops delivering to a handler (its thread ends).
  void RemoveEventHandler(const HandlerRegistration& registration);

  // Adds indexes (before or after Run; existing objects are indexed at once).
  util::Status AddIndexers(Indexers indexers);

  // Lists, watches and delivers until stop. Call once.
  void Run(std::stop_token stop);

  // The initial list has been stored and delivered to the cache (handlers may still be
  // working through it: see HandlerRegistration::HasSynced).
  bool HasSynced() const;
  // Blocks until HasSynced or stop; returns HasSynced().
  bool WaitForCacheSync(std::stop_token stop) const;
  bool IsStopped() const { return stopped_.load(); }

  const Indexer& indexer() const { return indexer_; }
  // The resourceVersion of the last list or watch event the reflector applied.
  std::string LastSyncResourceVersion() const;
  const std::string& name() const { return options_.name; }

 private:
  friend class HandlerRegistration;
  struct Entry {
    std::shared_ptr<ProcessorListener> listener;
    std::jthread thread;  // running listener->Run once the informer runs
  };

  class Store;

  // Pops everything queued in fifo_ and delivers it (the reflector's writes call it, Store).
  void Process();
  // DeltaFIFO process callback (FIFO lock and delivery_mu_ held): applies deltas to the indexer
  // and turns them into notifications.
  void ApplyLocked(Deltas& deltas, bool is_in_initial_list, std::vector<Notification>* out,
                   std::vector<bool>* sync_only);
  void DistributeLocked(const Notification& n, bool sync_only);
  // Reflector resync hook: decides which listeners are due.
  bool ShouldResync();
  void StartListenerLocked(Entry& entry);
  // The initial list has been handed to every listener.
  void MarkSyncedLocked();
  void MarkSynced();

  SharedInformerOptions options_;
  util::Clock* const clock_;
  Indexer indexer_;
  DeltaFIFO fifo_;
  std::unique_ptr<Store> store_;  // what the reflector writes: fifo_, plus sync detection

  mutable std::mutex reflector_mu_;
  std::shared_ptr<Reflector> reflector_;  // guarded by reflector_mu_; created by Run

  // Held while deltas are applied and distributed, and while a handler is added with its
  // replay: a new handler sees each change exactly once, either in the replay or afterwards.
  mutable std::mutex delivery_mu_;
  std::vector<Entry> listeners_;  // guarded by delivery_mu_
  // Listeners due for a resync (the last ShouldResync); guarded by delivery_mu_.
  std::vector<std::shared_ptr<ProcessorListener>> syncing_;
  util::Clock::Duration resync_check_period_{0};  // guarded by delivery_mu_
  bool running_ = false;                          // guarded by delivery_mu_
  std::stop_source listeners_stop_;

  mutable std::mutex sync_mu_;
  mutable std::condition_variable_any sync_cv_;
  bool synced_ = false;  // guarded by sync_mu_
  std::atomic<bool> stopped_{false};
};

// Blocks until every informer has synced or stop fires; returns whether all synced.
bool WaitForCacheSync(std::stop_token stop, const std::vector<const SharedInformer*>& informers);

}  // namespace converge::client
