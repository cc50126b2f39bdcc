#include "store/record.h"

#include <zstd.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "store/crc32c.h"

namespace converge::store {

// src/store/dictionaries/objects-49153.zdict, compiled in (src/store/CMakeLists.txt).
extern const std::span<const unsigned char> kObjectsDictionary49153;

namespace {

constexpr size_t kHeaderSize = 6;  // crc + format + flags
constexpr uint8_t kFormatPlain = 1;
constexpr uint8_t kFlagTombstone = 1;
constexpr uint8_t kFlagCompressed = 2;
// A frame whose header claims more than this is corrupt: values are bounded by the store's
// request limit (1.5 MiB by default), far below it. Guards the allocation before decompressing.
constexpr unsigned long long kMaxValueBytes = 256ull << 20;

// Compression and decompression contexts come from pools: made per call, a context would
// allocate its tables (about 100 KB each for pod-sized values; a compression context grows to
// ~600 KB after a 1.5 MB value) every time; kept per thread, one would stay with every thread
// that ever wrote or read a value (the all-in-one server has ~90). A pool holds as many as were
// ever in use at once. The pools are never destroyed: threads still running at exit may use them.
template <typename Context, Context* (*kCreate)()>
class ContextPool {
 public:
  struct Return {
    void operator()(Context* c) const { Get().Release(c); }
  };
  using Lease = std::unique_ptr<Context, Return>;

  static ContextPool& Get() {
    static auto* pool = new ContextPool;
    return *pool;
  }

  // A context for the caller alone until the lease ends; null if none could be made.
  Lease Acquire() {
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        Context* c = free_.back();
        free_.pop_back();
        return Lease(c);
      }
    }
    return Lease(kCreate());
  }

 private:
  void Release(Context* c) {
    std::lock_guard lock(mu_);
    free_.push_back(c);
  }

  std::mutex mu_;
  std::vector<Context*> free_;  // guarded by mu_
};

using CompressionContexts = ContextPool<ZSTD_CCtx, ZSTD_createCCtx>;
using DecompressionContexts = ContextPool<ZSTD_DCtx, ZSTD_createDCtx>;

// The dictionaries, digested once (a digested dictionary is read-only: any thread may use it).
// Values are compressed with the newest; a frame names its dictionary in its header, so frames
// of every dictionary ever shipped (and of none, as builds before dictionaries wrote) read back.
struct Dictionaries {
  ZSTD_CDict* compress = nullptr;  // the newest, at kCompressLevel
  std::vector<std::pair<unsigned, ZSTD_DDict*>> decompress;

  static const Dictionaries& Get() {
    static const auto* dictionaries = new Dictionaries;  // never destroyed, as the pools
    return *dictionaries;
  }

  // The entry for dictionary `id` (its DDict null if it could not be digested), or null.
  const std::pair<unsigned, ZSTD_DDict*>* Find(unsigned id) const {
    for (const auto& entry : decompress) {
      if (entry.first == id) return &entry;
    }
    return nullptr;
  }

 private:
  Dictionaries() {
    const std::span<const unsigned char> newest = kObjectsDictionary49153;
    compress = ZSTD_createCDict(newest.data(), newest.size(), kCompressLevel);
    for (std::span<const unsigned char> d : {kObjectsDictionary49153}) {
      decompress.emplace_back(ZSTD_getDictID_fromDict(d.data(), d.size()),
                              ZSTD_createDDict(d.data(), d.size()));
    }
  }
};

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

