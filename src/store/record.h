// Record: the on-disk form of one change in the history db, and of the values in the meta db.
//
// History db: key = RevisionKey(main, sub) (16 bytes, big-endian); value =
//
//   u32 crc32c (little-endian) of: the 16-byte revision key, then every byte after this field
//   u8  format (kRecordFormat)
//   u8  flags (bit 0: tombstone)
//   varint key length, key bytes
//   varint create_revision   (tombstone: of the generation the delete ends)
//   varint version           (tombstone: version of the generation's last put)
//   varint lease
//   varint prev.main, varint prev.sub   (the key's previous change in this generation; 0,0 for
//                                        the put that creates a generation)
//   varint value length, value bytes    (empty for a tombstone)
//
// The checksum covers the revision key so that a record that appears under the wrong revision
// is caught as well as a flipped byte. mod_revision is the key's main revision. The prev pointer
// makes history self-describing: a watch catching up from disk finds prev_kv with one lookup and
// never consults the in-memory index. A tombstone keeps create_revision and version so that the
// index can be rebuilt from any suffix of a generation (see KeyIndex::Restore).
//
// Meta db values are u64 (little-endian) followed by the crc32c of name + those 8 bytes.
//
// Thread-safety: pure functions over caller-owned bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "store/kv.h"
#include "store/revision.h"
#include "util/status.h"

namespace converge::store {

inline constexpr uint8_t kRecordFormat = 1;

// A decoded record; the string_views point into the bytes it was decoded from (or, when
// encoding, into the caller's strings).
struct RecordView {
  std::string_view key;
  std::string_view value;
  Revision create_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
  bool tombstone = false;
  RevisionPair prev;
};

size_t EncodedRecordSize(const RecordView& record);
// Writes exactly EncodedRecordSize(record) bytes into `out`.
void EncodeRecord(RevisionPair rev, const RecordView& record, char* out);
std::string EncodeRecord(RevisionPair rev, const RecordView& record);

// Decodes `bytes` stored under `rev`. Returns DataLoss if the checksum does not match (when
// `verify_checksum`) or the bytes do not parse.
util::Status DecodeRecord(RevisionPair rev, std::string_view bytes, RecordView* out,
                          bool verify_checksum = true);

// Decodes only the header fields of a record (everything but the value; `out->value` is left
// empty) without verifying the checksum: the cheap path for scanning keys.
util::Status DecodeRecordHeader(RevisionPair rev, std::string_view bytes, RecordView* out);

// The KeyValue a put record describes (kv.h's view). keys_only leaves the value empty.
KeyValuePtr MakeKeyValue(RevisionPair rev, const RecordView& record, bool keys_only = false);

std::string EncodeMetaU64(std::string_view name, uint64_t value);
util::Status DecodeMetaU64(std::string_view name, std::string_view bytes, uint64_t* value);

}  // namespace converge::store
