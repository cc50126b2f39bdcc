#include "store/record.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <random>

#include "store/crc32c.h"

namespace converge::store {
namespace {

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros), 0x8A9136AAu);
  // Extending in pieces equals one pass.
  const std::string text = "the quick brown fox jumps over the lazy dog, twice over";
  uint32_t crc = 0;
  for (size_t i = 0; i < text.size(); i += 7)
    crc = Crc32cExtend(crc, text.data() + i, std::min<size_t>(7, text.size() - i));
  EXPECT_EQ(crc, Crc32c(text));
}

TEST(RecordTest, RoundTrip) {
  RecordView in;
  in.key = "/registry/pods/default/web-1";
  std::string value(3000, 'v');
  in.value = value;
  in.create_revision = 12;
  in.version = 3;
  in.lease = 99;
  in.prev = RevisionPair{40, 2};
  const RevisionPair rev{41, 1};
  std::string bytes = EncodeRecord(rev, in);
  RecordView out;
  ASSERT_TRUE(DecodeRecord(rev, bytes, &out).ok());
  EXPECT_EQ(out.key, in.key);
  std::string stored_value;
  ASSERT_TRUE(RecordValue(rev, out, &stored_value).ok());
  EXPECT_EQ(stored_value, value);
  EXPECT_EQ(out.create_revision, 12);
  EXPECT_EQ(out.version, 3);
  EXPECT_EQ(out.lease, 99);
  EXPECT_EQ(out.prev, (RevisionPair{40, 2}));
  EXPECT_FALSE(out.tombstone);
  util::StatusOr<KeyValuePtr> kv = MakeKeyValue(rev, out);
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ((*kv)->mod_revision, 41);

  RecordView tomb;
  tomb.key = "k";
  tomb.tombstone = true;
  RecordView got;
  ASSERT_TRUE(DecodeRecord(RevisionPair{5, 0}, EncodeRecord(RevisionPair{5, 0}, tomb), &got).ok());
  EXPECT_TRUE(got.tombstone);
}

TEST(RecordTest, EveryFlippedByteIsDetected) {
  RecordView in;
  in.key = "key";
  in.value = "some value bytes";
  in.create_revision = 1;
  in.version = 1;
  const RevisionPair rev{7, 0};
  const std::string good = EncodeRecord(rev, in);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x10;
    RecordView out;
    util::Status st = DecodeRecord(rev, bad, &out);
    EXPECT_EQ(st.code(), util::Code::kDataLoss) << "byte " << i;
  }
  RecordView out;
  EXPECT_EQ(DecodeRecord(RevisionPair{8, 0}, good, &out).code(), util::Code::kDataLoss)
      << "a record under the wrong revision";
  EXPECT_EQ(DecodeRecord(rev, good.substr(0, good.size() - 1), &out).code(), util::Code::kDataLoss);
}

// A pod's JSON as the API server stores it (shortened): compressible, above kCompressMinBytes.
std::string PodJson(int i) {
  std::string name = "web-7c5b9d8f6-" + std::to_string(i);
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"default","uid":"5f0c1a2e-8b3d-4c7e-9a61-2d4f8e0b7c13",)"
         R"("labels":{"app":"web","pod-template-hash":"7c5b9d8f6"},"managedFields":[)"
         R"({"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1",)"
         R"("fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}]},)"
         R"("spec":{"containers":[{"name":"pause","image":"registry.k8s.io/pause:3.9",)"
         R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",)"
         R"("imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","nodeName":"node-)" +
         std::to_string(i % 500) +
         R"("},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"},)"
         R"({"type":"ContainersReady","status":"True"},{"type":"PodScheduled","status":"True"}]}})";
}

