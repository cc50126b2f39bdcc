// The write-ahead log: what Open recovers after torn writes, what it reports as corruption,
// and segment recycling.
#include "store/wal.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "store/store_test_util.h"

namespace converge::store {
namespace {

// The value of revision `rev`: its length depends on `size`, its bytes on the revision.
std::string ValueOf(Revision rev, size_t size) {
  std::string v(size, '\0');
  for (size_t i = 0; i < size; ++i) v[i] = static_cast<char>('a' + (rev * 7 + i) % 26);
  return v;
}

class WalTest : public ::testing::Test {
 protected:
  Wal::Options Options() const {
    Wal::Options o;
    o.dir = dir_.path();
    o.fsync = false;  // the logic under test does not depend on it; keeps the test fast
    o.segment_bytes = 64 << 10;
    return o;
  }

  // Opens the log (applied up to `applied`), and starts it when asked.
  util::StatusOr<std::unique_ptr<Wal>> Open(uint64_t applied, Wal::Recovered* recovered,
                                            const Wal::Options* options = nullptr) {
    return Wal::Open(options != nullptr ? *options : Options(), applied, recovered);
  }

  // Appends groups for revisions next_rev_.. (one change each, `size`-byte values).
  void Append(Wal& wal, int groups, size_t size) {
    for (int i = 0; i < groups; ++i) {
      wal::GroupEncoder e;
      const Revision rev = next_rev_++;
      const std::string key = "k" + std::to_string(rev);
      const std::string value = ValueOf(rev, size);
      RecordView r;
      r.key = key;
      r.value = value;
      r.create_revision = rev;
      r.version = 1;
      e.AddChange({rev, 0}, r);
      ASSERT_TRUE(wal.Append(&e).ok());
    }
  }

  // A fresh log with `groups` groups of `size`-byte values; then the process "dies" (no
  // Close), or closes cleanly.
  void Write(int groups, size_t size, const Wal::Options* options = nullptr, bool close = false) {
    Wal::Recovered recovered;
    auto wal = Open(0, &recovered, options);
    ASSERT_TRUE(wal.ok()) << wal.status().ToString();
    ASSERT_TRUE((*wal)->Start(1).ok());
    Append(**wal, groups, size);
    if (close) {
      ASSERT_TRUE((*wal)->Close().ok());
    }
  }

  // Checks that `recovered` holds exactly groups first..last, with their values.
  void ExpectGroups(const Wal::Recovered& recovered, uint64_t first, uint64_t last, size_t size) {
    ASSERT_EQ(recovered.groups.size(), last + 1 - first);
    for (size_t i = 0; i < recovered.groups.size(); ++i) {
      const wal::GroupView& g = recovered.groups[i].view;
      EXPECT_EQ(g.seq, first + i);
      ASSERT_EQ(g.changes.size(), 1u);
      const auto rev = static_cast<Revision>(first + i);
      EXPECT_EQ(g.changes[0].rev, (RevisionPair{rev, 0}));
      RecordView r;
      ASSERT_TRUE(DecodeRecord(g.changes[0].rev, g.changes[0].record, &r).ok());
      EXPECT_EQ(r.value, ValueOf(rev, size));
    }
  }

