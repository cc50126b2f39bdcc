#include "store/wal_format.h"

#include <cstring>

#include "store/crc32c.h"

namespace converge::store::wal {

namespace {

constexpr char kMagic[8] = {'C', 'V', 'G', 'W', 'A', 'L', '0', '1'};
constexpr size_t kHeaderCrcOffset = 36;
constexpr uint32_t kFlagInUse = 1;

void PutLe(uint64_t v, int bytes, char* p) {
  for (int i = 0; i < bytes; ++i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

uint64_t GetLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// The checksum of the record whose crc field is at `p` and whose body is `n` bytes long.
uint32_t RecordCrc(uint64_t salt, const char* p, size_t n) {
  char s[8];
  PutLe(salt, 8, s);
  return Crc32cExtend(Crc32cExtend(0, s, sizeof(s)), p + 4, kRecordHeaderBytes - 4 + n);
}

// A record read back: its type, body and checksum field.
struct RawRecord {
  RecordType type;
  std::string_view body;
  uint32_t crc;
};

// Reads the record at `offset` if it lies within `limit` and its checksum matches.
bool ReadRecord(std::string_view segment, size_t offset, size_t limit, uint64_t salt,
                RawRecord* out) {
  if (offset + kRecordHeaderBytes > limit) return false;
  const char* p = segment.data() + offset;
  const uint64_t n = GetLe(p + 4, 4);
  if (n > limit - offset - kRecordHeaderBytes) return false;
  const auto crc = static_cast<uint32_t>(GetLe(p, 4));
  if (crc != RecordCrc(salt, p, n)) return false;
  out->type = static_cast<RecordType>(static_cast<uint8_t>(p[8]));
  out->body = std::string_view(p + kRecordHeaderBytes, n);
  out->crc = crc;
  return true;
}

struct Begin {
  uint64_t seq;
  uint64_t bytes;
  uint32_t changes;
  Revision first;
  Revision last;
};

bool ParseBegin(const RawRecord& r, Begin* out) {
  if (r.type != RecordType::kBegin || r.body.size() != kBeginBodyBytes) return false;
  const char* b = r.body.data();
  out->seq = GetLe(b, 8);
  out->bytes = GetLe(b + 8, 8);
  out->changes = static_cast<uint32_t>(GetLe(b + 16, 4));
  out->first = static_cast<Revision>(GetLe(b + 20, 8));
  out->last = static_cast<Revision>(GetLe(b + 28, 8));
  return true;
}

}  // namespace

std::string EncodeSegmentHeader(const SegmentHeader& header) {
  std::string out(kSegmentHeaderBytes, '\0');
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  PutLe(header.number, 8, out.data() + 8);
  PutLe(header.salt, 8, out.data() + 16);
  PutLe(header.size, 8, out.data() + 24);
  PutLe(header.in_use ? kFlagInUse : 0, 4, out.data() + 32);
  PutLe(Crc32cExtend(0, out.data(), kHeaderCrcOffset), 4, out.data() + kHeaderCrcOffset);
  return out;
}

bool DecodeSegmentHeader(std::string_view bytes, SegmentHeader* out) {
  if (bytes.size() < kHeaderCrcOffset + 4) return false;
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return false;
  if (GetLe(bytes.data() + kHeaderCrcOffset, 4) != Crc32cExtend(0, bytes.data(), kHeaderCrcOffset))
    return false;
  out->number = GetLe(bytes.data() + 8, 8);
  out->salt = GetLe(bytes.data() + 16, 8);
  out->size = GetLe(bytes.data() + 24, 8);
  out->in_use = (GetLe(bytes.data() + 32, 4) & kFlagInUse) != 0;
  return true;
}

GroupEncoder::GroupEncoder() {
  bytes_.resize(kRecordHeaderBytes + kBeginBodyBytes);  // the Begin, filled in by Finish
}

void GroupEncoder::AddChange(RevisionPair rev, const RecordView& record) {
  const size_t record_size = EncodedRecordSize(record);
  const size_t at = bytes_.size();
  bytes_.resize(at + kRecordHeaderBytes + kRevisionKeySize + record_size);
  char* p = bytes_.data() + at;
  PutLe(kRevisionKeySize + record_size, 4, p + 4);
  p[8] = static_cast<char>(RecordType::kChange);
  EncodeRevisionKey(rev, p + kRecordHeaderBytes);
  const size_t record_at = at + kRecordHeaderBytes + kRevisionKeySize;
  EncodeRecord(rev, record, bytes_.data() + record_at);
  changes_.push_back(Change{rev, record_at, record_size});
  record_bytes_ += record_size;
}

void GroupEncoder::Finish(uint64_t seq, uint64_t salt) {
  seq_ = seq;
  const size_t commit_at = bytes_.size();
  const size_t end = commit_at + kRecordHeaderBytes + kCommitBodyBytes;
  bytes_.resize(AlignUp(end), '\0');
  // Begin.
  char* b = bytes_.data();
  PutLe(kBeginBodyBytes, 4, b + 4);
  b[8] = static_cast<char>(RecordType::kBegin);
  PutLe(seq, 8, b + 9);
  PutLe(end, 8, b + 17);
  PutLe(changes_.size(), 4, b + 25);
  PutLe(static_cast<uint64_t>(first_revision()), 8, b + 29);
  PutLe(static_cast<uint64_t>(last_revision()), 8, b + 37);
  // Every record's checksum, chained into the commit marker's.
  uint32_t chain = 0;
  for (size_t at = 0; at < commit_at;) {
    char* p = bytes_.data() + at;
    const uint64_t n = GetLe(p + 4, 4);
    const uint32_t crc = RecordCrc(salt, p, n);
    PutLe(crc, 4, p);
    chain = Crc32cExtend(chain, p, 4);
    at += kRecordHeaderBytes + n;
  }
  char* c = bytes_.data() + commit_at;
  PutLe(kCommitBodyBytes, 4, c + 4);
  c[8] = static_cast<char>(RecordType::kCommit);
  PutLe(seq, 8, c + 9);
  PutLe(chain, 4, c + 17);
  PutLe(RecordCrc(salt, c, kCommitBodyBytes), 4, c);
}

std::string EncodeEnd(uint64_t seq, uint64_t salt) {
  std::string out(kGroupAlign, '\0');
  char* p = out.data();
  PutLe(kEndBodyBytes, 4, p + 4);
  p[8] = static_cast<char>(RecordType::kEnd);
  PutLe(seq, 8, p + 9);
  PutLe(RecordCrc(salt, p, kEndBodyBytes), 4, p);
  return out;
}

bool EndAt(std::string_view segment, size_t offset, uint64_t salt, uint64_t* seq) {
  if (offset + kRecordHeaderBytes + kEndBodyBytes > segment.size() ||
      static_cast<uint8_t>(segment[offset + 8]) != static_cast<uint8_t>(RecordType::kEnd) ||
      GetLe(segment.data() + offset + 4, 4) != kEndBodyBytes) {
    return false;
  }
  RawRecord r;
  if (!ReadRecord(segment, offset, segment.size(), salt, &r)) return false;
  *seq = GetLe(r.body.data(), 8);
  return true;
}

bool BeginAt(std::string_view segment, size_t offset, uint64_t salt, uint64_t* seq) {
  // The cheap fields first: most offsets probed hold zeros or another salt's bytes.
  if (offset + kRecordHeaderBytes + kBeginBodyBytes > segment.size() ||
      static_cast<uint8_t>(segment[offset + 8]) != static_cast<uint8_t>(RecordType::kBegin) ||
      GetLe(segment.data() + offset + 4, 4) != kBeginBodyBytes) {
    return false;
  }
  RawRecord r;
  Begin begin;
  if (!ReadRecord(segment, offset, segment.size(), salt, &r) || !ParseBegin(r, &begin)) {
    return false;
  }
  *seq = begin.seq;
  return true;
}

bool ParseGroup(std::string_view segment, size_t offset, uint64_t salt, GroupView* out,
                std::string* why) {
  RawRecord r;
  Begin begin;
  if (!ReadRecord(segment, offset, segment.size(), salt, &r) || !ParseBegin(r, &begin)) {
    *why = "no intact group start";
    return false;
  }
  if (begin.bytes > segment.size() - offset) {
    *why = "group extends past the end of the segment";
    return false;
  }
  const size_t limit = offset + begin.bytes;
  uint32_t chain = Crc32cExtend(0, segment.data() + offset, 4);
  out->seq = begin.seq;
  out->first_revision = begin.first;
  out->last_revision = begin.last;
  out->changes.clear();
  out->changes.reserve(begin.changes);
  size_t at = offset + kRecordHeaderBytes + r.body.size();
  while (true) {
    if (!ReadRecord(segment, at, limit, salt, &r)) {
      *why = "group " + std::to_string(begin.seq) + " has a torn or corrupt record at offset " +
             std::to_string(at);
      return false;
    }
    const size_t next = at + kRecordHeaderBytes + r.body.size();
    if (r.type == RecordType::kCommit) {
      if (r.body.size() != kCommitBodyBytes || GetLe(r.body.data(), 8) != begin.seq ||
          GetLe(r.body.data() + 8, 4) != chain || next != limit ||
          out->changes.size() != begin.changes) {
        *why = "group " + std::to_string(begin.seq) + " has a commit marker that disagrees";
        return false;
      }
      break;
    }
    if (r.type != RecordType::kChange || r.body.size() < kRevisionKeySize) {
      *why = "group " + std::to_string(begin.seq) + " has an unknown record at offset " +
             std::to_string(at);
      return false;
    }
    chain = Crc32cExtend(chain, segment.data() + at, 4);
    RevisionPair rev;
    DecodeRevisionKey(r.body.substr(0, kRevisionKeySize), &rev);
    out->changes.push_back(GroupView::Change{rev, r.body.substr(kRevisionKeySize)});
    at = next;
  }
  if (!out->changes.empty() && (out->changes.front().rev.main != begin.first ||
                                out->changes.back().rev.main != begin.last)) {
    *why = "group " + std::to_string(begin.seq) + " disagrees with its revision range";
    return false;
  }
  out->span = AlignUp(begin.bytes);
  return true;
}

}  // namespace converge::store::wal
