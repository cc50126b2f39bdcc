// The watch cache: one in-memory, always-current copy of every resource, fed by ONE store watch,
// from which the API server serves lists, watches and cached gets (upstream's Cacher).
//
// Data flow:
//
//   store ──Watch("/registry/", prev revisions…)──▶ Cacher (one dispatcher thread)
//                                                    │ parses each event ONCE, encodes it ONCE
//                                                    ▼
//                           WatchCache per storage prefix ("/registry/pods", …)
//                           ├─ objects_: current state, by storage key (lists, gets)
//                           ├─ history_: the events of the last 75 s, 100 to 10,000 of them
//                           │  (watch resumption from a resourceVersion)
//                           └─ watchers_: bounded queues; every watcher gets the same bytes
//
// Guarantees:
//   - Watch from resourceVersion R delivers exactly the events with revision > R, in order,
//     each once; all events of one revision are delivered together. R older than the history
//     window fails with Expired (410): the client relists.
//   - A slow watcher never blocks the dispatcher, a writer or another watcher: its queue is bounded
//     and it is terminated (its stream ends; clients resume from their last resourceVersion).
//   - revision(): every event up to it has been applied. WaitForRevision lets a reader ask for a
//     state at least as new as the store's current revision (a consistent read from the cache).
//
// Lock order: Cacher::dispatch_mu_ → Cacher::caches_mu_ → WatchCache::mu_ → CacheWatcher::mu_;
// WatchCache::offers_mu_ is taken alone.
// Wake callbacks run with no lock held.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/fields.h"
#include "api/labels.h"
#include "api/object.h"
#include "api/resource.h"
#include "apiserver/cached_object.h"
#include "apiserver/request.h"
#include "store/kv.h"
#include "util/clock.h"

namespace converge::apiserver {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };
std::string_view WatchEventTypeName(WatchEventType t);

// One change, as every watcher of its resource sees it (a selector can turn a MODIFIED into an
// ADDED or DELETED for one watcher).
class WatchEvent {
 public:
  WatchEvent(WatchEventType type, CachedObjectPtr object, CachedObjectPtr prev);
  WatchEventType type() const { return type_; }
  const CachedObjectPtr& object() const { return object_; }
  const CachedObjectPtr& prev() const { return prev_; }  // null for ADDED
  store::Revision revision() const { return object_->revision; }
  // `{"type":"<as>","object":<object>}\n` as three chunks: a constant head, the object's shared
  // bytes and a constant tail, so that no frame copies the object (transports write chunks as
  // one piece).
  void AppendFrame(WatchEventType as, std::vector<std::shared_ptr<const std::string>>* out) const;

 private:
  const WatchEventType type_;
  const CachedObjectPtr object_;
  const CachedObjectPtr prev_;
};
using WatchEventPtr = std::shared_ptr<const WatchEvent>;

// What one watch or list selects.
struct WatchFilter {
  std::string ns;    // empty = every namespace
  std::string name;  // empty = every name (set from fieldSelector metadata.name=...)
  api::LabelSelector labels;
  api::FieldSelector fields;
  bool Matches(const api::ResourceInfo& info, const CachedObject& obj) const;
};

