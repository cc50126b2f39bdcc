// Backend's reserved space: zeros past LMDB's last page that later commits overwrite.
#include "store/backend.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "store/store_test_util.h"

namespace converge::store {
namespace {

constexpr size_t kReserve = 256 * 1024;

Backend::Options ReserveOptions(const std::string& dir) {
  return Backend::Options{.dir = dir, .map_size = size_t{1} << 30, .reserve_bytes = kReserve};
}

std::string Value(int i) {
  return "value-" + std::to_string(i) + "-" + std::string(3000, static_cast<char>('a' + i % 26));
}

// Commits records at revisions [from, to) in one transaction and syncs.
void PutRecords(Backend& b, int64_t from, int64_t to) {
  auto txn = b.BeginWrite();
  ASSERT_TRUE(txn.ok()) << txn.status().ToString();
  for (int64_t r = from; r < to; ++r) {
    const std::string key = "k" + std::to_string(r);
    const std::string value = Value(static_cast<int>(r));
    RecordView rec{.key = key, .value = value, .create_revision = r, .version = 1};
    ASSERT_TRUE(b.PutRecord(*txn, RevisionPair{r, 0}, rec).ok());
  }
  ASSERT_TRUE(b.Commit(*txn).ok());
  ASSERT_TRUE(b.Sync().ok());
}

void ExpectRecords(Backend& b, int64_t from, int64_t to) {
  auto txn = b.BeginRead();
  ASSERT_TRUE(txn.ok()) << txn.status().ToString();
  for (int64_t r = from; r < to; ++r) {
    RecordView rec;
    ASSERT_TRUE(b.GetRecord(txn->get(), RevisionPair{r, 0}, &rec).ok()) << r;
    EXPECT_EQ(rec.value, Value(static_cast<int>(r)));
  }
}

TEST(BackendReserveTest, ZerosFollowTheLastPageAndCommitsOverwriteThem) {
  TempDir dir;
  const std::string data = dir.path() + "/data.mdb";
  {
    auto b = Backend::Open(ReserveOptions(dir.path()));
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    PutRecords(**b, 1, 10);
    const uint64_t used = std::filesystem::file_size(data);
    ASSERT_TRUE((*b)->NeedsSpace());
    ASSERT_TRUE((*b)->ReserveSpace().ok());
    EXPECT_FALSE((*b)->NeedsSpace());
    ASSERT_EQ(std::filesystem::file_size(data), used + kReserve);
    EXPECT_EQ(ReadFileBytes(data, used), std::string(kReserve, '\0'));

    // ~60 KB of records land in the reserved space: the file does not grow, and what was
    // committed before and after reads back intact.
    PutRecords(**b, 10, 30);
    EXPECT_EQ(std::filesystem::file_size(data), used + kReserve);
    EXPECT_NE(ReadFileBytes(data, used), std::string(kReserve, '\0'));
    ExpectRecords(**b, 1, 30);
    EXPECT_TRUE((*b)->NeedsSpace());  // less than kReserve is left

    // Consuming all of it makes LMDB grow the file past the reserved space.
    PutRecords(**b, 30, 130);
    EXPECT_GT(std::filesystem::file_size(data), used + kReserve);
    ExpectRecords(**b, 1, 130);
  }
  auto b = Backend::Open(ReserveOptions(dir.path()));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ExpectRecords(**b, 1, 130);
}

TEST(BackendReserveTest, ReopensWithReservedSpaceAndNeverReservesWithoutFsync) {
  TempDir dir;
  const std::string data = dir.path() + "/data.mdb";
  {
    auto b = Backend::Open(ReserveOptions(dir.path()));
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    PutRecords(**b, 1, 5);
    ASSERT_TRUE((*b)->ReserveSpace().ok());
  }
  const uint64_t size = std::filesystem::file_size(data);
  {
    auto b = Backend::Open(ReserveOptions(dir.path()));
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_FALSE((*b)->NeedsSpace());
    ExpectRecords(**b, 1, 5);
  }
  Backend::Options no_fsync = ReserveOptions(dir.path());
  no_fsync.fsync = false;
  auto b = Backend::Open(no_fsync);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  PutRecords(**b, 5, 100);  // consumes the reserved space
  EXPECT_FALSE((*b)->NeedsSpace());
  EXPECT_GT(std::filesystem::file_size(data), size);
}

}  // namespace
}  // namespace converge::store
