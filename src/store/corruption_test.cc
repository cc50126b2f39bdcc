// Damaged files are detected at Open and reported as DataLoss, never served.
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "store/backend.h"
#include "store/embedded_store.h"
#include "store/record.h"
#include "store/store_test_util.h"

namespace converge::store {
namespace {

class CorruptionTest : public ::testing::Test {
 protected:
  std::string DataFile() const { return dir_.path() + "/data.mdb"; }

  // A store with `n` big values (incompressible, so each on its own overflow page) and some small
  // ones, each carrying a unique marker; with `compressed` also `n` compressible ones (stored
  // compressed, the marker among the frame's raw literals).
  void Fill(int n = 40, bool compressed = false) {
    auto s = EmbeddedStore::Open(TestStoreOptions(dir_.path()));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    std::mt19937 rng(1);
    for (int i = 0; i < n; ++i) {
      std::string big = "BIG-MARKER-" + std::to_string(i) + "-";
      for (int j = 0; j < 3000; ++j) big += static_cast<char>(rng());
      ASSERT_TRUE((*s)->Put(PutRequest{.key = "big/" + std::to_string(i), .value = big}).ok());
      if (compressed) {
        const std::string zip = "ZIP-MARKER-" + std::to_string(i) + "-" + std::string(3000, 'z');
        ASSERT_TRUE((*s)->Put(PutRequest{.key = "zip/" + std::to_string(i), .value = zip}).ok());
      }
      const std::string small = "SMALL-MARKER-" + std::to_string(i);
      ASSERT_TRUE((*s)->Put(PutRequest{.key = "small/" + std::to_string(i), .value = small}).ok());
    }
    ASSERT_TRUE((*s)->Put(PutRequest{.key = "UNIQUE-KEY-MARKER", .value = "v"}).ok());
  }

  util::Status Reopen() {
    auto s = EmbeddedStore::Open(TestStoreOptions(dir_.path()));
    return s.ok() ? util::Status::Ok() : s.status();
  }