struct WatchCacheOptions {
  // The event history of one resource, from which watches resume, is sized by that resource's
  // own rate of change, as upstream's watch cache sizes its window: it keeps the events of the
  // last `history_window` (upstream's eventFreshDuration, 75 s: an informer gets a bookmark
  // every 60 s, so it can always resume), but at least `history_min` events (upstream's lower
  // bound, 100) and at most `history_capacity`. A watch from a resourceVersion older than the
  // history gets 410 Expired and relists (upstream's watch cache behaves the same).
  //
  // Unlike upstream's ring, which only shrinks when it is full, events older than the window are
  // dropped as they age (ExpireHistory): a storm's superseded versions are not held once it is
  // over. Upstream's upper bound is 100 × 1024; the default here is 10,000 (--watch-cache-size),
  // because an event of the history may hold a superseded version of its object: 102,400 events
  // of a storm of pod changes would hold ~400 MB of pods' JSON.
  size_t history_capacity = 10000;
  size_t history_min = 100;
  std::chrono::milliseconds history_window{std::chrono::seconds(75)};
  // Events queued per watcher before it is judged too slow and terminated.
  size_t watcher_buffer = 10000;
  // The JSON of the newest `recent_json` versions is kept decompressed (CachedObject holds it
  // compressed): the writes that follow a write read it (a pod's binding and status updates come
  // within a second of its creation), and so do the HTTP watchers of a fresh event. 4,096 pods
  // are ~16 MB; at 3,000 pod writes/s they cover the last ~1.4 s.
  size_t recent_json = 4096;
  // The parsed objects without managedFields of the newest `recent_objects` versions (the
  // writer's, when it handed it over) stay alive: in-process watchers read a version at
  // different times, and one that only looks at it (the garbage collector's graph) may drop it
  // before one that keeps it (the scheduler's cache) reads it, which would then parse it again.
  // Most are held by informers' caches anyway; the rest cost ~9 KB per pod. With 1,024, ~20
  // pods were parsed again while 10,000 were scaled up (against ~9,000 without the ring).
  size_t recent_objects = 2048;
  // Whether the cache keeps the current objects. Without them (Events: CacherOptions::
  // history_only) it keeps only the event history: lists and gets go to the store, a watch that
  // starts with the current state is handed that state read from the store
  // (WatchOptions::initial_objects), and the previous state of a change comes with the store's
  // event (prev_kv) instead of from the cache.
  bool keep_objects = true;
  // Times the events of the history (history_window).
  util::Clock* clock = &util::RealClock();
};

// One item a watcher delivers: an event (as a given type) or a bookmark.
struct WatchItem {
  WatchEventPtr event;  // null for bookmarks
  WatchEventType as = WatchEventType::kModified;
  store::Revision bookmark_revision = 0;
  bool initial_events_end = false;  // the bookmark that ends sendInitialEvents
};

// The consumer side of one watch. Thread-safety: Push/Terminate are called by the cache;
// Poll/Stop by the consumer; all are safe concurrently.
class CacheWatcher {
 public:
  // `decoders`, if given, counts this watcher until it is stopped or destroyed (WatchCache::
  // SeedsDecodedObjects).
  CacheWatcher(WatchFilter filter, size_t buffer, bool bookmarks,
               std::shared_ptr<std::atomic<int>> decoders = nullptr);
  ~CacheWatcher();
  CacheWatcher(const CacheWatcher&) = delete;
  CacheWatcher& operator=(const CacheWatcher&) = delete;

  enum class PollResult { kData, kPending, kEnd };
  // Moves queued items to `out`. On kPending, `wake` is called once when there is news.
  PollResult Poll(std::vector<WatchItem>* out, std::function<void()> wake);
  // The consumer is done; the cache drops the watcher at its next event.
  void Stop();
  bool stopped() const { return stopped_.load(); }

  const WatchFilter& filter() const { return filter_; }
  bool wants_bookmarks() const { return bookmarks_; }

  // Producer side (called by WatchCache). Returns the wake callback to run after unlocking, if
  // any. An overflowing queue terminates the watcher.
  std::function<void()> Push(WatchItem item);
  std::function<void()> Terminate();
  bool terminated() const;
  store::Revision last_sent_revision() const { return last_revision_.load(); }
  std::chrono::steady_clock::time_point last_bookmark;  // used by the cache only

 private:
  const WatchFilter filter_;
  const size_t buffer_;
  const bool bookmarks_;
  mutable std::mutex mu_;
  std::deque<WatchItem> queue_;  // guarded by mu_
  bool terminated_ = false;      // guarded by mu_; no more items after the queue drains
  std::function<void()> wake_;   // guarded by mu_
  std::atomic<bool> stopped_{false};
  std::atomic<store::Revision> last_revision_{0};
  // Takes this watcher out of `decoders_` (once: on Stop or destruction).
  void Uncount();

  const std::shared_ptr<std::atomic<int>> decoders_;
  std::atomic<bool> uncounted_{false};
};

// The cache of one storage prefix. Thread-safety: all methods are safe concurrently; only the
// Cacher's dispatcher thread calls the mutators (Reset, Apply, Advance, Tick).
class WatchCache {
 public:
  WatchCache(std::shared_ptr<const api::ResourceInfo> info, WatchCacheOptions options);

  const api::ResourceInfo& info() const { return *info_; }
  // WatchCacheOptions::keep_objects: without them, List, Get and size() see nothing.
  bool keeps_objects() const { return options_.keep_objects; }