std::string RandomBytes(size_t n) {
  std::mt19937_64 rng(7);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// The bytes record `body` (everything after the crc) would have under `rev`, crc included.
std::string WithCrc(RevisionPair rev, const std::string& body) {
  char key[kRevisionKeySize];
  EncodeRevisionKey(rev, key);
  const uint32_t crc = Crc32cExtend(Crc32cExtend(0, key, sizeof(key)), body.data(), body.size());
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  return out + body;
}

TEST(RecordTest, CompressibleValuesAreStoredCompressed) {
  const std::string value = PodJson(1);
  ASSERT_GE(value.size(), kCompressMinBytes);
  RecordView in;
  in.key = "/registry/pods/default/web-1";
  in.value = value;
  in.create_revision = 12;
  in.version = 3;
  in.prev = RevisionPair{40, 2};
  const RevisionPair rev{41, 1};
  const std::string bytes = EncodeRecord(rev, in);
  EXPECT_LT(bytes.size(), value.size() * 3 / 4);
  EXPECT_EQ(static_cast<uint8_t>(bytes[4]), kRecordFormat);
  EXPECT_EQ(static_cast<uint8_t>(bytes[5]), 2) << "flags: compressed, not a tombstone";

  RecordView out;
  ASSERT_TRUE(DecodeRecord(rev, bytes, &out).ok());
  EXPECT_TRUE(out.compressed);
  EXPECT_EQ(out.key, in.key);
  EXPECT_EQ(out.create_revision, 12);
  EXPECT_EQ(out.version, 3);
  EXPECT_EQ(out.prev, (RevisionPair{40, 2}));
  std::string got;
  ASSERT_TRUE(RecordValue(rev, out, &got).ok());
  EXPECT_EQ(got, value);
  util::StatusOr<KeyValuePtr> kv = MakeKeyValue(rev, out);
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ((*kv)->value, value);
  EXPECT_EQ((*kv)->mod_revision, 41);
  kv = MakeKeyValue(rev, out, /*keys_only=*/true);
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ((*kv)->value, "");

  // The header alone is read without touching the frame.
  RecordView header;
  ASSERT_TRUE(DecodeRecordHeader(rev, bytes, &header).ok());
  EXPECT_EQ(header.key, in.key);
  EXPECT_TRUE(header.value.empty());
}

TEST(RecordTest, ValuesThatDoNotShrinkAreStoredAsFormatOne) {
  struct Case {
    const char* name;
    std::string value;
  };
  const Case cases[] = {
      {"empty", ""},
      {"short", std::string(kCompressMinBytes - 1, 'a')},
      {"incompressible", RandomBytes(3072)},
  };
  for (const Case& c : cases) {
    RecordView in;
    in.key = "k";
    in.value = c.value;
    const RevisionPair rev{3, 0};
    const std::string bytes = EncodeRecord(rev, in);
    EXPECT_EQ(bytes.size(), EncodedRecordSize(in)) << c.name;
    EXPECT_EQ(static_cast<uint8_t>(bytes[4]), 1) << c.name;
    RecordView out;
    ASSERT_TRUE(DecodeRecord(rev, bytes, &out).ok()) << c.name;
    EXPECT_FALSE(out.compressed) << c.name;
    EXPECT_EQ(out.value, c.value) << c.name;
    std::string got;
    ASSERT_TRUE(RecordValue(rev, out, &got).ok()) << c.name;
    EXPECT_EQ(got, c.value) << c.name;
  }
}

TEST(RecordTest, FormatOneBytesStillDecode) {
  // Written by the build before compression (kRecordFormat 1), for revision 41.1: a put of a
  // 310-byte value, which a build with compression would store compressed.
  const std::string value =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"default",)"
      R"("labels":{"app":"web","tier":"frontend"}},"spec":{"containers":[{"name":"pause",)"
      R"("image":"registry.k8s.io/pause:3.9"},{"name":"pause-2","image":"registry.k8s.io/)"
      R"(pause:3.9"},{"name":"pause-3","image":"registry.k8s.io/pause:3.9"}]}})";
  ASSERT_EQ(value.size(), 310u);
  std::string bytes("\xbf\x49\xbb\x21\x01\x00\x1c", 7);
  bytes += "/registry/pods/default/web-1";
  bytes.append("\x0c\x03\x00\x28\x02\xb6\x02", 7);
  bytes += value;
  const RevisionPair rev{41, 1};
  RecordView out;
  ASSERT_TRUE(DecodeRecord(rev, bytes, &out).ok());
  EXPECT_FALSE(out.compressed);
  EXPECT_FALSE(out.tombstone);
  EXPECT_EQ(out.key, "/registry/pods/default/web-1");
  EXPECT_EQ(out.value, value);
  EXPECT_EQ(out.create_revision, 12);
  EXPECT_EQ(out.version, 3);
  EXPECT_EQ(out.lease, 0);
  EXPECT_EQ(out.prev, (RevisionPair{40, 2}));
  util::StatusOr<KeyValuePtr> kv = MakeKeyValue(rev, out);
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ((*kv)->value, value);
}

