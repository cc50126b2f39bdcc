// WatchHub: delivers committed changes to watchers (etcd's watchableStore, pull-shaped).
//
// A watcher is either catching up or synced.
//   - Catching up: Next() reads history from disk (HistorySource) on the caller's thread, from
//     the watcher's next revision up to the hub's notified revision, a bounded chunk per call.
//     Once nothing older than the notified revision is left, it joins a group.
//   - Synced: watchers with the same (key, range_end) share a Group: an in-memory log of the
//     revisions whose events match that range. Publish appends each committed revision once
//     per group, on the publishing thread (a single-key group is found by hash; each range
//     group is checked once per event), then wakes the group. Entries share the committer's Event
//     and KeyValue objects: fan-out copies pointers. A watcher's Next() copies the entries after
//     its cursor into a response.
//
// Guarantees (etcd's watch robustness properties): revisions strictly increase, no event twice,
// every event of one revision in one response, no gap from the start revision on, a watch from
// any retained revision yields exactly what followed it, and a progress notification at R is
// sent only after every matching event <= R was delivered.
//
// Writers never wait for watchers: Publish() appends pointers to each matching group's log under
// short critical sections and wakes its members; it never waits for a consumer to read. (It
// used to queue the batch for a notifier thread, one more thread hand-off between a commit and
// every watcher: PERFORMANCE, "Committed revisions fan out on the publishing thread".) A
// group keeps at
// most `watcher_buffer` undelivered events for its slowest member; when it must drop an entry a
// member has not read, that member is cancelled with kCancelReasonSlow and resumes from the
// revision after its last delivered one. Entries every member has read are dropped at once.
//
// Locks, in order: mu_ (groups and membership, notified_), then Group::mu (the log, cursors;
// a shared_mutex: members read under a shared lock).
// history_mu_ comes last: shared by history reads (a synced member reads a previous value it
// asked for under Group::mu, shared), exclusive in Stop() with no other lock held.
//
// Thread-safety: every public method may be called from any thread. Streams may outlive the
// hub's Stop() (and the store): they then report Unavailable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "store/kv.h"
#include "store/watch_events.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::store {

// Where catching-up watchers read past events from.
class HistorySource {
 public:
  virtual ~HistorySource() = default;
  struct Chunk {
    std::vector<Event> events;  // revision order; prev_kv only when asked for
    Revision next = 0;          // the revision to continue from
    Revision compacted = 0;     // non-zero: `from` is below this compact revision
  };
  // Events of revisions [from, to] whose keys lie in the etcd range (key, end), whole
  // revisions only, stopping at a revision boundary once about `max_events` were collected.
  virtual util::StatusOr<Chunk> ReadHistory(std::string_view key, std::string_view end,
                                            Revision from, Revision to, bool prev_kv,
                                            size_t max_events) = 0;
  // The key-value stored at `at`: the previous value of a change made at revision `of`, for a
  // synced watcher that asked for prev_kv (RevisionEvents::prev_at). If compaction has removed
  // it, sets *compacted to the compact revision and returns null.
  virtual util::StatusOr<KeyValuePtr> ReadPrevious(RevisionPair at, Revision of,
                                                   Revision* compacted) = 0;
};

class WatchHub : public std::enable_shared_from_this<WatchHub> {
 public:
  struct Options {
    // Undelivered events a synced watcher may lag behind before it is cancelled as slow.
    size_t watcher_buffer = 10000;
    // A response holds whole revisions and stops growing past this many events.
    size_t max_events_per_response = 1000;
    // Period of progress notifications for watchers that asked for them; 0 disables them.
    util::Clock::Duration progress_interval = std::chrono::minutes(10);
    util::Clock* clock = nullptr;  // RealClock() if null
  };

  // `history` must stay valid until Stop() returns. Create with std::make_shared.
  WatchHub(Options options, HistorySource* history);
  ~WatchHub();
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Every revision <= `notified` is on disk and counts as delivered. Starts the thread of
  // progress notifications (when progress_interval is set).
  void Start(Revision notified);
  // Delivers what was published, then closes every stream (Next() drains buffered events and
  // then returns Unavailable), waits for in-flight history reads, and joins the progress thread.
  void Stop();

  // Delivers a committed, durable batch (ascending revisions, ending at `last`) to the groups
  // on the calling thread; calls are in revision order (the committer publishes in order).
  // Never blocks on a watcher; ignored once Stop() began.
  void Publish(Revision last, std::vector<RevisionEventsPtr> revisions);

  // A new watch. `current` is the published revision (start_revision 0 means current + 1);
  // `compact` the compact revision: a start below it yields one canceled response with
  // kCancelReasonCompacted.
  util::StatusOr<std::unique_ptr<WatchStream>> Watch(const WatchRequest& req, Revision current,
                                                     Revision compact);

  // Every event at or below this revision has been handed to the groups.
  Revision notified_revision() const { return notified_.load(std::memory_order_acquire); }
  size_t WatcherCountForTest() const;
  size_t GroupCountForTest() const;

 private:
  class Watcher;
  struct Group;
  enum class Join { kJoined, kNeedHistory, kStopped };

  void ProgressLoop();
  void ProgressTick();
  // Joins `w` to its group if nothing older than the notified revision is left for it; else
  // reports kNeedHistory with the revision to read up to in *to.
  Join TryJoin(Watcher* w, Revision* to);
  // Removes `w` from its group (if any); Forget also drops it from the watcher count.
  void Leave(Watcher* w);
  void Forget(Watcher* w);
  // Wakes `w` if it waits in a group (Cancel, RequestProgress).
  void Wake(Watcher* w);
  util::StatusOr<HistorySource::Chunk> ReadHistory(const Watcher& w, Revision to);
  util::StatusOr<KeyValuePtr> ReadPrevious(RevisionPair at, Revision of, Revision* compacted);
  void TrimLocked(Group& g);

  // Constant after construction.
  const Options options_;
  util::Clock* const clock_;
  HistorySource* const history_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Group>> single_groups_;  // guarded by mu_
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Group>>
      range_groups_;      // guarded by mu_
  size_t watchers_ = 0;   // guarded by mu_
  bool stopped_ = false;  // guarded by mu_; set when Stop() begins: Publish delivers no more
  // Written under mu_ after the groups were appended to; read without it.
  std::atomic<Revision> notified_{0};

  std::shared_mutex history_mu_;
  bool history_closed_ = false;  // guarded by history_mu_

  std::mutex progress_mu_;
  std::condition_variable_any progress_cv_;
  bool stopping_ = false;  // guarded by progress_mu_
  std::thread progress_;
};

}  // namespace converge::store