  struct ListResult {
    std::vector<CachedObjectPtr> items;  // in storage-key order
    store::Revision revision = 0;
    // When more matched beyond the limit and the filter selects by namespace alone: how many
    // (upstream's remainingItemCount, which it gives only for lists without a selector).
    std::optional<int64_t> remaining;
  };
  // Objects matching `filter` whose storage key is >= start_key (for pagination), at most
  // `limit` (0 = all); `more` tells whether more matched beyond the limit.
  ListResult List(const WatchFilter& filter, std::string_view start_key = {}, size_t limit = 0,
                  bool* more = nullptr) const;
  // The object at `storage_key`, or null; `revision` receives the cache's revision.
  CachedObjectPtr Get(const std::string& storage_key, store::Revision* revision = nullptr) const;
  store::Revision revision() const;
  size_t size() const;

  struct WatchOptions {
    // Deliver events with revision > from_revision. nullopt = start with synthetic ADDED events
    // for the current state (resourceVersion unset or "0").
    std::optional<store::Revision> from_revision;
    bool bookmarks = false;
    // sendInitialEvents: after the synthetic ADDED events, a bookmark marked initial-events-end.
    bool initial_events_end_bookmark = false;
    // With from_revision: synthetic ADDED events for those of these objects that match (the
    // state at from_revision, read from the store by the caller) before the events after it.
    // How a cache without objects (keep_objects false) starts a watch with the current state;
    // such a cache delivers no initial state without them.
    std::optional<std::vector<CachedObjectPtr>> initial_objects;
    // The consumer is in-process and reads each event's CachedObject::
    // DecodedWithoutManagedFields (an in-process transport's watch).
    bool decodes_without_managed_fields = false;
  };
  // Fails with Expired (kOutOfRange, "too old resource version") when from_revision is older
  // than the history window.
  util::StatusOr<std::shared_ptr<CacheWatcher>> Watch(WatchFilter filter, WatchOptions options,
                                                      size_t buffer);

  // A write about to be committed (cached_object.h): Apply takes its entry for the put of
  // exactly those bytes instead of parsing and encoding them again. The writer settles it once
  // its transaction is done: Withdraw when nothing was put (failed, or its compare did not
  // hold), Committed when the put was made at `revision`. The store's event may reach the cache
  // after the writer has its answer, so a committed offer stays until Apply takes it, or until
  // Apply or Reset has passed `revision` without taking it.
  void Offer(std::shared_ptr<PendingWrite> write);
  void Withdraw(const std::shared_ptr<PendingWrite>& write);
  void Committed(const std::shared_ptr<PendingWrite>& write, store::Revision revision);
  // Offers not yet taken or settled away (for tests).
  size_t offers() const;
  // Whether a writer should seed its committed version's parsed object
  // (CachedObject::SeedDecodedWithoutManagedFields): some watcher of this cache decodes them.
  bool SeedsDecodedObjects() const { return decoders_->load(std::memory_order_relaxed) > 0; }

  // --- dispatcher side ---
  // Replaces the whole state (initial load, relist after compaction). Terminates every watcher.
  void Reset(std::vector<CachedObjectPtr> objects, store::Revision revision);
  // Applies the events of one revision.
  void Apply(const std::vector<store::Event>& events, store::Revision revision);
  // The global revision moved without events for this prefix.
  void Advance(store::Revision revision);
  // Sends due bookmarks.
  void Tick(std::chrono::steady_clock::time_point now, std::chrono::milliseconds interval);
  // Drops the events older than the history window beyond the minimum kept
  // (WatchCacheOptions::history_window); Apply does it too.
  void ExpireHistory();
  // Events in the history now (for tests and metrics).
  size_t history_size() const;
  void TerminateAll();
  // Fault injection (compaction): forgets the event history, so that only watches from the
  // current revision resume (older ones get 410 Expired and relist), and ends every watch.
  void ForgetHistory();

 private:
  // Pushes `ev` to every interested watcher; collects wake callbacks.
  void DispatchLocked(const WatchEventPtr& ev, std::vector<std::function<void()>>* wakes);
  void AddHistoryLocked(WatchEventPtr ev, util::Clock::TimePoint now);
  // Drops events beyond history_capacity, and those older than the window beyond history_min.
  void TrimHistoryLocked(util::Clock::TimePoint now);

