// The embedded store: KV (kv.h) over LMDB, with etcd's MVCC semantics.
//
//   EmbeddedStore            the KV implementation; reads run on the caller's thread
//   ├── Backend              LMDB: history db (revision -> record) and meta db
//   ├── Index                in-memory key -> generations of revisions (KeyIndex)
//   ├── Committer (thread)   group commit, revisions, durability, acknowledgements
//   ├── WatchHub (thread)    fan-out to watchers, catch-up from history, progress
//   └── Compactor (thread)   frees history below the compact revision in batches
//
// Reads: Range at revision R (0 = the published revision, i.e. the newest acknowledged one)
// takes an LMDB snapshot, checks R against the compact revision, asks the index which revision
// of each key is visible at R, checks the compact revision again (a compaction that started
// meanwhile may have trimmed the index), and reads those records from the snapshot. Records
// at or above the compact revision are never deleted while a read that passed the check is in
// flight, because deletions start only after the compact revision was raised.
// Read-only transactions are evaluated the same way at the published revision; transactions
// that write go through the committer.
//
// Opening replays the history into the index and verifies it (Recover); a truncated or
// corrupted data file fails Open with DataLoss, a store held by another process with
// FailedPrecondition.
//
// Shutdown (destructor), in this order: stop the compactor (it finishes its current batch;
// the rest resumes at the next open); stop the committer (it commits, syncs and acknowledges
// everything queued); stop the watch hub (it delivers what was committed, then every stream's
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

struct MDB_txn;

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
};

class Backend;
class Index;
class WatchHub;
class Committer;
class Compactor;
class StoreHistory;

class EmbeddedStore final : public KV {
 public:
  static util::StatusOr<std::unique_ptr<EmbeddedStore>> Open(const EmbeddedStoreOptions& options);
  ~EmbeddedStore() override;

  util::StatusOr<RangeResponse> Range(const RangeRequest& req) override;
  util::StatusOr<PutResponse> Put(const PutRequest& req) override;
  util::StatusOr<DeleteRangeResponse> DeleteRange(const DeleteRangeRequest& req) override;
  util::StatusOr<TxnResponse> Txn(const TxnRequest& req) override;
  void TxnAsync(TxnRequest req, TxnCallback done) override;
  util::StatusOr<CompactResponse> Compact(Revision revision) override;
  util::StatusOr<std::unique_ptr<WatchStream>> Watch(const WatchRequest& req) override;
  Revision CurrentRevision() const override;
  Revision CompactRevision() const override;

  // Blocks until the background compaction has deleted everything Compact() dropped.
  void WaitForCompaction();

  // Writer counters (see Committer::Stats): groups committed, syncs, time spent in them.
  struct WriterStats {
    uint64_t groups = 0, txns = 0, syncs = 0, commit_ns = 0, sync_ns = 0;
    bool short_slice = false;
    uint64_t reserves = 0, reserve_ns = 0;
  };
  WriterStats writer_stats() const;

  // Tests: the index and the hub.
  const Index& index() const { return *index_; }
  size_t WatcherCount() const;

 private:
  explicit EmbeddedStore(const EmbeddedStoreOptions& options);
  util::StatusOr<TxnResponse> ReadOnlyTxn(const TxnRequest& req);
  // Range at `rev` (already checked against the published revision) in `txn`.
  util::StatusOr<RangeResponse> RangeAt(const RangeRequest& req, Revision rev, Revision header,
                                        MDB_txn* txn);

  // Constant after Open.
  const EmbeddedStoreOptions options_;
  std::unique_ptr<Backend> backend_;
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
