// Backend: the LMDB environment behind the embedded store, and the only code that calls LMDB.
//
// Layout of a store directory:
//   data.mdb, lock.mdb   the LMDB environment: db "history" (RevisionKey -> record, see
//                        record.h) and db "meta" (name -> EncodeMetaU64 value)
//   FORMAT               "converge-store <kFormatVersion>", written once the environment has
//                        been initialized and synced; its presence means data.mdb must exist
//   LOCK                 flock()ed while a process has the store open
//
// Meta names: kMetaFormat, kMetaCurrentRevision (newest committed revision),
// kMetaScheduledCompact (compaction requested; reads below it fail), kMetaFinishedCompact
// (every record that compaction drops below it is deleted), kMetaRecordCount (records in the
// history db, checked against a full scan at open), kMetaLogApplied (the newest write-ahead
// log group whose changes this file holds; 0 if none).
//
// Durability: with `fsync` the environment runs with MDB_NOMETASYNC: a commit writes the data
// pages, fdatasync()s them, then writes the meta page without syncing. The commit is durable
// after the next fdatasync, which is either the next commit's (it syncs the previous meta page
// together with its own data) or an explicit Sync(). The committer acknowledges a group only
// after that sync, so every group costs one fdatasync and integrity never depends on write
// ordering. Without `fsync` (benchmarks and tests only) nothing is synced.
//
// Reserved space: LMDB appends a page past the end of data.mdb whenever its free list cannot
// supply one, so most commits grow the file. On ext4 (delalloc and dioread_nolock, the
// kernel's defaults) blocks allocated by writeback are unwritten extents that a kworker of the
// ext4-rsv-conversion workqueue converts after the write completes, and fdatasync() waits for
// that conversion; on a saturated CPU the kworker waits up to a scheduler tick (4 ms) for a
// CPU (docs/PERFORMANCE.md, "Store"). ReserveSpace() therefore keeps zero-filled, already
// written (and synced) blocks past the last page LMDB uses, so that commits overwrite blocks
// instead of allocating them. fallocate() would not do: it creates unwritten extents, which
// need the same conversion. The zeros lie past the newest meta page's last page, which bounds
// every meta page's, so no snapshot LMDB could recover ever refers to them; LMDB neither reads
// nor checks bytes past its last page, and CheckFileLength compares against the last page, not
// the file's end.
//
// Integrity checks at Open: the LMDB file is at least as long as its newest meta page says
// (a truncated file would otherwise SIGBUS on access); LMDB's own structural errors map to
// DataLoss. Record checksums and the history/meta agreement are checked by Recover().
//
// Thread-safety: read transactions may be opened from any thread concurrently (MDB_NOTLS).
// Write transactions and Sync() belong to one thread at a time (the committer).
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "store/record.h"
#include "store/revision.h"
#include "util/status.h"

namespace converge::store {

// 2: the store may have a write-ahead log (dir/wal, wal.h) whose groups after
// kMetaLogApplied are not in LMDB yet; a build that reads only 1 would ignore them. Version 1
// stores are upgraded at open.
inline constexpr uint64_t kFormatVersion = 2;
inline constexpr char kMetaFormat[] = "format";
inline constexpr char kMetaCurrentRevision[] = "current_revision";
inline constexpr char kMetaScheduledCompact[] = "scheduled_compact_revision";
inline constexpr char kMetaFinishedCompact[] = "finished_compact_revision";
inline constexpr char kMetaRecordCount[] = "record_count";
inline constexpr char kMetaLogApplied[] = "log_applied_seq";

// Maps an LMDB return code to a Status: structural corruption is DataLoss, a full map
// ResourceExhausted, a full reader table Unavailable, anything else Internal.
util::Status LmdbStatus(int rc, std::string_view what);

class Backend {
 public:
  struct Options {
    std::string dir;
    size_t map_size = size_t{64} << 30;
    bool fsync = true;
    unsigned max_readers = 4096;
    // With `fsync`: ReserveSpace() keeps at least this much zero-filled space past LMDB's last
    // page, in steps of this size (0: never). 1 MiB is written and synced in about 10 ms here.
    size_t reserve_bytes = size_t{1} << 20;
  };

  // Opens (creating if absent) the store in options.dir and takes its LOCK. Fails with
  // FailedPrecondition if another process holds it, DataLoss if files are missing, truncated or
  // structurally corrupt.
  static util::StatusOr<std::unique_ptr<Backend>> Open(const Options& options);
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // A read-only snapshot. Movable; returns its handle to a pool when destroyed. Short-lived
  // by contract: an open snapshot keeps LMDB from reusing pages freed after it began.
  class ReadTxn {
   public:
    ReadTxn(ReadTxn&& other) noexcept : backend_(other.backend_), txn_(other.txn_) {
      other.txn_ = nullptr;
    }
    ReadTxn& operator=(ReadTxn&&) = delete;
    ~ReadTxn();
    MDB_txn* get() const { return txn_; }