  // The entry of the offered write that put exactly `kv`, if any (the offer is removed), and in
  // *json its JSON as the write spliced it: the write holds it, and may be gone once the offer is
  // (the writer has its answer), taking the entry's weakly held JSON with it.
  CachedObjectPtr TakeOffer(const store::KeyValue& kv, std::shared_ptr<const std::string>* json);
  // Everything up to `revision` is applied: drops the committed offers it did not take.
  void SettleOffers(store::Revision revision);

  const std::shared_ptr<const api::ResourceInfo> info_;
  const WatchCacheOptions options_;

  struct OfferedWrite {
    std::shared_ptr<PendingWrite> write;
    store::Revision committed = 0;  // 0 until the writer knows its put was made
  };
  mutable std::mutex offers_mu_;
  // Writes in flight, by storage key (several writers may race on one key).
  std::unordered_multimap<std::string, OfferedWrite> offers_;  // offers_mu_
  store::Revision offers_settled_ = 0;  // offers_mu_: SettleOffers' newest revision
  // Live watchers with WatchOptions::decodes_without_managed_fields.
  const std::shared_ptr<std::atomic<int>> decoders_ = std::make_shared<std::atomic<int>>(0);

  mutable std::mutex mu_;
  // Entries ordered by their storage key, found by a key alone (the key is the entry's own: a
  // map would hold every key a second time).
  struct ByStorageKey {
    using is_transparent = void;
    static std::string_view Key(const CachedObjectPtr& o) { return o->storage_key; }
    static std::string_view Key(std::string_view key) { return key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Key(a) < Key(b);
    }
  };
  using ObjectSet = std::set<CachedObjectPtr, ByStorageKey>;
  ObjectSet objects_;  // guarded by mu_
  // objects_' entries again, hashed by storage key: a get and an event's lookup cost one probe
  // instead of a walk of the tree (at 100,000 pods, ~17 string compares through cold entries,
  // 2.6 % of the all-in-one server's CPU in perf, 2026-12-02). The set keeps the key order lists
  // page in. An event that replaces an object assigns the new version into the set's element in
  // place (the same key, so the order holds), which keeps every iterator here valid.
  struct IteratorHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>()(key); }
    size_t operator()(ObjectSet::const_iterator it) const { return (*this)((*it)->storage_key); }
  };
  struct IteratorKeyEqual {
    using is_transparent = void;
    static std::string_view Key(ObjectSet::const_iterator it) { return (*it)->storage_key; }
    static std::string_view Key(std::string_view key) { return key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Key(a) == Key(b);
    }
  };
  std::unordered_set<ObjectSet::const_iterator, IteratorHash, IteratorKeyEqual>
      index_;  // guarded by mu_
  // objects_.end() when absent.
  ObjectSet::const_iterator FindLocked(std::string_view storage_key) const;
  // How many of objects_ are in each namespace (namespaced resources): a page of a list counts
  // what it left out without walking the rest (ListResult::remaining). Guarded by mu_.
  std::map<std::string, int64_t, std::less<>> namespace_sizes_;
  // `hint`: where `obj` goes, if known (std::set::insert's hint: the element after it).
  void InsertLocked(CachedObjectPtr obj, ObjectSet::const_iterator hint);
  // Puts `obj` in the place of the entry at `it`, which has the same storage key.
  void ReplaceLocked(ObjectSet::const_iterator it, CachedObjectPtr obj);
  void EraseLocked(ObjectSet::const_iterator it);
  struct HistoryEntry {
    WatchEventPtr event;
    util::Clock::TimePoint recorded;
  };
  std::deque<HistoryEntry> history_;  // guarded by mu_
  // Decompressed JSON of the newest versions (WatchCacheOptions::recent_json), a ring: the
  // entries' json() shares it while it is here. Guarded by mu_.
  std::vector<std::shared_ptr<const std::string>> recent_json_;
  size_t recent_next_ = 0;  // guarded by mu_
  // Keeps `json`, the JSON of compressed entry `obj` (null: none at hand), in recent_json_.
  void KeepJsonAtHandLocked(const CachedObject& obj, std::shared_ptr<const std::string> json);
  // The newest versions' parsed objects (WatchCacheOptions::recent_objects), a ring. Guarded
  // by mu_.
  std::vector<api::ObjectPtr> recent_objects_;
  size_t recent_object_next_ = 0;  // guarded by mu_
  // Keeps `obj`'s parsed object (if at hand) in recent_objects_; what leaves the ring goes to
  // *dropped, for the caller to destroy outside the lock.
  void KeepObjectAtHandLocked(const CachedObject& obj, std::vector<api::ObjectPtr>* dropped);
  // History is complete for revisions > oldest_revision_.
  store::Revision oldest_revision_ = 0;                  // guarded by mu_
  store::Revision revision_ = 0;                         // guarded by mu_
  std::vector<std::shared_ptr<CacheWatcher>> watchers_;  // guarded by mu_
};

