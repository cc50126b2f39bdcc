// Committer: the store's single writer.
//
// Concurrent transactions queue up; the committer thread takes everything queued (up to a
// group limit) and applies it in one LMDB write transaction (GroupWriter): each writing
// transaction gets its own revision, and compares see the newest state including earlier
// transactions of the same group, so optimistic concurrency is exact. Compaction's record
// deletions and meta updates ride along as at most one maintenance item per group, and while
// writers are queued at most once per maintenance_interval (etcd pauses 10 ms between its
// compaction batches for the same reason), so a compaction never holds a writer for more than
// one batch and never takes more than a small share of the commits.
//
// Durability pipeline (see Backend): a commit fdatasync()s its data pages, which also makes the
// previous commit's meta page durable. So after committing group N+1 the committer publishes
// group N; when nothing else is queued it calls Sync() and publishes the last group at once.
// Publishing a group, in revision order: apply its index changes are already in the Index
// (readers never look past the published revision), advance the published revision, hand its
// events to the WatchHub, then run each transaction's callback. A transaction is therefore
// acknowledged, visible to reads and delivered to watchers only once it is on disk.
//
// Reserved space: when the committer syncs explicitly (nothing else queued) and the backend
// has less than its reserve of zero-filled space past LMDB's last page, it appends that
// reserve before the sync (Backend::ReserveSpace: the same fdatasync covers the zeros and the
// last group's meta page). Commits under light load then overwrite written blocks instead of
// growing data.mdb. One in every ~200-250 lone 3 KB puts pays for writing 1 MiB of zeros
// (2-13 ms here); under a steady load the committer never syncs explicitly and LMDB grows the
// file itself, as it would without this.
//
// A failed commit or sync leaves the outcome of in-flight groups unknown: the committer then
// fails them and every later request with the same error (like PostgreSQL after a failed
// fsync, it does not retry). An error while applying a group (e.g. the map is full) aborts the
// LMDB transaction and fails that group only; a range at a compacted or future revision fails
// only its own transaction.
//
// Thread-safety: Submit, Maintain and published() may be called from any thread. Callbacks run
// on the committer thread and must not block.
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

#include "store/backend.h"
#include "store/index.h"
#include "store/kv.h"
#include "store/watch_hub.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::store {

class Committer {
 public:
  struct Options {
    size_t max_group_txns = 1024;
    size_t max_group_bytes = size_t{32} << 20;
    // While transactions are queued, a maintenance item joins a group at most this often; when
    // nothing else is queued it runs at once.
    // Pacing measured on RealClock() on purpose: a FakeClock that tests do not step would
    // otherwise hold compaction back forever under a steady stream of writes.
    util::Clock::Duration maintenance_interval = std::chrono::milliseconds(10);
  };

  // `current` and `record_count` describe the history as recovered; `compact` is the store's
  // compact revision (read for ranges at an explicit revision inside transactions).
  Committer(Options options, Backend* backend, Index* index, WatchHub* hub, Revision current,
            uint64_t record_count, const std::atomic<Revision>* compact);
  ~Committer();

  void Start();
  // Commits and acknowledges everything queued, syncs, and joins the thread. Submissions after
  // Stop() fail with Unavailable (their callback runs on the caller's thread).
  void Stop();

  // Queues a transaction. A non-OK `precheck` (validation failed) is delivered in order
  // without applying anything. `bytes` is its size for the group limit.
  void Submit(TxnRequest req, KV::TxnCallback done, util::Status precheck, size_t bytes);

  // Maintenance for compaction: deletes records and writes meta values in one commit of the
  // writer, and returns once that commit is durable.
  util::Status Maintain(std::vector<RevisionPair> deletes,
                        std::vector<std::pair<std::string, uint64_t>> metas);

  // The newest durable (acknowledged) revision.
  Revision published() const { return published_.load(std::memory_order_acquire); }

  // Cumulative counters, for benchmarks and metrics.
  struct Stats {
    uint64_t groups = 0;       // LMDB write transactions committed
    uint64_t txns = 0;         // transactions acknowledged
    uint64_t syncs = 0;        // explicit Sync() calls (nothing else was queued)
    uint64_t commit_ns = 0;    // time in mdb_txn_commit (includes its fdatasync)
    uint64_t sync_ns = 0;      // time in explicit Sync()
    uint64_t reserves = 0;     // explicit syncs that also reserved space (not in `syncs`)
    uint64_t reserve_ns = 0;   // time in them
    bool short_slice = false;  // RequestShortSchedulerSlice succeeded for the committer
  };
  Stats stats() const;

 private:
  struct Item {
    TxnRequest req;
    KV::TxnCallback done;
    util::Status precheck;
    size_t bytes = 0;
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

  void Loop();
  Outcome CommitGroup(Group& g, util::Status* error);
  // Publishes `g` if `st` is OK (and the committer has not failed), else fails it.
  void Finish(Group& g, util::Status st);

  // Constant after construction.
  const Options options_;
  Backend* const backend_;
  Index* const index_;
  WatchHub* const hub_;
  const std::atomic<Revision>* const compact_;

  util::Clock* const clock_;

  // Committer thread only.
  util::Clock::TimePoint last_maintenance_{};
  Revision latest_;        // newest committed (maybe not yet durable) revision
  uint64_t record_count_;  // records in the history db as of latest_
  util::Status failed_;    // sticky commit/sync failure

  std::atomic<Revision> published_;

  mutable std::mutex stats_mu_;
  Stats stats_;  // guarded by stats_mu_

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;                // guarded by mu_
  std::deque<Maintenance*> maintenance_;  // guarded by mu_
  bool stopping_ = false;                 // guarded by mu_
  util::Status fatal_;                    // guarded by mu_: copy of failed_ for Submit
  std::thread thread_;
};

}  // namespace converge::store