// The frame header's dictionary id field (RFC 8878, 3.1.1.1): after the magic number, the frame
// header descriptor and (unless single-segment) the window descriptor. Empty when there is none.
std::string_view FrameDictionaryIdField(std::string_view frame, size_t* offset) {
  const auto descriptor = static_cast<unsigned char>(frame.at(4));
  const size_t sizes[] = {0, 1, 2, 4};
  *offset = 5 + ((descriptor & 0x20) ? 0 : 1);
  return frame.substr(*offset, sizes[descriptor & 3]);
}

TEST(RecordTest, ValuesCompressWithTheBuiltInDictionaryAndOldFramesStillRead) {
  const std::string value = PodJson(3);
  std::string frame;
  ASSERT_TRUE(CompressValue(value, &frame));
  EXPECT_EQ(ZSTD_getDictID_fromFrame(frame.data(), frame.size()), 49153u)
      << "src/store/dictionaries/objects-49153.zdict";
  // What builds before the dictionary wrote (and data dirs still hold): level 1, no dictionary.
  std::string old_frame(ZSTD_compressBound(value.size()), '\0');
  old_frame.resize(ZSTD_compress(old_frame.data(), old_frame.size(), value.data(), value.size(),
                                 kCompressLevel));
  ASSERT_EQ(ZSTD_getDictID_fromFrame(old_frame.data(), old_frame.size()), 0u);
  EXPECT_LT(frame.size() * 2, old_frame.size()) << "the dictionary at least halves a pod";

  for (const std::string* f : {&frame, &old_frame}) {
    ASSERT_EQ(CompressedValueSize(*f), value.size());
    std::string out(value.size(), '\0');
    ASSERT_TRUE(DecompressValue(*f, out.data(), out.size()).ok());
    EXPECT_EQ(out, value);
  }

  // A frame naming a dictionary this build does not have (a newer build's): DataLoss, not garbage.
  size_t offset = 0;
  ASSERT_EQ(FrameDictionaryIdField(frame, &offset).size(), 2u);
  std::string unknown = frame;
  unknown[offset] = static_cast<char>(unknown[offset] + 1);  // 49154
  ASSERT_EQ(ZSTD_getDictID_fromFrame(unknown.data(), unknown.size()), 49154u);
  std::string out(value.size(), '\0');
  util::Status st = DecompressValue(unknown, out.data(), out.size());
  EXPECT_EQ(st.code(), util::Code::kDataLoss);
  EXPECT_NE(st.message().find("unknown dictionary (49154)"), std::string::npos) << st.ToString();
}

