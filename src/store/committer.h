// Committer: the store's single writer.
//
// Concurrent transactions queue up; the writer takes everything queued (up to a group limit),
// evaluates it as one group (GroupWriter: each writing transaction gets its own revision, and
// compares see the newest state including earlier transactions of the same group, so
// optimistic concurrency is exact), makes the group's records durable with one fdatasync, and
// then publishes it: its index changes are already in the Index (readers never look past the
// published revision), the published revision advances, its events go to the WatchHub, and
// each transaction's callback runs. A transaction is therefore acknowledged, visible to reads
// and delivered to watchers only once it is on disk. How the group becomes durable depends on
// the mode:
//
// Log mode (a Wal is given; EmbeddedStoreOptions::write_ahead_log): the group is written to the
// write-ahead log, whose fdatasync is the only barrier before the acknowledgement. The group also
// goes to the log tail at once (the next group's evaluation finds its records there; the Applier
// writes it into LMDB later, off every writer's path, once the tail marks it durable). The writer
// works as a two-stage pipeline: the committer thread evaluates and writes group N+1 while a syncer
// thread waits for the fdatasync covering group N and then publishes it. The committer hands
// a group to the syncer only when more work is queued (something to overlap); otherwise it
// syncs and publishes the group itself. Every group, even one that wrote nothing (its results
// may rest on groups not yet durable), is published in order and only after everything before
// it is durable. A synchronous caller (Run) that finds the writer idle (nothing queued, nothing
// written and not yet published) commits its own transaction on its own thread: a lone put's
// only wait is its fdatasync, with no hand-over to a writer thread and back. Compaction's
// maintenance goes to the Applier.
//
// Direct mode (no Wal): the group is one LMDB write transaction. LMDB runs with
// MDB_NOMETASYNC: a commit fdatasync()s its data pages, which also makes the previous
// commit's meta page durable. So after committing group N+1 the writer publishes group N; when
// nothing else is queued it calls Sync() and publishes the last group at once. When it syncs
// explicitly it first tops up LMDB's reserved space if it runs low (Backend::ReserveSpace: the
// same fdatasync covers the zeros and the last group's meta page). Compaction's record
// deletions and meta updates ride along as at most one maintenance item per group, and while
// writers are queued at most once per maintenance_interval (etcd pauses 10 ms between its
// compaction batches for the same reason).
//
// A failed log write, commit or sync leaves the outcome of in-flight groups unknown: the
// committer then fails them and every later request with the same error (like PostgreSQL after
// a failed fsync, it does not retry); so does a failed Applier. An error while evaluating a
// group (a record that cannot be read) fails that group only, and in direct mode so does one
// while writing it (e.g. the map is full); in log mode a group that would not fit in the map
// (counting what the Applier has yet to write) fails with ResourceExhausted before it is
// logged. A range at a compacted or future revision fails only its own transaction.
//
// Thread-safety: Submit, Run, Maintain and published() may be called from any thread.
// Callbacks run on the thread that publishes (the committer thread, the syncer thread, or a
// caller of Run committing inline) and must not block.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/applier.h"
#include "store/backend.h"
#include "store/group_writer.h"
#include "store/index.h"
#include "store/kv.h"
#include "store/log_tail.h"
#include "store/wal.h"
#include "store/watch_hub.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::store {

class Committer {
 public:
  struct Options {
    size_t max_group_txns = 1024;
    size_t max_group_bytes = size_t{32} << 20;
    // Direct mode: while transactions are queued, a maintenance item joins a group at most this
    // often; when nothing else is queued it runs at once.
    // Pacing measured on RealClock() on purpose: a FakeClock that tests do not step would
    // otherwise hold compaction back forever under a steady stream of writes.
    util::Clock::Duration maintenance_interval = std::chrono::milliseconds(10);
    // Log mode: the writer waits while the log tail (logged, not yet in LMDB) holds this much.
    size_t max_tail_bytes = size_t{64} << 20;
  };
  // Log mode: the log, its tail and the applier.
  struct Log {
    Wal* wal = nullptr;
    LogTail* tail = nullptr;
    Applier* applier = nullptr;
  };

  // `current` and `record_count` describe the history as recovered; `compact` is the store's
  // compact revision (read for ranges at an explicit revision inside transactions). `log`
  // empty: direct mode.
  Committer(Options options, Backend* backend, Index* index, WatchHub* hub, Revision current,
            uint64_t record_count, const std::atomic<Revision>* compact, Log log);
  ~Committer();

  void Start();
  // Commits and acknowledges everything queued, and joins the thread. Submissions after Stop()
  // fail with Unavailable (their callback runs on the caller's thread).
  void Stop();