  std::string ReadFile() { return ReadFileBytes(DataFile()); }
  void WriteFile(const std::string& bytes) {
    std::ofstream out(DataFile(), std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // Flips one byte in every copy of `marker` in the data file (copy-on-write leaves stale
  // copies of pages behind; one of the copies is the live one). Returns the copies found.
  int FlipEvery(const std::string& marker, size_t offset_in_marker) {
    std::string bytes = ReadFile();
    int found = 0;
    for (size_t at = bytes.find(marker); at != std::string::npos; at = bytes.find(marker, at + 1)) {
      bytes[at + offset_in_marker] ^= 0x01;
      ++found;
    }
    WriteFile(bytes);
    return found;
  }

  TempDir dir_;
};

TEST_F(CorruptionTest, AnIntactStoreOpens) {
  Fill();
  EXPECT_TRUE(Reopen().ok());
  EXPECT_TRUE(Reopen().ok());
}

// The bytes of data.mdb that LMDB's newest meta page uses (the file may be longer: the store
// keeps zero-filled space reserved past them, see backend.h).
uint64_t LmdbUsedBytes(const std::string& dir) {
  MDB_env* env = nullptr;
  EXPECT_EQ(mdb_env_create(&env), 0);
  EXPECT_EQ(mdb_env_set_maxdbs(env, 2), 0);
  EXPECT_EQ(mdb_env_open(env, dir.c_str(), MDB_RDONLY | MDB_NOLOCK, 0644), 0);
  MDB_envinfo info{};
  MDB_stat stat{};
  mdb_env_info(env, &info);
  mdb_env_stat(env, &stat);
  mdb_env_close(env);
  return (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
}

TEST_F(CorruptionTest, TruncatedDataFileIsDataLoss) {
  Fill();
  const auto size = LmdbUsedBytes(dir_.path());
  ASSERT_LE(size, std::filesystem::file_size(DataFile()));
  for (uintmax_t keep : {size / 2, size - 4096, uintmax_t{4096}, uintmax_t{100}, uintmax_t{0}}) {
    SCOPED_TRACE("truncated to " + std::to_string(keep) + " of " + std::to_string(size));
    TempDir copy;
    std::filesystem::copy(dir_.path(), copy.path(),
                          std::filesystem::copy_options::overwrite_existing |
                              std::filesystem::copy_options::recursive);
    std::filesystem::resize_file(copy.path() + "/data.mdb", keep);
    auto s = EmbeddedStore::Open(TestStoreOptions(copy.path()));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), util::Code::kDataLoss) << s.status().ToString();
  }
}

TEST_F(CorruptionTest, CuttingOnlyReservedSpaceIsHarmless) {
  Fill();
  // The reserved tail is topped up while the writer is idle; reserve it now in case it was not.
  {
    Backend::Options options{.dir = dir_.path(), .map_size = size_t{1} << 30};
    auto b = Backend::Open(options);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    if ((*b)->NeedsSpace()) {
      ASSERT_TRUE((*b)->ReserveSpace().ok());
    }
  }
  const uint64_t used = LmdbUsedBytes(dir_.path());
  ASSERT_GT(std::filesystem::file_size(DataFile()), used);
  std::filesystem::resize_file(DataFile(), used);
  EXPECT_TRUE(Reopen().ok());
}

TEST_F(CorruptionTest, FlippedByteInABigValueIsDataLoss) {
  Fill();
  ASSERT_GE(FlipEvery("BIG-MARKER-17-", 4), 1);
  util::Status st = Reopen();
  EXPECT_EQ(st.code(), util::Code::kDataLoss) << st.ToString();
  EXPECT_NE(st.message().find("checksum"), std::string::npos) << st.ToString();
}

TEST_F(CorruptionTest, FlippedByteInACompressedValueIsDataLoss) {
  Fill(40, /*compressed=*/true);
  ASSERT_GE(FlipEvery("ZIP-MARKER-17-", 4), 1);
  util::Status st = Reopen();
  EXPECT_EQ(st.code(), util::Code::kDataLoss) << st.ToString();
  EXPECT_NE(st.message().find("checksum"), std::string::npos) << st.ToString();
}

TEST_F(CorruptionTest, FlippedByteInASmallValueIsDataLoss) {
  Fill();
  ASSERT_GE(FlipEvery("SMALL-MARKER-23", 2), 1);
  util::Status st = Reopen();
  EXPECT_EQ(st.code(), util::Code::kDataLoss) << st.ToString();
}

TEST_F(CorruptionTest, FlippedByteInAKeyIsDataLoss) {
  Fill();
  ASSERT_GE(FlipEvery("UNIQUE-KEY-MARKER", 3), 1);
  util::Status st = Reopen();
  EXPECT_EQ(st.code(), util::Code::kDataLoss) << st.ToString();
}

TEST_F(CorruptionTest, MissingDataFileIsDataLoss) {
  Fill();
  std::filesystem::remove(DataFile());
  util::Status st = Reopen();
  EXPECT_EQ(st.code(), util::Code::kDataLoss) << st.ToString();
}

// Damage a writer could never produce, made through the backend directly.
class HistoryDamageTest : public CorruptionTest {
 protected:
  template <typename F>
  void Damage(F f) {
    Backend::Options options;
    options.dir = dir_.path();
    options.map_size = size_t{1} << 30;
    auto b = Backend::Open(options);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    auto txn = (*b)->BeginWrite();
    ASSERT_TRUE(txn.ok());
    f(**b, *txn);
    ASSERT_TRUE((*b)->Commit(*txn).ok());
  }
};

TEST_F(HistoryDamageTest, AMissingRecordIsDataLoss) {
  Fill(10);
  Damage([](Backend& b, MDB_txn* txn) {
    ASSERT_TRUE(b.DeleteRecord(txn, RevisionPair{5, 0}).ok());
  });
  util::Status st = Reopen();
  EXPECT_EQ(st.code(), util::Code::kDataLoss) << st.ToString();
}

TEST_F(HistoryDamageTest, ALostTailIsDataLoss) {
  Fill(10);
  Damage([](Backend& b, MDB_txn* txn) {
    ASSERT_TRUE(b.DeleteRecord(txn, RevisionPair{21, 0}).ok());
    ASSERT_TRUE(b.PutMeta(txn, kMetaRecordCount, 20).ok());  // even with a matching count
  });
  util::Status st = Reopen();
  EXPECT_EQ(st.code(), util::Code::kDataLoss) << st.ToString();
  EXPECT_NE(st.message().find("current revision"), std::string::npos) << st.ToString();
}

TEST_F(HistoryDamageTest, ARecordThatBreaksItsGenerationIsDataLoss) {
  Fill(10);
  Damage([](Backend& b, MDB_txn* txn) {
    // Revision 3 re-puts "big/1" with a well-formed record that claims version 7.
    ASSERT_TRUE(b.DeleteRecord(txn, RevisionPair{3, 0}).ok());
    RecordView r;
    r.key = "big/1";
    r.value = "x";
    r.create_revision = 3;
    r.version = 7;
    const std::string bytes = EncodeRecord(RevisionPair{3, 0}, r);
    RecordView check;
    ASSERT_TRUE(DecodeRecord(RevisionPair{3, 0}, bytes, &check).ok());
    // Put it back in place (PutRecord appends, so use LMDB directly).
    MDB_dbi dbi;
    ASSERT_EQ(mdb_dbi_open(txn, "history", 0, &dbi), 0);
    std::string key = RevisionKey(RevisionPair{3, 0});
    MDB_val k{key.size(), key.data()};
    MDB_val v{bytes.size(), const_cast<char*>(bytes.data())};
    ASSERT_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
  });
  util::Status st = Reopen();
  EXPECT_EQ(st.code(), util::Code::kDataLoss) << st.ToString();
  EXPECT_NE(st.message().find("inconsistent"), std::string::npos) << st.ToString();
}

TEST_F(HistoryDamageTest, ACorruptMetaValueIsDataLoss) {
  Fill(3);
  Damage([](Backend&, MDB_txn* txn) {
    MDB_dbi dbi;
    ASSERT_EQ(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
    std::string name = kMetaCurrentRevision;
    std::string garbage = "not a meta value";
    MDB_val k{name.size(), name.data()};
    MDB_val v{garbage.size(), garbage.data()};
    ASSERT_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
  });
  util::Status st = Reopen();
  EXPECT_EQ(st.code(), util::Code::kDataLoss) << st.ToString();
}

}  // namespace
}  // namespace converge::store
