// The write-ahead log's on-disk format: segment headers, records and groups (pure functions).
//
// The log (wal.h) is a sequence of segment files, each preallocated to its full size:
//
//   [0, kSegmentHeaderBytes)   header:
//        0  "CVGWAL01"            magic
//        8  u64 segment number    (equals the number in the file name)
//       16  u64 salt              random, chosen each time the file is (re)used as a segment
//       24  u64 size              the file's length
//       32  u32 flags             bit 0: in use (the writer has begun writing groups into it)
//       36  u32 crc32c            of bytes [0, 36)
//   then groups, each starting at a multiple of kGroupAlign, zero-padded to the next one.
//
// A group is the durable effect of one commit of the store's writer: every history record it
// adds, framed as records:
//
//   record:  u32 crc32c   of: the segment's salt (8 bytes, little-endian), then bytes [4, 9 + n)
//            u32 n        length of the body
//            u8  type
//            body (n bytes)
//
//   group:   kBegin   body: u64 seq, u64 bytes (from the Begin's first byte to the end of the
//                     Commit), u32 changes, i64 first revision, i64 last revision
//            kChange  body: the 16-byte revision key, then the history record (record.h), one
//                     per change, in revision order
//            kCommit  body: u64 seq, u32 crc32c over the crc fields of every record of the group
//                     before it (Begin and Changes): the group's commit marker
//
//   end:     kEnd     body: u64 seq (the next group's), zero-padded like a group: written after
//                     the last group when the log is closed cleanly. Nothing follows it in
//                     its segment's life, so Open need not look further.
//
// Integers are little-endian. Seeding every record's checksum with the salt makes bytes left
// in a recycled file by its previous use (another salt) fail as garbage, and a group counts
// only once its Commit record is intact and agrees with its Begin: a group whose write was
// torn by a crash is never mistaken for a complete one.
//
// Thread-safety: pure functions over caller-owned bytes; GroupEncoder is a value owned by one
// thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/kv.h"
#include "store/record.h"
#include "store/revision.h"
#include "util/status.h"

namespace converge::store::wal {

inline constexpr size_t kSegmentHeaderBytes = 4096;
inline constexpr size_t kGroupAlign = 512;
inline constexpr size_t kRecordHeaderBytes = 9;  // crc, length, type
inline constexpr size_t kBeginBodyBytes = 36;
inline constexpr size_t kCommitBodyBytes = 12;
inline constexpr size_t kEndBodyBytes = 8;

enum class RecordType : uint8_t { kBegin = 1, kChange = 2, kCommit = 3, kEnd = 4 };

struct SegmentHeader {
  uint64_t number = 0;
  uint64_t salt = 0;
  uint64_t size = 0;
  // A spare is prepared with in_use false; the writer sets it with its first group (the
  // group's fdatasync makes both durable). A segment not in use holds no group of its salt.
  bool in_use = false;
};

// Exactly kSegmentHeaderBytes.
std::string EncodeSegmentHeader(const SegmentHeader& header);
// False if the magic or the checksum does not match.
bool DecodeSegmentHeader(std::string_view bytes, SegmentHeader* out);

inline size_t AlignUp(size_t n) {
  return (n + kGroupAlign - 1) / kGroupAlign * kGroupAlign;
}

// Builds one group's bytes: Begin, the changes as they are added, Commit, padding.
//
//   GroupEncoder e;
//   e.AddChange(rev, record);  ...
//   e.Finish(seq, salt);       // bytes() is then ready to be written at an aligned offset
//
// Change records are encoded once, straight into the buffer; change(i) gives their revision
// and history-record bytes (what LMDB stores) without copying. The salt is needed only at
// Finish: checksums are computed there.
class GroupEncoder {
 public:
  GroupEncoder();

  // Encodes `record` as it is: a value to be stored compressed is compressed by the caller
  // (CompressRecordValue).
  void AddChange(RevisionPair rev, const RecordView& record);
  // Completes the group; no change may be added afterwards.
  void Finish(uint64_t seq, uint64_t salt);

  size_t change_count() const { return changes_.size(); }
  RevisionPair change_rev(size_t i) const { return changes_[i].rev; }
  // The history record (record.h encoding) of change i.
  std::string_view change_record(size_t i) const {
    return std::string_view(bytes_).substr(changes_[i].offset, changes_[i].size);
  }
  Revision first_revision() const { return changes_.empty() ? 0 : changes_.front().rev.main; }
  Revision last_revision() const { return changes_.empty() ? 0 : changes_.back().rev.main; }
  // Payload bytes (history records) added so far.
  size_t record_bytes() const { return record_bytes_; }
  // The size bytes() will have after Finish.
  size_t FinishedSize() const {
    return AlignUp(bytes_.size() + kRecordHeaderBytes + kCommitBodyBytes);
  }
  // After Finish: the whole group, padded to a multiple of kGroupAlign.
  const std::string& bytes() const { return bytes_; }
  uint64_t seq() const { return seq_; }

 private:
  struct Change {
    RevisionPair rev;
    size_t offset;  // of the history record in bytes_
    size_t size;
  };
  std::string bytes_;
  std::vector<Change> changes_;
  size_t record_bytes_ = 0;
  uint64_t seq_ = 0;
};

// One group read back from a segment; views point into the segment's bytes.
struct GroupView {
  uint64_t seq = 0;
  Revision first_revision = 0;
  Revision last_revision = 0;
  struct Change {
    RevisionPair rev;
    std::string_view record;  // history record bytes (record.h)
  };
  std::vector<Change> changes;
  size_t span = 0;  // bytes from the group's offset to the next aligned offset after it
};

// Parses the group at `offset` of `segment` (the whole file). False, with the reason in
// *why, if no complete, intact group starts there (torn, corrupt, stale or zeros).
bool ParseGroup(std::string_view segment, size_t offset, uint64_t salt, GroupView* out,
                std::string* why);

// The end record (kGroupAlign bytes) announcing that group `seq` will never follow.
std::string EncodeEnd(uint64_t seq, uint64_t salt);
// True if an intact end record of this salt is at `offset`; its sequence number goes to *seq.
bool EndAt(std::string_view segment, size_t offset, uint64_t salt, uint64_t* seq);

// True if an intact Begin record of this salt starts at `offset` (whatever follows it); its
// sequence number goes to *seq. Used to tell a torn tail (nothing valid after it) from damage in
// the middle of the log (a later group is still there).
bool BeginAt(std::string_view segment, size_t offset, uint64_t salt, uint64_t* seq);

}  // namespace converge::store::wal