  // Queues a transaction. A non-OK `precheck` (validation failed) is delivered in order
  // without applying anything. `bytes` is its size for the group limit. `frames` is
  // CompressPutValues(req) (group_writer.h), or empty for the writer to compress the values.
  void Submit(TxnRequest req, KV::TxnCallback done, util::Status precheck, size_t bytes,
              ValueFrames frames = {});
  // The same, waiting for the outcome; in log mode commits on the calling thread when the
  // writer is idle.
  util::StatusOr<TxnResponse> Run(TxnRequest req, util::Status precheck, size_t bytes,
                                  ValueFrames frames = {});

  // Maintenance for compaction: deletes records and writes meta values in one LMDB commit
  // (after every group logged before it), and returns once that commit is durable.
  util::Status Maintain(std::vector<RevisionPair> deletes,
                        std::vector<std::pair<std::string, uint64_t>> metas);

  // The newest durable (acknowledged) revision.
  Revision published() const { return published_.load(std::memory_order_acquire); }

  // Cumulative counters, for benchmarks and metrics.
  struct Stats {
    uint64_t groups = 0;         // groups made durable (log appends or LMDB commits)
    uint64_t txns = 0;           // transactions acknowledged
    uint64_t inline_groups = 0;  // log mode: groups committed on a caller's thread
    uint64_t handed_over = 0;    // log mode: groups the syncer thread synced and published
    uint64_t syncs = 0;          // direct mode: explicit Sync() calls (nothing else was queued)
    uint64_t commit_ns = 0;      // log append + fdatasync, or mdb_txn_commit (with its fdatasync)
    uint64_t sync_ns = 0;        // time in explicit Sync()
    uint64_t reserves = 0;       // explicit syncs that also reserved space (not in `syncs`)
    uint64_t reserve_ns = 0;     // time in them
    bool short_slice = false;    // RequestShortSchedulerSlice succeeded for the committer
  };
  Stats stats() const;

 private:
  struct Item {
    TxnRequest req;
    KV::TxnCallback done;
    util::Status precheck;
    size_t bytes = 0;
    ValueFrames frames;  // CompressPutValues(req), or empty
  };
  struct Maintenance {
    std::vector<RevisionPair> deletes;
    std::vector<std::pair<std::string, uint64_t>> metas;
    std::promise<util::Status> done;
  };
  struct Group {
    std::vector<Item> items;
    std::vector<util::StatusOr<TxnResponse>> results;
    Maintenance* maintenance = nullptr;
    Revision last = 0;
    std::vector<RevisionEventsPtr> events;
  };
  enum class Outcome { kCommitted, kNothingWritten, kAborted, kFailed };
  // Log mode: a group evaluated and written to the log, waiting to be synced and published.
  struct Written {
    Group group;
    util::Status error;  // the write failed (the group and every later one fail)
    bool wrote = false;  // it wrote to the log
    int fd = -1;         // what to Sync, if it wrote
    uint64_t seq = 0;
  };

  // Takes queued items into `g` (mu_ held).
  void TakeLocked(Group* g);
  void DirectLoop();
  void LogLoop();
  void SyncerLoop();
  // Direct mode: one LMDB commit.
  Outcome CommitGroup(Group& g, util::Status* error);
  // Log mode, first stage: evaluates `g`, writes it to the log and adds it to the tail and the
  // index (the caller holds the writer role: busy_).
  Written WriteLogged(Group g, bool inline_group);
  // Log mode, second stage: syncs the log for `batch` and publishes it, in order.
  void SyncAndPublish(std::vector<Written>& batch);
  util::Status Fatal();
  // Publishes `g` if `st` is OK (and the committer has not failed), else fails it.
  void Finish(Group& g, util::Status st);
  void AddCommitTime(std::chrono::steady_clock::time_point t0, bool inline_group);

  // Constant after construction.
  const Options options_;
  Backend* const backend_;
  Index* const index_;
  WatchHub* const hub_;
  const std::atomic<Revision>* const compact_;
  const Log log_;

  util::Clock* const clock_;

  // The writer only (the committer thread, or the Run caller holding busy_).
  util::Clock::TimePoint last_maintenance_{};
  Revision latest_;        // newest committed (maybe not yet durable) revision
  uint64_t record_count_;  // direct mode: records in the history db as of latest_

  std::atomic<Revision> published_;

  mutable std::mutex stats_mu_;
  Stats stats_;  // guarded by stats_mu_

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;                // guarded by mu_
  std::deque<Maintenance*> maintenance_;  // guarded by mu_
  bool busy_ = false;                     // guarded by mu_: someone holds the writer role
  bool stopping_ = false;                 // guarded by mu_
  util::Status fatal_;                    // guarded by mu_: sticky commit/sync failure
  // Log mode: written groups the syncer has yet to take, in order; whether a sync (by the
  // syncer or the committer thread) is in progress; whether the committer thread has exited.
  std::deque<Written> written_;  // guarded by mu_
  bool syncing_ = false;         // guarded by mu_
  bool writer_done_ = false;     // guarded by mu_
  std::condition_variable sync_cv_;
  std::thread thread_;
  std::thread syncer_;
};

}  // namespace converge::store
