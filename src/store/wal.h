// Wal: the store's write-ahead log. Each commit group of the writer is appended as one group
// (wal_format.h) and made durable with one fdatasync; the group is acknowledged from the log,
// and applied to LMDB later (Applier). Open replays what LMDB had not durably applied.
//
// Files: dir/wal/<number, 16 hex digits>.wal, each preallocated to its full size and written
// front to back by the writer; a new group goes to the next segment when it does not fit.
// Segment numbers only name files: the order of the log is the order of group sequence
// numbers, which run on without a gap across segments.
//
// Why preallocated, filled ahead, and recycled: an fdatasync after appending to a file must
// also make its new size and blocks durable (a journal commit), and one after writing into
// blocks that were allocated but never written (fallocate()d) waits on ext4 for a kworker that
// converts unwritten extents (docs/PERFORMANCE.md, "Store"). Only overwriting blocks that were
// written before avoids both. So a new segment is fallocate()d to its full size (the size never
// changes after), and the preparer thread zero-fills the current segment ahead of the writer
// (fill_ahead_bytes, in 1 MiB steps, synced as it goes), so that the writer's groups overwrite
// zeros; a recycled segment was written in its previous use and needs neither. If the writer
// outruns the filler it writes into unwritten blocks: slower, still correct (and the filler
// leaves that segment alone: at such rates one conversion per large group costs less than
// writing every block twice). Filling and
// writing never touch the same bytes: the filler writes only at or past `filled_`, under
// `fill_mu_`, and the writer takes `fill_mu_` to write past `filled_`.
//
// Lifecycle of a segment: spare (prepared: fallocate()d, header written, not "in use") ->
// current (the writer marks it in use in the header it rewrites with its first group, whose
// fdatasync covers both, and appends) -> full (the writer moved on) -> obsolete (every group in it
// is durable in LMDB: MarkApplied) -> recycled into a spare (new number, new salt: the old groups
// turn into garbage) or deleted. Recycling writes the new header in place, syncs, then renames the
// file to its new number; a crash in between leaves a file whose header names another number, which
// Open treats as a segment being recycled (it held only applied groups) and ignores. New segments
// are built under a ".tmp" name and renamed once complete, so a "*.wal" file's header is always
// complete: a bad header is corruption.
//
// Recovery (Open) reads every segment marked in use, in each the intact groups from the front,
// and checks:
//   - within a segment, groups follow each other with consecutive sequence numbers, and once
//     a group is not intact (torn, corrupt, never written) no intact record of this segment's
//     salt follows (but for the one group below): otherwise the damage is in the middle of the
//     log (DataLoss);
//   - across segments (ordered by their first group), sequence numbers continue without a
//     gap, and the log holds every group after the one LMDB last applied (DataLoss if not).
// What follows the newest intact group is the torn tail of a group that was never
// acknowledged (a group is acknowledged only after its fdatasync returned), the end record
// of a clean shutdown (Close), or nothing.
// Damage confined to the newest group cannot be told from a torn write: like etcd's WAL, the
// log then ends before it. The writer writes a group while the previous one's fdatasync is
// still running (Committer), so a crash may also leave the newest group intact after a torn
// one: a damaged group followed by its successor and nothing intact after that ends the log
// before both (neither was acknowledged). Assumes that a sector is written entirely or not at
// all.
//
// Thread-safety: Append is called by one thread at a time (the store's writer); MarkApplied
// from any thread; Start/Stop/stats from the owner. The preparer thread writes only spare and
// obsolete segments, and zeros past `filled_` in the current one.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "store/wal_format.h"
#include "util/status.h"

namespace converge::store {

class Wal {
 public:
  struct Options {
    std::string dir;  // the store's directory: the log lives in dir/wal
    bool fsync = true;
    size_t segment_bytes = size_t{64} << 20;
    // How far ahead of the writer the preparer keeps the current segment written (0: never).
    size_t fill_ahead_bytes = size_t{4} << 20;
    size_t spare_segments = 1;  // prepared ahead of the writer
  };

  // One group found at Open that LMDB had not applied: views into `mapping`.
  struct RecoveredGroup {
    std::shared_ptr<const void> mapping;  // keeps the segment's bytes mapped
    wal::GroupView view;
  };
  struct Recovered {
    std::vector<RecoveredGroup> groups;  // seq > applied, in order
    uint64_t last_seq = 0;               // newest intact group in the log (0: none)
    // Where the log ended before the end of its segment with an intact group start there (a
    // torn write of a group that was never acknowledged): a description, else empty.
    std::string torn_tail;
  };

  // Reads the log in dir/wal (absent: empty) and returns the groups after `applied_seq`, the
  // newest group that LMDB holds durably. DataLoss as the file comment says.
  static util::StatusOr<std::unique_ptr<Wal>> Open(const Options& options, uint64_t applied_seq,
                                                   Recovered* recovered);
  ~Wal();
  Wal(const Wal&) = delete;
  Wal& operator=(const Wal&) = delete;

