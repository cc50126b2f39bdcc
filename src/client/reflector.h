// Reflector: keeps a ReflectorStore in step with one collection on the server by list and watch
// (client-go's tools/cache Reflector, without the WatchList streaming mode).
//
// The resourceVersion sequence, exactly as client-go:
//
//   1. List, paged (limit 500, following `continue`; pages after the first carry no
//      resourceVersion). The first list asks for resourceVersion "0" (any state the server's cache
//      has); a relist asks for the last resourceVersion seen, unpaged so a watch cache can answer
//      (it is "not older than" that); after a list failed with 410 Expired (or "too large
//      resource version") the list is retried at once with resourceVersion unset: a consistent
//      read. The list replaces the store's content (DeltaFIFO: Replaced deltas plus tombstones).
//   2. Watch from the list's resourceVersion with allowWatchBookmarks and a timeoutSeconds drawn
//      from [min_watch_timeout, 2·min_watch_timeout) (5–10 min by default).
//   3. Every event (bookmarks too) advances the last seen resourceVersion. When the watch ends
//      cleanly (timeout, connection lost) a new watch resumes from it — no relist. A connection
//      failure or 429 on the watch request itself is retried after a backoff, from the same
//      resourceVersion.
//   4. A 410 Expired ERROR event (compaction passed us), any other watch error, or a "very short
//      watch" (closed within a second without an event) end the round: Run waits a backoff and
//      relists (step 1) from the last seen resourceVersion.
//
// Between rounds Run waits Backoff::Next() (800 ms doubling to 30 s, jittered, reset after two
// healthy minutes). Resync, when configured, calls store->Resync() every resync_period while a
// watch is up, if should_resync agrees.
//
// Thread-safety: Run occupies its caller's thread (and starts a resync thread per round when
// resync_period > 0); LastSyncResourceVersion may be called from anywhere.
#pragma once

#include <functional>
#include <mutex>
#include <random>
#include <stop_token>
#include <string>

#include "client/backoff.h"
#include "client/list_watch.h"
#include "client/store.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::client {

struct ReflectorOptions {
  std::string name = "reflector";           // for logs
  ListerWatcher* lister_watcher = nullptr;  // not owned
  ReflectorStore* store = nullptr;          // not owned
  util::Clock* clock = nullptr;             // nullptr: util::RealClock()
  // Page size of lists (client-go's pager default).
  int64_t page_size = 500;
  // Watches ask the server to end them after a timeout drawn from [min, 2·min): spreading
  // re-watches out, and making sure no watch hangs unnoticed forever.
  std::chrono::seconds min_watch_timeout{300};
  util::Clock::Duration resync_period{0};
  // Asked before each resync; nullptr means always.
  std::function<bool()> should_resync;
  BackoffOptions backoff;  // its clock defaults to `clock`
  // Uniform in [0, 1) for the watch timeout; nullptr: a seeded std::mt19937_64.
  std::function<double()> random;
  // Objects enter the store without metadata.managedFields (upstream's kube-controller-manager
  // and kube-scheduler install this transform in their informers): a third of a pod's parsed
  // size, and nothing a controller reads. Writes of such objects keep the stored managedFields
  // (an update without managedFields keeps the live ones).
  bool drop_managed_fields = false;
  // Objects enter the store compact (api/json_view.h: a third of a parsed tree), for stores whose
  // readers use views (the server's components). Objects the in-process watch shares already are.
  bool compact_objects = false;
  // Told about every error that ended a round (logging by default).
  std::function<void(const util::Status&)> on_error;
};

class Reflector {
 public:
  explicit Reflector(ReflectorOptions options);
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Lists and watches until stop, backing off between rounds.
  void Run(std::stop_token stop);

  // One round: list, then watch until the watch fails for good. OK when it ended because of
  // stop or a condition that calls for a relist (410); an error when the list failed.
  util::Status ListAndWatch(std::stop_token stop);

  // The resourceVersion of the last list or watch event applied to the store ("" before any).
  std::string LastSyncResourceVersion() const;

 private:
  util::Status List(std::stop_token stop);
  util::Status Watch(std::stop_token stop);
  // `obj` as the store takes it (drop_managed_fields, compact_objects): itself when nothing is to
  // change, else a copy.
  api::ObjectPtr ForStore(api::ObjectPtr obj) const;
  // Applies one watch's events; OK when it closed cleanly.
  util::Status HandleWatch(util::Clock::TimePoint start, Watcher& w, std::stop_token stop);
  // client-go's relistResourceVersion.
  std::string RelistResourceVersion() const;
  // Lists with paging (client-go's pager): OK with every page merged, the first page's
  // resourceVersion, and whether more than one page came back.
  util::StatusOr<ObjectList> ListPaged(ListOptions options, int64_t page_size, bool* paginated,
                                       std::stop_token stop);
  void SetLastSync(std::string rv);
  void SetUnavailable(bool v);
  int64_t WatchTimeoutSeconds();
  void RunResync(std::stop_token stop);

  const ReflectorOptions options_;
  util::Clock* const clock_;
  Backoff backoff_;      // used by Run's thread only
  std::mt19937_64 rng_;  // used by Run's thread only
  // The initial list came back paginated although it asked for resourceVersion "0": the server
  // has no watch cache for this resource, so later lists are paged too. Run's thread only.
  bool paginated_result_ = false;

  mutable std::mutex mu_;
  std::string last_sync_resource_version_;  // guarded by mu_
  // The last list or watch failed because last_sync_resource_version_ is gone (410) or not yet
  // there (too large): the next list reads consistently instead.
  bool last_sync_resource_version_unavailable_ = false;  // guarded by mu_
};

}  // namespace converge::client