  std::string SegmentPath(uint64_t number) const {
    char name[32];
    std::snprintf(name, sizeof(name), "%016llx.wal", static_cast<unsigned long long>(number));
    return dir_.path() + "/wal/" + name;
  }
  std::vector<uint64_t> Segments() const {
    std::vector<uint64_t> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path() + "/wal")) {
      const std::string name = e.path().filename().string();
      if (name.ends_with(".wal")) out.push_back(std::stoull(name.substr(0, 16), nullptr, 16));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // The segment file that holds group `seq`.
  std::string SegmentHolding(uint64_t seq) const {
    for (uint64_t number : Segments()) {
      const std::string path = SegmentPath(number);
      const std::string bytes = Read(path);
      wal::SegmentHeader h;
      if (!wal::DecodeSegmentHeader(bytes, &h)) continue;
      size_t at = wal::kSegmentHeaderBytes;
      wal::GroupView g;
      std::string why;
      while (at < bytes.size() && wal::ParseGroup(bytes, at, h.salt, &g, &why)) {
        if (g.seq == seq) return path;
        at += g.span;
      }
    }
    ADD_FAILURE() << "no segment holds group " << seq;
    return "";
  }
  static std::string Read(const std::string& path) { return ReadFileBytes(path); }
  static void WriteAt(const std::string& path, size_t offset, const std::string& bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)),
              static_cast<ssize_t>(bytes.size()));
    ::close(fd);
  }
  // The offset and length (records only, without padding) of every group in a segment file.
  static std::vector<std::pair<size_t, size_t>> GroupsIn(const std::string& path) {
    const std::string bytes = Read(path);
    wal::SegmentHeader h;
    EXPECT_TRUE(wal::DecodeSegmentHeader(bytes, &h));
    std::vector<std::pair<size_t, size_t>> out;
    size_t at = wal::kSegmentHeaderBytes;
    wal::GroupView g;
    std::string why;
    while (at < bytes.size() && wal::ParseGroup(bytes, at, h.salt, &g, &why)) {
      // The Begin record's body holds the group's length at byte 8.
      uint64_t len = 0;
      for (int i = 7; i >= 0; --i) {
        len = (len << 8) | static_cast<unsigned char>(bytes[at + wal::kRecordHeaderBytes + 8 + i]);
      }
      out.emplace_back(at, len);
      at += g.span;
    }
    return out;
  }

  TempDir dir_;
  Revision next_rev_ = 1;
};

TEST_F(WalTest, RecoversTheGroupsAfterTheAppliedOne) {
  Write(10, 300);
  Wal::Recovered recovered;
  auto wal = Open(4, &recovered);
  ASSERT_TRUE(wal.ok()) << wal.status().ToString();
  ExpectGroups(recovered, 5, 10, 300);
  EXPECT_EQ(recovered.last_seq, 10u);
  EXPECT_TRUE(recovered.torn_tail.empty());
  wal->reset();
  auto all = Open(10, &recovered);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(recovered.groups.empty());
  EXPECT_EQ(recovered.last_seq, 10u);
}

TEST_F(WalTest, AnEmptyOrAbsentLogRecoversNothing) {
  Wal::Recovered recovered;
  auto wal = Open(0, &recovered);
  ASSERT_TRUE(wal.ok());
  EXPECT_TRUE(recovered.groups.empty());
  ASSERT_TRUE((*wal)->Start(1).ok());
  wal->reset();
  ASSERT_TRUE(Open(0, &recovered).ok());
  EXPECT_TRUE(recovered.groups.empty());
  EXPECT_EQ(recovered.last_seq, 0u);
}

// A crash while the last group was being written leaves any prefix of it, the rest of its
// blocks holding what was there before (zeros or a previous use's bytes): the log then ends at
// the group before, at every byte offset, and that is not an error.
TEST_F(WalTest, ATornLastGroupEndsTheLogAtEveryByteOffset) {
  Write(5, 1500);
  const std::string path = SegmentHolding(5);
  const auto groups = GroupsIn(path);
  ASSERT_EQ(groups.size(), 5u);
  const auto [offset, length] = groups.back();
  const std::string original = Read(path);
  std::mt19937 rng(1);
  for (size_t keep = 0; keep < length; ++keep) {
    for (bool garbage : {false, true}) {
      SCOPED_TRACE("kept " + std::to_string(keep) + " bytes, garbage " + std::to_string(garbage));
      std::string rest(length - keep, '\0');
      if (garbage) {
        for (char& c : rest) c = static_cast<char>(rng());
      }
      if (rest == original.substr(offset + keep, rest.size())) continue;  // nothing torn
      WriteAt(path, offset + keep, rest);
      Wal::Recovered recovered;
      auto wal = Open(0, &recovered);
      ASSERT_TRUE(wal.ok()) << wal.status().ToString();
      ExpectGroups(recovered, 1, 4, 1500);
      // Once its Begin record is complete, the torn group is reported as such.
      if (keep >= wal::kRecordHeaderBytes + wal::kBeginBodyBytes) {
        EXPECT_NE(recovered.torn_tail.find("group 5"), std::string::npos) << recovered.torn_tail;
      }
      WriteAt(path, 0, original);
    }
  }
}

