// The embedded store: KV (kv.h) over LMDB, with etcd's MVCC semantics.
//
//   EmbeddedStore            the KV implementation; reads run on the caller's thread
//   ├── Backend              LMDB: history db (revision -> record) and meta db
//   ├── Wal (thread)         write-ahead log: one fdatasync per group; segments prepared ahead
//   ├── LogTail              groups durable in the log, not yet in LMDB (read from memory)
//   ├── Applier (thread)     applies the log to LMDB behind the writer; checkpoints the log
//   ├── Index                in-memory key -> generations of revisions (KeyIndex)
//   ├── Committer (threads)  group commit, revisions, durability, acknowledgements
//   ├── WatchHub (thread)    fan-out to watchers, catch-up from history, progress
//   └── Compactor (thread)   frees history below the compact revision in batches
//
// Writes: see Committer. With the write-ahead log (options.write_ahead_log) a write is
// acknowledged once its group is durable in the log; without it, once its LMDB commit is.
//
// What a reader sees: a revision becomes visible (to Range, Txn and watchers) only once it is
// published, and the committer publishes a group only after the fdatasync that makes it
// durable (in the log, or in LMDB) returned. So no reader ever sees a write that a crash could
// take back, and the revision a reader saw never goes backwards, across crashes too.
//
// Reads: Range at revision R (0 = the published revision, i.e. the newest acknowledged one)
// takes a read view (the log tail's snapshot, then an LMDB snapshot: ReadView), checks R
// against the compact revision, asks the index which revision of each key is visible at R,
// checks the compact revision again (a compaction that started meanwhile may have trimmed the
// index), and reads those records from the view. Records at or above the compact revision are
// never deleted while a read that passed the check is in flight, because deletions start only
// after the compact revision was raised. Read-only transactions are evaluated the same way at
// the published revision; transactions that write go through the committer.
//
// Opening replays the log's groups that LMDB had not applied into LMDB (and syncs), then
// replays the history into the index and verifies it (Recover); a truncated or corrupted data
// file or log fails Open with DataLoss (a torn last group of the log, never acknowledged, is
// dropped: wal.h), a store held by another process with FailedPrecondition.
//
// Shutdown (destructor), in this order: stop the compactor (it finishes its current batch;
// the rest resumes at the next open); stop the committer (it commits, syncs and acknowledges
// everything queued); stop the applier (it applies the whole log tail and syncs); stop the
// log's preparer; stop the watch hub (it delivers what was committed, then every stream's
// Next() returns Unavailable, and in-flight history reads finish); close LMDB and release the
// LOCK. Callers must not issue calls concurrently with or after destruction; WatchStreams may
// outlive the store.
//
// Thread-safety: every KV method may be called from any thread concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "store/kv.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::store {

struct EmbeddedStoreOptions {
  std::string dir;  // required; created if absent
  // Virtual size of the LMDB map. The file grows only as data is written, so this is address
  // space, not disk: keep it large. A store that outgrows it fails writes with
  // ResourceExhausted.
  size_t map_size = size_t{64} << 30;
  // Acknowledge writes only once fdatasync()ed. false is for benchmarks and tests only: a
  // machine crash may then lose acknowledged writes.
  bool fsync = true;
  // Undelivered events a synced watcher may lag behind before kCancelReasonSlow.
  size_t watcher_buffer = 10000;
  size_t max_events_per_watch_response = 1000;
  // Progress notifications for watches with progress_notify (etcd's default is 10 minutes).
  util::Clock::Duration progress_interval = std::chrono::minutes(10);
  util::Clock* clock = nullptr;  // RealClock() if null
  // etcd's default --max-request-bytes: larger transactions fail with InvalidArgument.
  size_t max_request_bytes = 1536 * 1024;
  size_t compaction_batch = 1000;        // records deleted per commit while compacting
  size_t max_group_txns = 1024;          // transactions folded into one commit at most
  bool verify_checksums_on_open = true;  // check every record's checksum during Open
  // With fsync: while idle, the writer keeps this much zero-filled space past the data so that
  // commits overwrite blocks rather than grow data.mdb (Backend::ReserveSpace); 0: off.
  size_t reserve_bytes = size_t{1} << 20;
  // Acknowledge each group of writes once it is durable in a write-ahead log (one fdatasync),
  // and apply it to LMDB behind the writers (Committer, Applier): the default, 1.3-5x
  // direct commits' throughput at 16 and 64 writers (docs/PERFORMANCE.md, "Store"). false: each
  // group is an LMDB commit (two barriers; under load the second is shared with the next
  // group). A store's log is replayed at open either way.
  bool write_ahead_log = true;
  // The log's segments (each fallocate()d to this size; two exist at least: the current one
  // and a spare).
  size_t log_segment_bytes = size_t{64} << 20;
  // Log mode: the writer waits while this much is logged but not yet applied to LMDB.
  size_t max_log_tail_bytes = size_t{64} << 20;
  // Tests only: never apply the log to LMDB, as if the process died between every group's log
  // fdatasync and its LMDB commit.
  bool hold_log_for_test = false;
};

