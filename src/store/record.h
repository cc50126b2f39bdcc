// Record: the on-disk form of one change in the history db, and of the values in the meta db.
//
// History db: key = RevisionKey(main, sub) (16 bytes, big-endian); value =
//
//   u32 crc32c (little-endian) of: the 16-byte revision key, then every byte after this field
//   u8  format (1, or kRecordFormat = 2 when the value is compressed)
//   u8  flags (bit 0: tombstone; bit 1, format 2 only: the value bytes are compressed)
//   varint key length, key bytes
//   varint create_revision   (tombstone: of the generation the delete ends)
//   varint version           (tombstone: version of the generation's last put)
//   varint lease
//   varint prev.main, varint prev.sub   (the key's previous change in this generation; 0,0 for
//                                        the put that creates a generation)
//   varint value length, value bytes    (empty for a tombstone; with flags bit 1 one zstd frame
//                                        whose header carries the value's length)
//
// The checksum covers the revision key so that a record that appears under the wrong revision
// is caught as well as a flipped byte. mod_revision is the key's main revision. The prev pointer
// makes history self-describing: a watch catching up from disk finds prev_kv with one lookup and
// never consults the in-memory index. A tombstone keeps create_revision and version so that the
// index can be rebuilt from any suffix of a generation (see KeyIndex::Restore).
//
// Compression: a value of at least kCompressMinBytes is stored as a zstd frame (level
// kCompressLevel) when the frame is smaller (CompressValue: the store's writers call it before
// encoding), and its record is marked format 2; every other record is written as format 1, byte
// for byte what builds before compression wrote, so data dirs and logs of either format read the
// same. Pod JSON of 3.5-4.5 KB shrinks to about a third: such a
// record then fits in an LMDB leaf page (at most ~2 KB per node with 4 KB pages) instead of
// taking one or two overflow pages of its own (docs/PERFORMANCE.md, "Stored values compressed").
// The checksum covers the stored (compressed) bytes, so corruption is caught before the frame is
// decompressed; a frame that still fails to decompress is DataLoss too.
//
// Frames are made with a zstd dictionary compiled into the binary
// (src/store/dictionaries/objects-49153.zdict; scripts/train-store-dictionary.sh): a 4 KB pod
// takes ~0.4 KB instead of 1.5 KB. The frame header names the dictionary, so frames without one
// (builds before it) still read, and a frame naming one this build lacks is DataLoss.
//
// Meta db values are u64 (little-endian) followed by the crc32c of name + those 8 bytes.
//
// Thread-safety: pure functions over caller-owned bytes (zstd's contexts come from internal,
// locked pools).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/kv.h"
#include "store/revision.h"
#include "util/status.h"

namespace converge::store {

inline constexpr uint8_t kRecordFormat = 2;
// Values shorter than this are stored as they are: a zstd frame costs ~10 bytes of its own, and
// small values gain little page space.
inline constexpr size_t kCompressMinBytes = 256;
// Measured on pod JSON (docs/PERFORMANCE.md, "Stored values compressed"): without a dictionary
// level 1 stores a 4.3 KB pod in 1.6 KB, well under LMDB's ~2 KB limit for a node in a leaf page,
// where level -1 (1.9 KB) barely fits; with the built-in dictionary (below) level 1 takes ~0.4 KB.
inline constexpr int kCompressLevel = 1;

// A decoded record; the string_views point into the bytes it was decoded from (or, when
// encoding, into the caller's strings).
struct RecordView {
  std::string_view key;
  // The stored value: the value itself, or with `compressed` its zstd frame (RecordValue and
  // MakeKeyValue give the value).
  std::string_view value;
  bool compressed = false;
  Revision create_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
  bool tombstone = false;
  RevisionPair prev;
};

// Compresses `value` for storage: true, with the zstd frame in *frame, if `value` is at least
// kCompressMinBytes long and the frame is shorter than it.
bool CompressValue(std::string_view value, std::string* frame);

// The length `frame` (a CompressValue frame) decompresses to; nullopt if the frame does not say
// or says more than kMaxValueBytes.
std::optional<size_t> CompressedValueSize(std::string_view frame);
// Decompresses `frame` into exactly `size` bytes at `out`: DataLoss if it does not decompress to
// exactly that many, ResourceExhausted if zstd has no memory for it.
util::Status DecompressValue(std::string_view frame, char* out, size_t size);

// Prepares `record` for encoding: if its value is not compressed yet and CompressValue pays,
// `record->value` then points into *frame and `record->compressed` is set.
void CompressRecordValue(RecordView* record, std::string* frame);

// These two write `record` as it is: its value is compressed only if `record.compressed` (see
// CompressRecordValue).
size_t EncodedRecordSize(const RecordView& record);
// Writes exactly EncodedRecordSize(record) bytes into `out`.
void EncodeRecord(RevisionPair rev, const RecordView& record, char* out);
// Compresses the value when that pays, then encodes.
std::string EncodeRecord(RevisionPair rev, const RecordView& record);

// Decodes `bytes` stored under `rev`. Returns DataLoss if the checksum does not match (when
// `verify_checksum`) or the bytes do not parse. A compressed value stays compressed in
// `out->value` (`out->compressed` set): RecordValue or MakeKeyValue decompress it.
util::Status DecodeRecord(RevisionPair rev, std::string_view bytes, RecordView* out,
                          bool verify_checksum = true);

// Decodes only the header fields of a record (everything but the value; `out->value` is left
// empty) without verifying the checksum: the cheap path for scanning keys.
util::Status DecodeRecordHeader(RevisionPair rev, std::string_view bytes, RecordView* out);

// The value of a decoded record, decompressed if it is compressed, into *value (replacing its
// contents). DataLoss if the frame does not decompress to the length its header gives.
util::Status RecordValue(RevisionPair rev, const RecordView& record, std::string* value);

// The KeyValue a put record describes (kv.h's view). keys_only leaves the value empty.
// DataLoss as from RecordValue.
util::StatusOr<KeyValuePtr> MakeKeyValue(RevisionPair rev, const RecordView& record,
                                         bool keys_only = false);

std::string EncodeMetaU64(std::string_view name, uint64_t value);
util::Status DecodeMetaU64(std::string_view name, std::string_view bytes, uint64_t* value);

}  // namespace converge::store
