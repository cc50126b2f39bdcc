// The log's format: groups round-trip, and every way a group can be damaged makes it fail.
#include "store/wal_format.h"

#include <gtest/gtest.h>

#include <random>

namespace converge::store::wal {
namespace {

constexpr uint64_t kSalt = 0x1234abcd5678ef01;

RecordView Put(const std::string& key, const std::string& value, Revision create = 1) {
  RecordView r;
  r.key = key;
  r.value = value;
  r.create_revision = create;
  r.version = 1;
  return r;
}

// The length of a finished group without its padding (the Begin record's `bytes`).
size_t RecordsLength(const GroupEncoder& e) {
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i) {
    len = (len << 8) | static_cast<unsigned char>(e.bytes()[kRecordHeaderBytes + 8 + i]);
  }
  return len;
}

// A segment's bytes with `groups` written from the first group offset.
std::string Segment(const std::vector<const GroupEncoder*>& groups, size_t size = 64 << 10) {
  std::string bytes = EncodeSegmentHeader({7, kSalt, size, true});
  bytes.resize(size, '\0');
  size_t at = kSegmentHeaderBytes;
  for (const GroupEncoder* g : groups) {
    bytes.replace(at, g->bytes().size(), g->bytes());
    at += g->bytes().size();
  }
  return bytes;
}

TEST(WalFormatTest, SegmentHeaderRoundTripsAndRejectsDamage) {
  const std::string h = EncodeSegmentHeader({42, kSalt, 1 << 20, true});
  ASSERT_EQ(h.size(), kSegmentHeaderBytes);
  SegmentHeader out;
  ASSERT_TRUE(DecodeSegmentHeader(h, &out));
  EXPECT_EQ(out.number, 42u);
  EXPECT_EQ(out.salt, kSalt);
  EXPECT_EQ(out.size, 1u << 20);
  EXPECT_TRUE(out.in_use);
  ASSERT_TRUE(DecodeSegmentHeader(EncodeSegmentHeader({42, kSalt, 1 << 20, false}), &out));
  EXPECT_FALSE(out.in_use);
  for (size_t i = 0; i < 40; ++i) {
    std::string bad = h;
    bad[i] ^= 0x10;
    EXPECT_FALSE(DecodeSegmentHeader(bad, &out)) << "byte " << i;
  }
}

TEST(WalFormatTest, GroupRoundTrips) {
  GroupEncoder e;
  e.AddChange({5, 0}, Put("a", "1", 5));
  e.AddChange({5, 1}, Put("b", std::string(3000, 'x'), 5));
  RecordView tomb;
  tomb.key = "c";
  tomb.tombstone = true;
  tomb.create_revision = 2;
  tomb.version = 3;
  tomb.prev = {4, 0};
  e.AddChange({6, 0}, tomb);
  const size_t finished = e.FinishedSize();
  e.Finish(9, kSalt);
  ASSERT_EQ(e.bytes().size(), finished);
  EXPECT_EQ(e.bytes().size() % kGroupAlign, 0u);
  EXPECT_EQ(e.first_revision(), 5);
  EXPECT_EQ(e.last_revision(), 6);

  const std::string seg = Segment({&e});
  GroupView g;
  std::string why;
  ASSERT_TRUE(ParseGroup(seg, kSegmentHeaderBytes, kSalt, &g, &why)) << why;
  EXPECT_EQ(g.seq, 9u);
  EXPECT_EQ(g.first_revision, 5);
  EXPECT_EQ(g.last_revision, 6);
  EXPECT_EQ(g.span, e.bytes().size());
  ASSERT_EQ(g.changes.size(), 3u);
  RecordView r;
  ASSERT_TRUE(DecodeRecord(g.changes[1].rev, g.changes[1].record, &r).ok());
  EXPECT_EQ(g.changes[1].rev, (RevisionPair{5, 1}));
  EXPECT_EQ(r.key, "b");
  EXPECT_EQ(r.value, std::string(3000, 'x'));
  ASSERT_TRUE(DecodeRecord(g.changes[2].rev, g.changes[2].record, &r).ok());
  EXPECT_TRUE(r.tombstone);
  EXPECT_EQ(r.prev, (RevisionPair{4, 0}));
  EXPECT_EQ(e.change_record(1), g.changes[1].record);
  uint64_t seq = 0;
  EXPECT_TRUE(BeginAt(seg, kSegmentHeaderBytes, kSalt, &seq));
  EXPECT_EQ(seq, 9u);
}

TEST(WalFormatTest, AnotherSaltMakesAGroupGarbage) {
  GroupEncoder e;
  e.AddChange({1, 0}, Put("a", "1"));
  e.Finish(1, kSalt);
  const std::string seg = Segment({&e});
  GroupView g;
  std::string why;
  EXPECT_FALSE(ParseGroup(seg, kSegmentHeaderBytes, kSalt + 1, &g, &why));
  uint64_t seq;
  EXPECT_FALSE(BeginAt(seg, kSegmentHeaderBytes, kSalt + 1, &seq));
}

// Every prefix of a group, the rest zeros or garbage, is not a group: a torn write is never
// taken for a complete one.
TEST(WalFormatTest, EveryTornPrefixFails) {
  GroupEncoder e;
  e.AddChange({1, 0}, Put("key", std::string(700, 'v')));
  e.AddChange({1, 1}, Put("key2", "w"));
  e.Finish(3, kSalt);
  const std::string full = Segment({&e});
  std::mt19937 rng(7);
  const size_t length = RecordsLength(e);
  ASSERT_LT(length, e.bytes().size());
  for (size_t keep = 0; keep < length; ++keep) {
    for (bool garbage : {false, true}) {
      std::string seg = full;
      for (size_t i = kSegmentHeaderBytes + keep; i < kSegmentHeaderBytes + length; ++i) {
        seg[i] = garbage ? static_cast<char>(rng()) : '\0';
      }
      if (seg == full) continue;  // the bytes cut were what was there: nothing torn
      GroupView g;
      std::string why;
      EXPECT_FALSE(ParseGroup(seg, kSegmentHeaderBytes, kSalt, &g, &why))
          << "kept " << keep << " bytes, garbage " << garbage;
    }
  }
}

// Any single flipped bit inside the group's records makes it fail.
TEST(WalFormatTest, EveryFlippedBitFails) {
  GroupEncoder e;
  e.AddChange({1, 0}, Put("key", "value"));
  e.AddChange({2, 0}, Put("other", "value2"));
  e.Finish(3, kSalt);
  const std::string full = Segment({&e});
  GroupView g;
  std::string why;
  ASSERT_TRUE(ParseGroup(full, kSegmentHeaderBytes, kSalt, &g, &why));
  for (size_t i = 0; i < RecordsLength(e); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string seg = full;
      seg[kSegmentHeaderBytes + i] ^= static_cast<char>(1 << bit);
      EXPECT_FALSE(ParseGroup(seg, kSegmentHeaderBytes, kSalt, &g, &why))
          << "byte " << i << " bit " << bit;
    }
  }
}

