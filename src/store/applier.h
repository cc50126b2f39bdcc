// Applier: applies the write-ahead log's groups to LMDB behind the writer, and checkpoints the
// log.
//
// The writer acknowledges a group once it is durable in the log (Wal) and hands it to the log
// tail (LogTail); the applier thread takes whatever the tail holds, writes those records into
// one LMDB write transaction together with the current revision, the record count and the
// newest group's sequence number (kMetaLogApplied), commits, and drops the groups from the
// tail. LMDB keeps its two ordered barriers (MDB_NOMETASYNC: a commit fdatasyncs its data
// pages, and the next commit's fdatasync, or an explicit sync, makes its meta page durable),
// but none of them is on a writer's path any more, and one commit covers every group logged
// meanwhile. Once a commit is durable, the log's segments holding only groups up to it are
// reused (Wal::MarkApplied): that is the checkpoint.
//
// Pacing: a group waits up to `delay` for more to join it unless the tail already holds
// batch_bytes; after a commit with nothing else to apply the applier makes it durable at once
// if a maintenance item waits on it, else after `idle_sync_delay` without new groups (the next
// commit's fdatasync would do it anyway), reserving LMDB space first as the committer did
// (Backend::ReserveSpace).
//
// Maintenance (compaction's record deletions and meta values) is applied here too, in one
// commit with every group durable in the log by then, whatever their size (its deletions may
// concern any published revision, and the writer marks a group durable before publishing it),
// at most one item per maintenance_interval while groups are waiting; Maintain returns once
// its commit is durable.
//
// Failures: a failed LMDB commit or sync makes the applier stop for good (failure() reports
// it, and the writer then refuses writes). Everything acknowledged is still durable in the log
// and still readable from the tail; the next Open replays it.
//
// Thread-safety: Notify, Maintain, failure, used_bytes and stats may be called from any
// thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/backend.h"
#include "store/log_tail.h"
#include "store/wal.h"
#include "util/status.h"

namespace converge::store {

class Applier {
 public:
  struct Options {
    // Each LMDB commit costs an fdatasync and rewrites the B-tree paths it touches, so fewer,
    // larger commits are cheaper; nothing waits for them (PERFORMANCE, "The applier commits
    // every 20 ms").
    std::chrono::microseconds delay = std::chrono::milliseconds(20);
    size_t batch_bytes = size_t{4} << 20;
    std::chrono::microseconds idle_sync_delay = std::chrono::milliseconds(20);
    size_t max_txn_bytes = size_t{64} << 20;  // records per LMDB transaction, roughly
    std::chrono::microseconds maintenance_interval = std::chrono::milliseconds(10);
    // Tests only: never apply a group (not even at Stop), as if the process died between each
    // group's log fdatasync and its LMDB commit. Maintenance still applies.
    bool hold = false;
  };

  // `current`, `record_count` and `applied_seq` describe LMDB as it is when the writer starts.
  Applier(Options options, Backend* backend, LogTail* tail, Wal* wal, Revision current,
          uint64_t record_count, uint64_t applied_seq);
  ~Applier();
  Applier(const Applier&) = delete;
  Applier& operator=(const Applier&) = delete;

  void Start();
  // Applies everything the tail holds (unless options.hold), makes it durable, and joins.
  void Stop();

  // The writer appended a group to the tail.
  void Notify();

  // Deletes records and writes meta values in one LMDB commit after the groups logged so far;
  // returns once that commit is durable.
  util::Status Maintain(std::vector<RevisionPair> deletes,
                        std::vector<std::pair<std::string, uint64_t>> metas);

  // OK, or why the applier stopped.
  util::Status failure() const;
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // LMDB's used bytes after the newest commit (Backend::UsedBytes).
  uint64_t used_bytes() const { return used_bytes_.load(std::memory_order_relaxed); }

  struct Stats {
    uint64_t commits = 0;    // LMDB write transactions
    uint64_t groups = 0;     // log groups applied
    uint64_t commit_ns = 0;  // time in mdb_txn_commit (with its fdatasync)
    uint64_t syncs = 0;      // explicit syncs
    uint64_t sync_ns = 0;
    uint64_t reserves = 0;  // explicit syncs that reserved space first (not in syncs)
    uint64_t reserve_ns = 0;
  };
  Stats stats() const;

  // Writes `groups` into `txn`: their records, then the current revision, the record count
  // and kMetaLogApplied. Each group's revisions must continue from *current (DataLoss if not).
  // Shared by the applier thread and Open's replay.
  static util::Status ApplyGroups(Backend* backend, MDB_txn* txn,
                                  const std::vector<LoggedGroupPtr>& groups, Revision* current,
                                  uint64_t* record_count);

 private:
  struct Maintenance {
    std::vector<RevisionPair> deletes;
    std::vector<std::pair<std::string, uint64_t>> metas;
    std::promise<util::Status> done;
  };
  // A commit whose meta page is not durable yet.
  struct Unsynced {
    uint64_t seq = 0;  // newest group in it (or before it)
    Maintenance* maintenance = nullptr;
  };

  void Loop();
  // Applies the tail's groups (and `m`) in one commit. Returns false on failure.
  bool ApplyOnce(Maintenance* m, std::optional<Unsynced>* unsynced, bool* more);
  bool Sync(std::optional<Unsynced>* unsynced);
  void Durable(const Unsynced& u);
  void Fail(util::Status st, Maintenance* m, std::optional<Unsynced>* unsynced);

  // Constant after construction.
  const Options options_;
  Backend* const backend_;
  LogTail* const tail_;
  Wal* const wal_;

  // Applier thread only.
  Revision current_;
  uint64_t record_count_;
  uint64_t committed_seq_;
  std::chrono::steady_clock::time_point last_maintenance_{};

  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> used_bytes_{0};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;   // guarded by mu_: groups were appended since the last look
  bool idle_ = false;      // guarded by mu_: waiting for work
  bool delaying_ = false;  // guarded by mu_: waiting for more groups
  bool big_ = false;       // guarded by mu_: the tail reached batch_bytes
  bool stopping_ = false;  // guarded by mu_
  std::deque<Maintenance*> maintenance_;  // guarded by mu_
  util::Status failure_;                  // guarded by mu_
  Stats stats_;                           // guarded by mu_
  std::thread thread_;
};

}  // namespace converge::store