   private:
    friend class Backend;
    ReadTxn(Backend* backend, MDB_txn* txn) : backend_(backend), txn_(txn) {}
    Backend* backend_;
    MDB_txn* txn_;
  };
  util::StatusOr<ReadTxn> BeginRead();

  // Write transactions: one at a time, committer thread only.
  util::StatusOr<MDB_txn*> BeginWrite();
  util::Status Commit(MDB_txn* txn);
  void Abort(MDB_txn* txn);
  // Makes every commit so far durable (no-op without fsync).
  util::Status Sync();

  // Reserved space (see the file comment). Committer thread only, between write transactions.
  // NeedsSpace: fewer than options.reserve_bytes of written space follow LMDB's last page.
  bool NeedsSpace();
  // Appends options.reserve_bytes of zeros at the end of data.mdb, then Sync()s: on success
  // every commit so far is durable, as after Sync(). A failed write (e.g. the disk is full)
  // turns reserving off and is not an error: LMDB grows the file itself as before. A failed
  // sync is an error, as from Sync().
  util::Status ReserveSpace();

  // Record access within a transaction. GetRecord decodes (and verifies) into `out`, whose
  // views stay valid until the transaction ends or writes (a compressed value stays compressed:
  // see record.h); NotFound if absent.
  util::Status GetRecord(MDB_txn* txn, RevisionPair rev, RecordView* out) const;
  // PutRecord encodes `record` as it is (compressed only if the caller compressed it).
  util::Status PutRecord(MDB_txn* txn, RevisionPair rev, const RecordView& record);
  // Appends an already encoded record (EncodeRecord's bytes).
  util::Status PutRecordBytes(MDB_txn* txn, RevisionPair rev, std::string_view bytes);
  // NotFound if absent.
  util::Status DeleteRecord(MDB_txn* txn, RevisionPair rev);

  // NotFound if absent.
  util::Status GetMeta(MDB_txn* txn, std::string_view name, uint64_t* value) const;
  util::Status PutMeta(MDB_txn* txn, std::string_view name, uint64_t value);

  // A cursor over the history db in revision order.
  class HistoryCursor {
   public:
    explicit HistoryCursor(MDB_cursor* cursor) : cursor_(cursor) {}
    HistoryCursor(HistoryCursor&& other) noexcept : cursor_(other.cursor_) {
      other.cursor_ = nullptr;
    }
    ~HistoryCursor();
    // Positions at the first record at or after `rev`; false at the end.
    util::StatusOr<bool> Seek(RevisionPair rev);
    util::StatusOr<bool> First();
    util::StatusOr<bool> Last();
    util::StatusOr<bool> Next();
    RevisionPair rev() const { return rev_; }
    std::string_view bytes() const { return bytes_; }

   private:
    util::StatusOr<bool> Load(int rc);
    MDB_cursor* cursor_;
    RevisionPair rev_;
    std::string_view bytes_;
  };
  util::StatusOr<HistoryCursor> OpenHistoryCursor(MDB_txn* txn) const;

  // Bytes of data.mdb that LMDB's newest meta page uses (the pages in use and free pages below
  // the last one), and the map size: how close the store is to ResourceExhausted.
  uint64_t UsedBytes() const;
  uint64_t MapBytes() const { return options_.map_size; }

  // Number of entries LMDB counts in the history db.
  util::StatusOr<uint64_t> HistoryEntries(MDB_txn* txn) const;
  const Options& options() const { return options_; }

 private:
  explicit Backend(Options options) : options_(std::move(options)) {}
  util::Status OpenEnv();
  util::Status CheckFileLength();

  // Bytes of data.mdb that LMDB's newest meta page uses, and the file's length.
  util::Status UsedAndFileBytes(uint64_t* used, uint64_t* file) const;

  const Options options_;
  int lock_fd_ = -1;
  bool reserve_off_ = false;  // committer thread only: a reserving write failed
  MDB_env* env_ = nullptr;
  MDB_dbi history_ = 0;
  MDB_dbi meta_ = 0;

  std::mutex pool_mu_;
  std::vector<MDB_txn*> read_pool_;  // reset read transactions, guarded by pool_mu_
};

}  // namespace converge::store