// The disk may persist the sectors of an unfinished write in any order: a last group with any
// one sector missing is torn too.
TEST_F(WalTest, ALastGroupMissingAnySectorIsTorn) {
  Write(5, 3000);
  const std::string path = SegmentHolding(5);
  const auto [offset, length] = GroupsIn(path).back();
  const std::string original = Read(path);
  for (size_t sector = 0; sector * 512 < length; ++sector) {
    SCOPED_TRACE("sector " + std::to_string(sector));
    const std::string zeros(512, '\0');
    if (original.substr(offset + sector * 512, 512) == zeros) continue;  // nothing torn
    WriteAt(path, offset + sector * 512, zeros);
    Wal::Recovered recovered;
    auto wal = Open(0, &recovered);
    ASSERT_TRUE(wal.ok()) << wal.status().ToString();
    ExpectGroups(recovered, 1, 4, 3000);
    WriteAt(path, 0, original);
  }
}

// The writer writes group N+1 while group N's fdatasync runs: a crash may persist N+1 and
// only part of N. Neither was acknowledged, so the log ends before both, whichever sector of N
// is missing; a third group after them, or an end record, would make it corruption again.
TEST_F(WalTest, ATornGroupFollowedOnlyByItsUnsyncedSuccessorEndsTheLog) {
  Write(5, 3000);
  const std::string path = SegmentHolding(5);
  const auto groups = GroupsIn(path);
  ASSERT_EQ(groups.size(), 5u);
  const auto [offset, length] = groups[3];
  const std::string original = Read(path);
  for (size_t sector = 0; sector * 512 < length; ++sector) {
    SCOPED_TRACE("sector " + std::to_string(sector));
    const std::string zeros(512, '\0');
    if (original.substr(offset + sector * 512, 512) == zeros) continue;  // nothing torn
    WriteAt(path, offset + sector * 512, zeros);
    Wal::Recovered recovered;
    auto wal = Open(0, &recovered);
    ASSERT_TRUE(wal.ok()) << wal.status().ToString();
    ExpectGroups(recovered, 1, 3, 3000);
    EXPECT_NE(recovered.torn_tail.find("group 5"), std::string::npos) << recovered.torn_tail;
    WriteAt(path, 0, original);
  }
  // The same damage to group 3 of 5 leaves two intact groups after it: DataLoss.
  const auto [offset3, length3] = groups[2];
  WriteAt(path, offset3 + length3 / 2,
          std::string(1, static_cast<char>(original[offset3 + length3 / 2] ^ 1)));
  Wal::Recovered recovered;
  EXPECT_EQ(Open(0, &recovered).status().code(), util::Code::kDataLoss);
}

// Damage to a group that other groups follow is corruption in the middle of the log: Open
// reports it, whichever byte of the group it hits.
TEST_F(WalTest, ACorruptGroupInTheMiddleIsDataLoss) {
  Write(5, 100);
  const std::string path = SegmentHolding(5);
  const auto groups = GroupsIn(path);
  ASSERT_EQ(groups.size(), 5u);
  const auto [offset, length] = groups[2];
  const std::string original = Read(path);
  for (size_t i = 0; i < length; ++i) {
    SCOPED_TRACE("byte " + std::to_string(i));
    std::string b(1, static_cast<char>(original[offset + i] ^ 0x40));
    WriteAt(path, offset + i, b);
    Wal::Recovered recovered;
    auto wal = Open(0, &recovered);
    ASSERT_FALSE(wal.ok());
    EXPECT_EQ(wal.status().code(), util::Code::kDataLoss) << wal.status().ToString();
    WriteAt(path, 0, original);
  }
  // And even when LMDB has applied it already: the log is not to be trusted.
  WriteAt(path, offset + length / 2,
          std::string(1, static_cast<char>(original[offset + length / 2] ^ 1)));
  Wal::Recovered recovered;
  EXPECT_EQ(Open(3, &recovered).status().code(), util::Code::kDataLoss);
}