  // Starts logging once everything Open returned is durable in LMDB: every existing segment
  // is obsolete from now on (recycled or deleted), the writer gets a fresh segment, and the
  // first group appended will have sequence number `next_seq`. Starts the preparer thread.
  util::Status Start(uint64_t next_seq);
  // Joins the preparer. Appending afterwards is an error.
  void Stop();
  // After the last Append of a clean shutdown (everything applied): writes the end record
  // after the last group, so that the next Open reads no further. Writer only.
  util::Status Close();

  // Finishes `group` with the next sequence number and the salt of the segment it goes to,
  // writes it and makes it durable: Write, then Sync. Writer only.
  util::Status Append(wal::GroupEncoder* group);
  // Finishes and writes `group` without syncing; *sync_fd receives what to Sync to make it
  // (and every group written before it) durable. Moving to another segment syncs the one left
  // first. On an error the log's state is unknown: every later Write fails too. Writer only.
  util::Status Write(wal::GroupEncoder* group, int* sync_fd);
  // fdatasync(fd), where fd came from Write: every group written up to then is durable once it
  // returns OK. May run on another thread than Write, concurrently with it (a pipeline: the
  // next group is written while the previous one syncs).
  util::Status Sync(int fd);
  // The sequence number the next Append assigns. Writer only.
  uint64_t next_seq() const { return next_seq_; }

  // Every group <= seq is durable in LMDB: segments holding only such groups may be reused.
  void MarkApplied(uint64_t seq);

  struct Stats {
    uint64_t groups = 0;         // written
    uint64_t bytes = 0;          // written, padding included
    uint64_t syncs = 0;          // fdatasyncs of the log
    uint64_t sync_ns = 0;        // time in them
    uint64_t switches = 0;       // moves to another segment
    uint64_t unprepared = 0;     // switches that found no spare ready and made one inline
    uint64_t created = 0;        // new segment files
    uint64_t filled_bytes = 0;   // zeros written ahead of the writer
    uint64_t recycled = 0;       // segments reused
    uint64_t deleted = 0;        // obsolete segments removed
    uint64_t segment_files = 0;  // *.wal files now
  };
  Stats stats() const;
  // Tests: the numbers of the *.wal files now, ascending.
  std::vector<uint64_t> SegmentNumbersForTest() const;
  // Tests: waits until the preparer has nothing left to do (its spares are ready, nothing is
  // obsolete) and sleeps.
  void WaitForPreparerForTest();

 private:
  struct Segment {
    uint64_t number = 0;
    int fd = -1;
    uint64_t salt = 0;
    size_t size = 0;
    size_t write_pos = wal::kSegmentHeaderBytes;  // writer: next group's offset
    size_t written = 0;     // bytes from the start known to be written (not unwritten extents)
    uint64_t last_seq = 0;  // newest group in it (0: none)
    bool in_use = false;    // its header says so
    bool unsynced = false;  // writer: written since the writer last synced it itself
  };

  explicit Wal(Options options);
  std::string Path(uint64_t number) const;
  // A new segment file (fallocate()d), built under a temporary name.
  util::StatusOr<Segment> Create(uint64_t number, size_t size);
  // Turns an obsolete segment into a spare with a new number and salt.
  util::Status Recycle(Segment* segment, uint64_t number);
  util::Status SyncDir();
  // Write's work (the writer role is its "lock").
  util::Status WriteLocked(wal::GroupEncoder* group, int* sync_fd);
  // Moves the writer to a segment with room for `need` bytes.
  util::Status SwitchSegment(size_t need);
  // Points the filler at the writer's (new) current segment.
  void SetFillTarget();
  // One step of zero-filling ahead of the writer; false if there was nothing to do.
  bool FillStep();
  void PreparerLoop();
  void ObsoleteLocked();

  const Options options_;
  const std::string wal_dir_;

  // Writer only.
  Segment current_;
  uint64_t next_seq_ = 1;
  bool started_ = false;
  bool failed_ = false;       // an append failed: the end of the log is unknown
  size_t fill_asked_at_ = 0;  // `filled_` when the writer last woke the preparer for more

  // Filling ahead of the writer in its current segment.
  std::mutex fill_mu_;  // held while writing zeros, and by the writer to write past filled_
  std::atomic<size_t> filled_{0};      // [0, filled_) of the current segment is written
  std::atomic<size_t> writer_pos_{0};  // where the writer's next group goes (for pacing)
  int fill_fd_ = -1;                   // guarded by fill_mu_: the current segment's
  size_t fill_size_ = 0;               // guarded by fill_mu_
  size_t writer_end_ = 0;              // guarded by fill_mu_: the writer wrote below this

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Segment> spares_;    // guarded by mu_: ready for the writer, oldest first
  std::deque<Segment> full_;      // guarded by mu_: written, not yet all applied
  std::deque<Segment> obsolete_;  // guarded by mu_: all applied, to recycle or delete
  uint64_t applied_seq_ = 0;      // guarded by mu_
  uint64_t next_number_ = 1;      // guarded by mu_
  bool running_ = false;          // guarded by mu_: Start succeeded
  bool preparer_idle_ = false;    // guarded by mu_: the preparer sleeps with nothing to do
  bool wake_ = false;             // guarded by mu_: work for the preparer since it last looked
  bool stopping_ = false;         // guarded by mu_
  Stats stats_;                   // guarded by mu_
  std::thread preparer_;
};

}  // namespace converge::store