class Backend;
class Index;
class WatchHub;
class Committer;
class Compactor;
class StoreHistory;
class Wal;
class LogTail;
class Applier;
class ReadView;

class EmbeddedStore final : public KV {
 public:
  static util::StatusOr<std::unique_ptr<EmbeddedStore>> Open(const EmbeddedStoreOptions& options);
  ~EmbeddedStore() override;

  util::StatusOr<RangeResponse> Range(const RangeRequest& req) override;
  util::StatusOr<PutResponse> Put(const PutRequest& req) override;
  util::StatusOr<DeleteRangeResponse> DeleteRange(const DeleteRangeRequest& req) override;
  util::StatusOr<TxnResponse> Txn(TxnRequest req) override;
  void TxnAsync(TxnRequest req, TxnCallback done) override;
  util::StatusOr<CompactResponse> Compact(Revision revision) override;
  util::StatusOr<std::unique_ptr<WatchStream>> Watch(const WatchRequest& req) override;
  Revision CurrentRevision() const override;
  Revision CompactRevision() const override;

  // Blocks until the background compaction has deleted everything Compact() dropped.
  void WaitForCompaction();

  // Writer counters (Committer::Stats, Applier::Stats, Wal::Stats): groups made durable,
  // syncs, time spent in them.
  struct WriterStats {
    uint64_t groups = 0, txns = 0, syncs = 0, commit_ns = 0, sync_ns = 0;
    bool short_slice = false;
    uint64_t reserves = 0, reserve_ns = 0;
    uint64_t inline_groups = 0;  // log mode: groups committed on the caller's thread
    uint64_t handed_over = 0;    // log mode: groups the syncer thread synced and published
    // Log mode: the applier's LMDB commits, groups applied, time in commits and syncs.
    uint64_t apply_commits = 0, apply_groups = 0, apply_commit_ns = 0, apply_syncs = 0,
             apply_sync_ns = 0, apply_reserves = 0;
    // Log mode: bytes appended, segment switches (and those without a spare ready), segments
    // created, recycled and deleted, segment files now, zeros written ahead of the writer.
    uint64_t log_bytes = 0, log_switches = 0, log_unprepared = 0, log_created = 0, log_recycled = 0,
             log_deleted = 0, log_segment_files = 0, log_filled_bytes = 0;
  };
  WriterStats writer_stats() const;
  // What Open found at the end of the log: a torn last group it dropped, or empty; and how
  // many groups it replayed into LMDB.
  const std::string& log_torn_tail() const { return log_torn_tail_; }
  uint64_t log_replayed_groups() const { return log_replayed_groups_; }

  // Tests: the index and the hub.
  const Index& index() const { return *index_; }
  size_t WatcherCount() const;

 private:
  explicit EmbeddedStore(const EmbeddedStoreOptions& options);
  util::StatusOr<TxnResponse> ReadOnlyTxn(const TxnRequest& req);
  // A transaction that may write: through the committer.
  util::StatusOr<TxnResponse> WriteTxn(TxnRequest req);
  // Range at `rev` (already checked against the published revision) in `view`.
  util::StatusOr<RangeResponse> RangeAt(const RangeRequest& req, Revision rev, Revision header,
                                        const ReadView& view);
  // Open: applies the groups of the log that LMDB lacks, durably.
  util::Status ReplayLog(uint64_t applied_seq, uint64_t* next_seq);

  // Constant after Open.
  const EmbeddedStoreOptions options_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Wal> wal_;
  std::unique_ptr<LogTail> tail_;  // null in direct mode
  std::unique_ptr<Applier> applier_;
  std::string log_torn_tail_;
  uint64_t log_replayed_groups_ = 0;
  std::unique_ptr<Index> index_;
  std::unique_ptr<StoreHistory> history_;
  std::shared_ptr<WatchHub> hub_;
  std::unique_ptr<Committer> committer_;
  std::unique_ptr<Compactor> compactor_;

  std::atomic<Revision> compact_{0};  // raised (under compact_mu_) before deletions start
  std::mutex compact_mu_;             // serializes Compact()
};

// The factory the API server uses.
util::StatusOr<std::unique_ptr<KV>> OpenEmbeddedStore(const EmbeddedStoreOptions& options);

}  // namespace converge::store