// A clean close marks the end of the log after the last group: the log then ends there, and
// damage to the last group is corruption, no longer a possible torn write.
TEST_F(WalTest, AfterACleanCloseTheLastGroupIsNoLongerATornWrite) {
  Write(5, 300, nullptr, /*close=*/true);
  const std::string path = SegmentHolding(5);
  Wal::Recovered recovered;
  {
    auto wal = Open(0, &recovered);
    ASSERT_TRUE(wal.ok()) << wal.status().ToString();
    ExpectGroups(recovered, 1, 5, 300);
    EXPECT_TRUE(recovered.torn_tail.empty());
  }
  const auto [offset, length] = GroupsIn(path).back();
  const std::string bytes = Read(path);
  WriteAt(path, offset + length / 2,
          std::string(1, static_cast<char>(bytes[offset + length / 2] ^ 1)));
  auto wal = Open(0, &recovered);
  ASSERT_FALSE(wal.ok());
  EXPECT_EQ(wal.status().code(), util::Code::kDataLoss) << wal.status().ToString();
  // So is damage to the group before it: the end record follows the last group.
  WriteAt(path, 0, bytes);
  const auto [offset4, length4] = GroupsIn(path)[3];
  WriteAt(path, offset4 + length4 / 2,
          std::string(1, static_cast<char>(bytes[offset4 + length4 / 2] ^ 1)));
  auto again = Open(0, &recovered);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), util::Code::kDataLoss) << again.status().ToString();
}

// The last group of a segment that later segments follow: the gap in sequence numbers shows.
TEST_F(WalTest, ACorruptGroupAtTheEndOfAnEarlierSegmentIsDataLoss) {
  Write(30, 6000);  // about 10 per 64 KiB segment
  ASSERT_GE(Segments().size(), 3u);
  const std::string path = SegmentHolding(1);
  const auto [offset, length] = GroupsIn(path).back();
  const std::string bytes = Read(path);
  WriteAt(path, offset + length / 2,
          std::string(1, static_cast<char>(bytes[offset + length / 2] ^ 1)));
  Wal::Recovered recovered;
  auto wal = Open(0, &recovered);
  ASSERT_FALSE(wal.ok());
  EXPECT_EQ(wal.status().code(), util::Code::kDataLoss) << wal.status().ToString();
}

TEST_F(WalTest, AMissingSegmentIsDataLossUnlessItWasApplied) {
  Write(30, 6000);
  const std::string first_path = SegmentHolding(1);
  const auto first_groups = GroupsIn(first_path).size();
  const std::string middle_path = SegmentHolding(first_groups + 1);
  ASSERT_NE(SegmentHolding(30), middle_path);
  const std::string first = Read(first_path);
  std::filesystem::remove(first_path);
  Wal::Recovered recovered;
  EXPECT_EQ(Open(0, &recovered).status().code(), util::Code::kDataLoss);
  auto wal = Open(first_groups, &recovered);
  ASSERT_TRUE(wal.ok()) << wal.status().ToString();
  ExpectGroups(recovered, first_groups + 1, 30, 6000);
  wal->reset();
  // A segment in the middle.
  std::ofstream(first_path, std::ios::binary) << first;
  std::filesystem::remove(middle_path);
  EXPECT_EQ(Open(0, &recovered).status().code(), util::Code::kDataLoss);
}

TEST_F(WalTest, ACorruptOrTruncatedSegmentHeaderIsDataLoss) {
  Write(3, 100);
  const std::string path = SegmentHolding(3);
  const std::string original = Read(path);
  WriteAt(path, 20, std::string(1, static_cast<char>(original[20] ^ 0x7f)));
  Wal::Recovered recovered;
  EXPECT_EQ(Open(0, &recovered).status().code(), util::Code::kDataLoss);
  WriteAt(path, 0, original);
  std::filesystem::resize_file(path, original.size() / 2);
  EXPECT_EQ(Open(0, &recovered).status().code(), util::Code::kDataLoss);
}