TEST(RecordTest, DamagedCompressedValuesAreDataLoss) {
  const std::string value = PodJson(2);
  RecordView in;
  in.key = "key";
  in.value = value;
  const RevisionPair rev{9, 0};
  const std::string good = EncodeRecord(rev, in);
  ASSERT_EQ(static_cast<uint8_t>(good[4]), kRecordFormat);
  // The checksum covers the stored frame.
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x10;
    RecordView out;
    EXPECT_EQ(DecodeRecord(rev, bad, &out).code(), util::Code::kDataLoss) << "byte " << i;
  }

  // Frames that are damaged but carry a valid checksum (as a bug, or bytes read without
  // verifying, could give): decoding succeeds, decompressing is DataLoss.
  std::string frame;
  ASSERT_TRUE(CompressValue(value, &frame));
  struct Case {
    const char* name;
    std::string frame;
  };
  std::string flipped = frame;
  flipped[flipped.size() / 2] ^= 0x55;
  const Case cases[] = {
      {"not a frame", "this is not a zstd frame at all"},
      {"truncated", frame.substr(0, frame.size() - 5)},
      {"flipped", flipped},
      {"empty", ""},
  };
  for (const Case& c : cases) {
    RecordView damaged = in;
    damaged.value = c.frame;
    damaged.compressed = true;
    std::string bytes(EncodedRecordSize(damaged), '\0');
    EncodeRecord(rev, damaged, bytes.data());
    RecordView out;
    ASSERT_TRUE(DecodeRecord(rev, bytes, &out).ok()) << c.name;
    ASSERT_TRUE(out.compressed) << c.name;
    std::string got;
    util::Status st = RecordValue(rev, out, &got);
    if (c.frame == flipped && st.ok()) {
      // A flip inside a literal run can decompress; it must not give the original then.
      EXPECT_NE(got, value);
      continue;
    }
    EXPECT_EQ(st.code(), util::Code::kDataLoss) << c.name;
    EXPECT_EQ(MakeKeyValue(rev, out).status().code(), util::Code::kDataLoss) << c.name;
  }
}

TEST(RecordTest, CompressedFlagOnlyWhereItCanBe) {
  const RevisionPair rev{5, 0};
  RecordView in;
  in.key = "k";
  in.value = "v";
  const std::string plain = EncodeRecord(rev, in);
  ASSERT_EQ(static_cast<uint8_t>(plain[4]), 1);
  // Format 1 knows no compressed flag.
  std::string body = plain.substr(4);
  body[1] = static_cast<char>(2);
  RecordView out;
  EXPECT_EQ(DecodeRecord(rev, WithCrc(rev, body), &out).code(), util::Code::kDataLoss);
  // A tombstone has no value to compress.
  body = plain.substr(4);
  body[0] = static_cast<char>(kRecordFormat);
  body[1] = static_cast<char>(3);
  EXPECT_EQ(DecodeRecord(rev, WithCrc(rev, body), &out).code(), util::Code::kDataLoss);
  // An unknown format.
  body = plain.substr(4);
  body[0] = static_cast<char>(kRecordFormat + 1);
  EXPECT_EQ(DecodeRecord(rev, WithCrc(rev, body), &out).code(), util::Code::kDataLoss);
  // Format 2 without the flag reads as an uncompressed value.
  // (The decoded views point into the bytes: they must outlive `out`'s use.)
  body = plain.substr(4);
  body[0] = static_cast<char>(kRecordFormat);
  const std::string bytes = WithCrc(rev, body);
  ASSERT_TRUE(DecodeRecord(rev, bytes, &out).ok());
  EXPECT_FALSE(out.compressed);
  EXPECT_EQ(out.value, "v");
}

TEST(RecordTest, MetaValuesCarryAChecksum) {
  std::string bytes = EncodeMetaU64("current_revision", 123456789);
  uint64_t v = 0;
  ASSERT_TRUE(DecodeMetaU64("current_revision", bytes, &v).ok());
  EXPECT_EQ(v, 123456789u);
  bytes[2] ^= 1;
  EXPECT_EQ(DecodeMetaU64("current_revision", bytes, &v).code(), util::Code::kDataLoss);
  EXPECT_EQ(DecodeMetaU64("record_count", EncodeMetaU64("current_revision", 1), &v).code(),
            util::Code::kDataLoss);
}

TEST(RevisionKeyTest, ByteOrderIsRevisionOrder) {
  const RevisionPair revs[] = {{1, 0}, {1, 1}, {2, 0}, {255, 7}, {256, 0}, {1LL << 40, 3}};
  for (size_t i = 1; i < std::size(revs); ++i) {
    EXPECT_LT(RevisionKey(revs[i - 1]), RevisionKey(revs[i]));
    RevisionPair back;
    ASSERT_TRUE(DecodeRevisionKey(RevisionKey(revs[i]), &back));
    EXPECT_EQ(back, revs[i]);
  }
}

}  // namespace
}  // namespace converge::store