bool GetVarint(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

bool GetBytes(std::string_view* in, std::string_view* out) {
  uint64_t n = 0;
  if (!GetVarint(in, &n) || n > in->size()) return false;
  *out = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

uint32_t LoadLe32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void StoreLe32(uint32_t v, char* p) {
  for (int i = 0; i < 4; ++i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

uint32_t RecordChecksum(RevisionPair rev, std::string_view body) {
  char key[kRevisionKeySize];
  EncodeRevisionKey(rev, key);
  return Crc32cExtend(Crc32cExtend(0, key, sizeof(key)), body.data(), body.size());
}

std::string RevisionText(RevisionPair rev) {
  return std::to_string(rev.main) + "." + std::to_string(rev.sub);
}

util::Status Corrupt(RevisionPair rev, std::string_view what) {
  return util::DataLoss("store: history record at revision " + RevisionText(rev) +
                        " is corrupt: " + std::string(what));
}

// Parses everything after the crc. With `with_value` false the value is not looked at.
util::Status ParseBody(RevisionPair rev, std::string_view in, RecordView* out, bool with_value) {
  if (in.size() < 2) return Corrupt(rev, "too short");
  const auto format = static_cast<uint8_t>(in[0]);
  if (format != kFormatPlain && format != kRecordFormat) {
    return Corrupt(rev, "unknown record format");
  }
  const auto flags = static_cast<uint8_t>(in[1]);
  in.remove_prefix(2);
  out->tombstone = (flags & kFlagTombstone) != 0;
  out->compressed = (flags & kFlagCompressed) != 0;
  if (out->compressed && (format == kFormatPlain || out->tombstone)) {
    return Corrupt(rev, "compressed flag where none can be");
  }
  uint64_t create = 0, version = 0, lease = 0, prev_main = 0, prev_sub = 0;
  if (!GetBytes(&in, &out->key) || !GetVarint(&in, &create) || !GetVarint(&in, &version) ||
      !GetVarint(&in, &lease) || !GetVarint(&in, &prev_main) || !GetVarint(&in, &prev_sub)) {
    return Corrupt(rev, "truncated header");
  }
  out->create_revision = static_cast<Revision>(create);
  out->version = static_cast<int64_t>(version);
  out->lease = static_cast<int64_t>(lease);
  out->prev = RevisionPair{static_cast<Revision>(prev_main), static_cast<int64_t>(prev_sub)};
  out->value = {};
  if (with_value) {
    if (!GetBytes(&in, &out->value) || !in.empty()) return Corrupt(rev, "bad value length");
  }
  return util::Status::Ok();
}

}  // namespace

bool CompressValue(std::string_view value, std::string* frame) {
  if (value.size() < kCompressMinBytes) return false;
  CompressionContexts::Lease context = CompressionContexts::Get().Acquire();
  if (context == nullptr) return false;
  const ZSTD_CDict* dictionary = Dictionaries::Get().compress;
  if (dictionary == nullptr) return false;  // could not be made (out of memory)
  frame->resize(ZSTD_compressBound(value.size()));
  const size_t n = ZSTD_compress_usingCDict(context.get(), frame->data(), frame->size(),
                                            value.data(), value.size(), dictionary);
  // An error (only an allocation failure is possible here) stores the value as it is.
  if (ZSTD_isError(n) || n >= value.size()) return false;
  frame->resize(n);
  return true;
}

void CompressRecordValue(RecordView* record, std::string* frame) {
  if (record->compressed || record->tombstone) return;
  if (CompressValue(record->value, frame)) {
    record->value = *frame;
    record->compressed = true;
  }
}

size_t EncodedRecordSize(const RecordView& r) {
  return kHeaderSize + VarintSize(r.key.size()) + r.key.size() +
         VarintSize(static_cast<uint64_t>(r.create_revision)) +
         VarintSize(static_cast<uint64_t>(r.version)) + VarintSize(static_cast<uint64_t>(r.lease)) +
         VarintSize(static_cast<uint64_t>(r.prev.main)) +
         VarintSize(static_cast<uint64_t>(r.prev.sub)) + VarintSize(r.value.size()) +
         r.value.size();
}

void EncodeRecord(RevisionPair rev, const RecordView& r, char* out) {
  char* p = out + 4;
  *p++ = static_cast<char>(r.compressed ? kRecordFormat : kFormatPlain);
  *p++ =
      static_cast<char>((r.tombstone ? kFlagTombstone : 0) | (r.compressed ? kFlagCompressed : 0));
  p = PutVarint(p, r.key.size());
  std::memcpy(p, r.key.data(), r.key.size());
  p += r.key.size();
  p = PutVarint(p, static_cast<uint64_t>(r.create_revision));
  p = PutVarint(p, static_cast<uint64_t>(r.version));
  p = PutVarint(p, static_cast<uint64_t>(r.lease));
  p = PutVarint(p, static_cast<uint64_t>(r.prev.main));
  p = PutVarint(p, static_cast<uint64_t>(r.prev.sub));
  p = PutVarint(p, r.value.size());
  if (!r.value.empty()) std::memcpy(p, r.value.data(), r.value.size());
  p += r.value.size();
  StoreLe32(RecordChecksum(rev, std::string_view(out + 4, static_cast<size_t>(p - out - 4))), out);
}

std::string EncodeRecord(RevisionPair rev, const RecordView& record) {
  RecordView stored = record;
  std::string frame;
  CompressRecordValue(&stored, &frame);
  std::string out(EncodedRecordSize(stored), '\0');
  EncodeRecord(rev, stored, out.data());
  return out;
}

util::Status DecodeRecord(RevisionPair rev, std::string_view bytes, RecordView* out,
                          bool verify_checksum) {
  if (bytes.size() < kHeaderSize) return Corrupt(rev, "too short");
  if (verify_checksum && LoadLe32(bytes.data()) != RecordChecksum(rev, bytes.substr(4))) {
    return Corrupt(rev, "checksum mismatch");
  }
  return ParseBody(rev, bytes.substr(4), out, /*with_value=*/true);
}

util::Status DecodeRecordHeader(RevisionPair rev, std::string_view bytes, RecordView* out) {
  if (bytes.size() < kHeaderSize) return Corrupt(rev, "too short");
  return ParseBody(rev, bytes.substr(4), out, /*with_value=*/false);
}

std::optional<size_t> CompressedValueSize(std::string_view frame) {
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR || size > kMaxValueBytes) {
    return std::nullopt;
  }
  return static_cast<size_t>(size);
}

util::Status DecompressValue(std::string_view frame, char* out, size_t size) {
  DecompressionContexts::Lease context = DecompressionContexts::Get().Acquire();
  if (context == nullptr) return util::ResourceExhausted("store: no memory to decompress a value");
  const unsigned dictionary_id = ZSTD_getDictID_fromFrame(frame.data(), frame.size());
  size_t n = 0;
  if (dictionary_id == 0) {  // written without a dictionary (builds before them)
    n = ZSTD_decompressDCtx(context.get(), out, size, frame.data(), frame.size());
  } else if (const auto* dictionary = Dictionaries::Get().Find(dictionary_id)) {
    if (dictionary->second == nullptr) {
      return util::ResourceExhausted("store: no memory to digest the values' dictionary");
    }
    n = ZSTD_decompress_usingDDict(context.get(), out, size, frame.data(), frame.size(),
                                   dictionary->second);
  } else {
    return util::DataLoss("compressed value names an unknown dictionary (" +
                          std::to_string(dictionary_id) + "): written by a newer build?");
  }
  if (ZSTD_isError(n) || n != size) return util::DataLoss("compressed value does not decompress");
  return util::Status::Ok();
}

util::Status RecordValue(RevisionPair rev, const RecordView& record, std::string* value) {
  if (!record.compressed) {
    value->assign(record.value);
    return util::Status::Ok();
  }
  const std::optional<size_t> size = CompressedValueSize(record.value);
  if (!size) return Corrupt(rev, "compressed value has no valid length");
  value->resize(*size);
  util::Status st = DecompressValue(record.value, value->data(), *size);
  if (st.code() == util::Code::kDataLoss) st = Corrupt(rev, "compressed value does not decompress");
  if (!st.ok()) value->clear();
  return st;
}

util::StatusOr<KeyValuePtr> MakeKeyValue(RevisionPair rev, const RecordView& r, bool keys_only) {
  auto kv = std::make_shared<KeyValue>();
  kv->key.assign(r.key);
  if (!keys_only) CONVERGE_RETURN_IF_ERROR(RecordValue(rev, r, &kv->value));
  kv->create_revision = r.create_revision;
  kv->mod_revision = rev.main;
  kv->version = r.version;
  kv->lease = r.lease;
  return KeyValuePtr(std::move(kv));
}

std::string EncodeMetaU64(std::string_view name, uint64_t value) {
  std::string out(12, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  const uint32_t crc = Crc32cExtend(Crc32c(name), out.data(), 8);
  StoreLe32(crc, out.data() + 8);
  return out;
}

util::Status DecodeMetaU64(std::string_view name, std::string_view bytes, uint64_t* value) {
  if (bytes.size() != 12 ||
      LoadLe32(bytes.data() + 8) != Crc32cExtend(Crc32c(name), bytes.data(), 8)) {
    return util::DataLoss("store: meta value '" + std::string(name) + "' is corrupt");
  }
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  *value = v;
  return util::Status::Ok();
}

}  // namespace converge::store