TEST(WalFormatTest, EndRecordRoundTripsAndIsNotAGroup) {
  const std::string end = EncodeEnd(77, kSalt);
  ASSERT_EQ(end.size(), kGroupAlign);
  std::string seg = EncodeSegmentHeader({7, kSalt, 64 << 10, true}) + end;
  seg.resize(64 << 10, '\0');
  uint64_t seq = 0;
  ASSERT_TRUE(EndAt(seg, kSegmentHeaderBytes, kSalt, &seq));
  EXPECT_EQ(seq, 77u);
  EXPECT_FALSE(EndAt(seg, kSegmentHeaderBytes, kSalt + 1, &seq));
  EXPECT_FALSE(BeginAt(seg, kSegmentHeaderBytes, kSalt, &seq));
  GroupView g;
  std::string why;
  EXPECT_FALSE(ParseGroup(seg, kSegmentHeaderBytes, kSalt, &g, &why));
  seg[kSegmentHeaderBytes + 10] ^= 1;
  EXPECT_FALSE(EndAt(seg, kSegmentHeaderBytes, kSalt, &seq));
}

TEST(WalFormatTest, GroupsFollowEachOtherAtAlignedOffsets) {
  GroupEncoder a;
  a.AddChange({1, 0}, Put("a", std::string(600, 'a')));
  a.Finish(1, kSalt);
  GroupEncoder b;
  b.AddChange({2, 0}, Put("b", "b"));
  b.Finish(2, kSalt);
  const std::string seg = Segment({&a, &b});
  GroupView g;
  std::string why;
  ASSERT_TRUE(ParseGroup(seg, kSegmentHeaderBytes, kSalt, &g, &why)) << why;
  EXPECT_EQ(g.span, a.bytes().size());
  ASSERT_TRUE(ParseGroup(seg, kSegmentHeaderBytes + g.span, kSalt, &g, &why)) << why;
  EXPECT_EQ(g.seq, 2u);
  EXPECT_FALSE(ParseGroup(seg, kSegmentHeaderBytes + g.span + a.bytes().size(), kSalt, &g, &why));
}

}  // namespace
}  // namespace converge::store::wal
