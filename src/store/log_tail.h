// LogTail: the groups that are durable in the write-ahead log but not yet applied to LMDB,
// kept in memory so that reads, watches and the writer find their records; and RecordReader,
// which reads a record by revision from the tail over an LMDB snapshot.
//
// The writer appends each group once it is written to the log (so that the next group's
// evaluation finds its records), and marks it durable after the log's fdatasync, before it
// publishes the group's revisions; the applier applies only durable groups, and drops them once
// its LMDB commit holding them is done (committed, so visible to every LMDB snapshot begun
// afterwards, if not yet synced: the log keeps them durable meanwhile). Readers never look
// past the published revision, so they never see a group that is not durable.
//
// Snapshots make a read consistent without a lock across the two stores. A reader takes the
// tail's snapshot FIRST and begins its LMDB read transaction AFTER it (BeginRead below does
// both in that order). Every revision <= the published revision is then in one of them: a
// group missing from the snapshot was dropped before the snapshot was taken, i.e. after its
// LMDB commit, so the later LMDB transaction sees it.
//
// Thread-safety: every method may be called from any thread. Snapshots are immutable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "store/backend.h"
#include "store/wal_format.h"
#include "util/status.h"

namespace converge::store {

// One group of changes, durable in the log. Immutable once shared.
struct LoggedGroup {
  uint64_t seq = 0;
  Revision first_revision = 0;
  Revision last_revision = 0;
  std::vector<wal::GroupView::Change> changes;  // revision order; views into `owner`
  size_t bytes = 0;                             // of the records
  std::shared_ptr<const void> owner;            // keeps the changes' bytes alive

  // Takes over an encoder that was appended to the log (finished).
  static std::shared_ptr<const LoggedGroup> FromEncoder(std::unique_ptr<wal::GroupEncoder> e);
};
using LoggedGroupPtr = std::shared_ptr<const LoggedGroup>;

class LogTail {
 public:
  class Snapshot {
   public:
    const std::vector<LoggedGroupPtr>& groups() const { return groups_; }
    bool empty() const { return groups_.empty(); }
    // The history record at `rev`, if a group of the snapshot holds it.
    bool Find(RevisionPair rev, std::string_view* record) const;

   private:
    friend class LogTail;
    std::vector<LoggedGroupPtr> groups_;  // ascending seq and revisions
  };
  using SnapshotPtr = std::shared_ptr<const Snapshot>;

  LogTail();
  SnapshotPtr Acquire() const;
  // Writer: a group just written to the log (ascending seq).
  void Append(LoggedGroupPtr group);
  // Writer: groups <= seq are durable in the log.
  void MarkDurable(uint64_t seq) { durable_seq_.store(seq, std::memory_order_release); }
  uint64_t durable_seq() const { return durable_seq_.load(std::memory_order_acquire); }
  // Applier: groups <= seq are committed to LMDB.
  void DropThrough(uint64_t seq);
  // Bytes of records held.
  size_t bytes() const;
  // Blocks until fewer than `limit` bytes are held (the writer's back-pressure) or `give_up()`.
  template <typename Pred>
  void WaitBelow(size_t limit, Pred give_up) {
    std::unique_lock lock(mu_);
    room_cv_.wait(lock, [&] { return bytes_ < limit || give_up(); });
  }
  // Wakes WaitBelow to re-check give_up (set whatever give_up reads before calling this).
  void WakeWaiters() {
    { std::lock_guard lock(mu_); }  // a waiter is either asleep already or will see give_up
    room_cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable room_cv_;
  SnapshotPtr snapshot_;  // guarded by mu_
  size_t bytes_ = 0;      // guarded by mu_
  std::atomic<uint64_t> durable_seq_{0};
};

// A consistent read view: the log tail's snapshot and an LMDB snapshot begun after it.
class ReadView {
 public:
  // Takes the tail snapshot (if `tail` is non-null), then begins the LMDB read.
  static util::StatusOr<ReadView> Begin(Backend* backend, const LogTail* tail);
  // Over an LMDB transaction the caller owns (the writer's, in direct mode), with no tail.
  ReadView(const Backend* backend, MDB_txn* txn);

  // Decodes the record at `rev` into *out (views valid while this view lives). NotFound if
  // absent. Records from the tail were checksummed when encoded and are not verified again.
  util::Status Get(RevisionPair rev, RecordView* out) const;
  MDB_txn* txn() const { return txn_; }
  const LogTail::Snapshot* tail() const { return tail_.get(); }

 private:
  ReadView(const Backend* backend, LogTail::SnapshotPtr tail, Backend::ReadTxn read);
  const Backend* backend_;
  LogTail::SnapshotPtr tail_;
  std::optional<Backend::ReadTxn> read_;
  MDB_txn* txn_;
};

}  // namespace converge::store
