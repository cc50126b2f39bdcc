#include "store/record.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(bytes.size(), EncodedRecordSize(in));
  RecordView out;
  ASSERT_TRUE(DecodeRecord(rev, bytes, &out).ok());
  EXPECT_EQ(out.key, in.key);
  EXPECT_EQ(out.value, in.value);
  EXPECT_EQ(out.create_revision, 12);
  EXPECT_EQ(out.version, 3);
  EXPECT_EQ(out.lease, 99);
  EXPECT_EQ(out.prev, (RevisionPair{40, 2}));
  EXPECT_FALSE(out.tombstone);
  KeyValuePtr kv = MakeKeyValue(rev, out);
  EXPECT_EQ(kv->mod_revision, 41);

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