struct CacherOptions {
  std::string prefix = "/registry/";
  WatchCacheOptions cache;
  std::chrono::milliseconds bookmark_interval{std::chrono::seconds(60)};
  // Storage prefixes whose caches keep only the event history, no current objects
  // (WatchCacheOptions::keep_objects). Events by default, as upstream (DefaultWatchCacheSizes:
  // events 0): they are most of what a busy cluster writes, and read by lists with a selector.
  std::set<std::string, std::less<>> history_only = {"/registry/events"};
  util::Clock* clock = &util::RealClock();
};

// Feeds every WatchCache from one store watch. Start() loads everything and starts the
// dispatcher thread; Stop() (or destruction) stops it.
class Cacher {
 public:
  Cacher(store::KV* kv, CacherOptions options);
  ~Cacher();

  // Registers a cache for a storage prefix (before Start, or later for CRDs: the new cache is
  // loaded by the dispatcher thread before this returns).
  WatchCache* AddResource(std::shared_ptr<const api::ResourceInfo> info);
  WatchCache* ForPrefix(std::string_view storage_prefix) const;
  // Stops caching a storage prefix (its CRD is gone): the cache's watchers end, later events
  // under the prefix are dropped, and a later AddResource for it starts a fresh cache. The retired
  // cache stays allocated while the Cacher lives (storages built earlier may still point at it).
  void RetireResource(std::string_view storage_prefix);

  util::Status Start();
  void Stop();

  // Fault injection (server/fault_injector.h). TerminateWatchers ends every client watch (clients
  // resume from their last resourceVersion); ForgetHistory also drops every cache's event history
  // (WatchCache::ForgetHistory), as if everything before now had been compacted.
  void TerminateWatchers();
  void ForgetHistory();

  // Every event with revision <= applied_revision() is in the caches.
  store::Revision applied_revision() const { return applied_.load(); }
  // Waits until applied_revision() >= revision; false on timeout.
  bool WaitForRevision(store::Revision revision, std::chrono::milliseconds timeout);
  // Waits until the caches hold everything the store has committed so far.
  bool WaitFresh(std::chrono::milliseconds timeout);

 private:
  void Run(std::stop_token stop);
  void RunTicker(std::stop_token stop);
  // Reloads every cache from a fresh range read. Requires dispatch_mu_.
  util::Status LoadAllLocked(store::Revision* revision);
  util::StatusOr<std::unique_ptr<store::WatchStream>> WatchFrom(store::Revision start);
  WatchCache* CacheForKeyLocked(std::string_view key) const;  // requires caches_mu_ (shared)
  void SetApplied(store::Revision revision);

  store::KV* const kv_;
  const CacherOptions options_;

  // Held by the dispatcher while it applies a batch and by AddResource while it loads a prefix,
  // so that a new cache's load and the dispatcher's events never interleave.
  std::mutex dispatch_mu_;
  mutable std::shared_mutex caches_mu_;
  std::map<std::string, std::unique_ptr<WatchCache>, std::less<>> caches_;  // guarded by caches_mu_
  std::vector<std::unique_ptr<WatchCache>> retired_;                        // guarded by caches_mu_

  std::mutex wait_mu_;
  std::condition_variable cv_;  // signalled (under wait_mu_) when applied_ grows
  std::atomic<store::Revision> applied_{0};

  std::mutex watch_mu_;
  std::shared_ptr<store::WatchStream> watch_;  // guarded by watch_mu_
  std::jthread thread_;
  std::jthread ticker_;
};

}  // namespace converge::apiserver