// Recycling writes the new header in place before it renames the file: a crash between the
// two leaves a file whose header names another number. It held only applied groups and is
// ignored.
TEST_F(WalTest, ASegmentCaughtBeingRecycledIsIgnored) {
  Write(30, 6000);
  const std::string path = SegmentHolding(1);
  const auto applied = GroupsIn(path).size();
  WriteAt(path, 0, wal::EncodeSegmentHeader({Segments().back() + 10, 99, 64 << 10, false}));
  Wal::Recovered recovered;
  auto wal = Open(applied, &recovered);
  ASSERT_TRUE(wal.ok()) << wal.status().ToString();
  ExpectGroups(recovered, applied + 1, 30, 6000);
}

// A segment whose header does not say it is in use is a spare: Open does not read it (the
// writer marks a segment in use with its first group, in the same fdatasync).
TEST_F(WalTest, ASegmentNotInUseIsNotRead) {
  Write(5, 100);
  const std::string path = SegmentHolding(5);
  wal::SegmentHeader h;
  ASSERT_TRUE(wal::DecodeSegmentHeader(Read(path), &h));
  ASSERT_TRUE(h.in_use);
  h.in_use = false;
  WriteAt(path, 0, wal::EncodeSegmentHeader(h));
  Wal::Recovered recovered;
  auto wal = Open(0, &recovered);
  ASSERT_TRUE(wal.ok()) << wal.status().ToString();
  EXPECT_TRUE(recovered.groups.empty());
  EXPECT_EQ(recovered.last_seq, 0u);
}

// Segments whose groups are applied are reused: the log does not grow, the files keep their
// blocks, and what a reused segment held before never comes back.
TEST_F(WalTest, AppliedSegmentsAreRecycled) {
  Wal::Recovered recovered;
  auto opened = Open(0, &recovered);
  ASSERT_TRUE(opened.ok());
  Wal& wal = **opened;
  ASSERT_TRUE(wal.Start(1).ok());
  wal.WaitForPreparerForTest();  // a spare is ready before the first switch
  uint64_t seq = 0;
  for (int round = 0; round < 12; ++round) {
    Append(wal, 10, 6000);  // a segment's worth
    seq += 10;
    wal.MarkApplied(seq - 3);
    wal.WaitForPreparerForTest();
  }
  const Wal::Stats stats = wal.stats();
  EXPECT_GT(stats.recycled, 5u);
  EXPECT_LE(stats.segment_files, 4u);
  EXPECT_EQ(stats.unprepared, 0u);
  EXPECT_LE(Segments().size(), 4u);
  opened->reset();
  auto reopened = Open(seq - 3, &recovered);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  ExpectGroups(recovered, seq - 2, seq, 6000);
  EXPECT_EQ(recovered.last_seq, seq);
}

// After Start, every segment of the previous run is obsolete: new groups go to a segment with
// a new salt, and a later Open finds only them.
TEST_F(WalTest, StartAfterRecoveryBeginsAFreshSegment) {
  Write(8, 2000);
  Wal::Recovered recovered;
  {
    auto wal = Open(8, &recovered);
    ASSERT_TRUE(wal.ok());
    ASSERT_TRUE((*wal)->Start(9).ok());
    next_rev_ = 9;
    Append(**wal, 2, 50);
  }
  auto wal = Open(8, &recovered);
  ASSERT_TRUE(wal.ok()) << wal.status().ToString();
  ASSERT_EQ(recovered.groups.size(), 2u);
  EXPECT_EQ(recovered.groups[0].view.seq, 9u);
  EXPECT_EQ(recovered.groups[1].view.seq, 10u);
}

TEST_F(WalTest, SyncedLogRecoversToo) {
  Wal::Options options = Options();
  options.fsync = true;
  Write(20, 5000, &options);
  Wal::Recovered recovered;
  auto wal = Open(0, &recovered, &options);
  ASSERT_TRUE(wal.ok()) << wal.status().ToString();
  ExpectGroups(recovered, 1, 20, 5000);
}

}  // namespace
}  // namespace converge::store
