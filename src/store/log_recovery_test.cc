// The embedded store with its write-ahead log: what a crash between the log and LMDB leaves,
// what Open replays, and what it refuses.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "store/backend.h"
#include "store/embedded_store.h"
#include "store/kv_conformance_test.h"
#include "store/store_test_util.h"
#include "store/wal_format.h"

namespace converge::store {
namespace {

// `n` bytes that do not compress (the store would store a repetitive value in a few bytes).
std::string SeededRandomBytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

class LogRecoveryTest : public ::testing::Test {
 protected:
  EmbeddedStoreOptions Options(bool held) const {
    EmbeddedStoreOptions o = TestStoreOptions(dir_.path());
    o.write_ahead_log = true;
    o.hold_log_for_test = held;
    return o;
  }
  std::unique_ptr<EmbeddedStore> Open(const EmbeddedStoreOptions& options) {
    auto s = EmbeddedStore::Open(options);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  // A history with every kind of change: puts, overwrites, deletes, a multi-key transaction,
  // and a compare that fails. Returns the expected live keys.
  std::map<std::string, std::string> Write(EmbeddedStore& s, int n) {
    std::map<std::string, std::string> live;
    for (int i = 0; i < n; ++i) {
      const std::string key = "k" + std::to_string(i % 7);
      const std::string value = std::to_string(i) + std::string(i % 3 == 0 ? 3000 : 10, 'v');
      EXPECT_TRUE(s.Put(PutRequest{.key = key, .value = value}).ok());
      live[key] = value;
      if (i % 5 == 4) {
        EXPECT_TRUE(s.DeleteRange(DeleteRangeRequest{.key = key}).ok());
        live.erase(key);
      }
    }
    TxnRequest txn;
    txn.compare.push_back(Compare{.key = "k1",
                                  .target = Compare::Target::kVersion,
                                  .result = Compare::Result::kGreater,
                                  .number = 0});
    txn.success.push_back(PutRequest{.key = "t1", .value = "a"});
    txn.success.push_back(PutRequest{.key = "t2", .value = "b"});
    txn.failure.push_back(PutRequest{.key = "f", .value = "c"});
    auto r = s.Txn(txn);
    EXPECT_TRUE(r.ok());
    live[r->succeeded ? "t1" : "f"] = r->succeeded ? "a" : "c";
    if (r->succeeded) live["t2"] = "b";
    return live;
  }

  void ExpectContents(EmbeddedStore& s, const std::map<std::string, std::string>& live) {
    auto all =
        s.Range(RangeRequest{.key = std::string(1, '\0'), .range_end = std::string(1, '\0')});
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    std::map<std::string, std::string> got;
    for (const auto& kv : all->kvs) got[kv->key] = kv->value;
    EXPECT_EQ(got, live);
  }

  // Every event from revision 1 on, as "revision type key" lines.
  std::vector<std::string> History(EmbeddedStore& s) {
    auto w = s.Watch(WatchRequest{.key = std::string(1, '\0'),
                                  .range_end = std::string(1, '\0'),
                                  .start_revision = 1,
                                  .prev_kv = true});
    EXPECT_TRUE(w.ok());
    std::vector<std::string> out;
    for (const Event& e : Flatten(ReadUntil(**w, s.CurrentRevision()))) {
      out.push_back(std::to_string(e.kv->mod_revision) +
                    (e.type == Event::Type::kPut ? " put " : " del ") + e.kv->key + " " +
                    e.kv->value + " prev " + (e.prev_kv ? e.prev_kv->value : std::string("-")));
    }
    return out;
  }

  // LMDB's current revision, read from data.mdb alone.
  uint64_t LmdbRevision() {
    auto b = Backend::Open(Backend::Options{.dir = dir_.path(), .map_size = size_t{1} << 30});
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    auto txn = (*b)->BeginRead();
    uint64_t rev = 0;
    EXPECT_TRUE((*b)->GetMeta(txn->get(), kMetaCurrentRevision, &rev).ok());
    return rev;
  }

  std::vector<std::string> SegmentFiles() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path() + "/wal")) {
      if (e.path().extension() == ".wal") out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  TempDir dir_;
};

// The crash between a group's log fdatasync and its LMDB commit: every acknowledged write is
// in the log only. Reads and watches were served from the log tail meanwhile, and Open
// replays the log into LMDB, exactly once.
TEST_F(LogRecoveryTest, ReplaysWhatOnlyTheLogHeld) {
  std::map<std::string, std::string> live;
  std::vector<std::string> history;
  Revision revision = 0;
  {
    auto s = Open(Options(/*held=*/true));
    live = Write(*s, 60);
    revision = s->CurrentRevision();
    ExpectContents(*s, live);  // from the tail
    history = History(*s);
    ASSERT_FALSE(history.empty());
  }
  EXPECT_EQ(LmdbRevision(), 0u) << "the applier was held: LMDB has nothing";
  {
    auto s = Open(Options(/*held=*/false));
    EXPECT_GT(s->log_replayed_groups(), 0u);
    EXPECT_EQ(s->CurrentRevision(), revision);
    ExpectContents(*s, live);
    EXPECT_EQ(History(*s), history);
    // Writing goes on from there.
    ASSERT_TRUE(s->Put(PutRequest{.key = "after", .value = "1"}).ok());
    live["after"] = "1";
    EXPECT_EQ(s->CurrentRevision(), revision + 1);
  }
  EXPECT_EQ(LmdbRevision(), static_cast<uint64_t>(revision + 1));
  auto s = Open(Options(/*held=*/false));
  EXPECT_EQ(s->log_replayed_groups(), 0u) << "a clean close leaves nothing to replay";
  ExpectContents(*s, live);
}

// Replay is idempotent against what LMDB applied: a store whose applier ran for a while and
// was then held (a crash in the middle of applying) replays only the rest.
TEST_F(LogRecoveryTest, ReplaysOnlyWhatLmdbLacks) {
  std::map<std::string, std::string> live;
  {
    auto s = Open(Options(/*held=*/false));
    live = Write(*s, 30);
  }
  const uint64_t applied = LmdbRevision();
  ASSERT_GT(applied, 0u);
  {
    auto s = Open(Options(/*held=*/true));
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(s->Put(PutRequest{.key = "more" + std::to_string(i), .value = "x"}).ok());
      live["more" + std::to_string(i)] = "x";
    }
  }
  EXPECT_EQ(LmdbRevision(), applied);
  auto s = Open(Options(/*held=*/false));
  EXPECT_EQ(s->log_replayed_groups(), 10u);
  EXPECT_EQ(s->CurrentRevision(), static_cast<Revision>(applied + 10));
  ExpectContents(*s, live);
}

// A store opened without the log (direct LMDB commits) still replays a log it finds.
TEST_F(LogRecoveryTest, DirectModeReplaysTheLogToo) {
  std::map<std::string, std::string> live;
  {
    auto s = Open(Options(/*held=*/true));
    live = Write(*s, 20);
  }
  EmbeddedStoreOptions direct = TestStoreOptions(dir_.path());
  direct.write_ahead_log = false;
  {
    auto s = Open(direct);
    EXPECT_GT(s->log_replayed_groups(), 0u);
    ExpectContents(*s, live);
    ASSERT_TRUE(s->Put(PutRequest{.key = "direct", .value = "1"}).ok());
    live["direct"] = "1";
  }
  auto s = Open(Options(/*held=*/false));
  EXPECT_EQ(s->log_replayed_groups(), 0u);
  ExpectContents(*s, live);
  ASSERT_TRUE(s->Put(PutRequest{.key = "log", .value = "2"}).ok());
}

// A torn last group (never acknowledged) is dropped, and the store goes on from the group
// before it; the revision it reports is the last one that was complete.
TEST_F(LogRecoveryTest, ATornLastGroupIsDroppedAtOpen) {
  Revision revision = 0;
  {
    auto s = Open(Options(/*held=*/true));
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(
          s->Put(PutRequest{.key = "k" + std::to_string(i), .value = SeededRandomBytes(2000, i)})
              .ok());
    }
    revision = s->CurrentRevision();
  }
  // The newest segment holds the groups; cut the last one in half.
  std::string path;
  size_t last = 0;
  for (const std::string& p : SegmentFiles()) {
    const std::string bytes = ReadFileBytes(p);
    wal::SegmentHeader h;
    ASSERT_TRUE(wal::DecodeSegmentHeader(bytes, &h));
    size_t at = wal::kSegmentHeaderBytes;
    wal::GroupView g;
    std::string why;
    while (wal::ParseGroup(bytes, at, h.salt, &g, &why)) {
      if (g.seq == 5) {
        path = p;
        last = at;
      }
      at += g.span;
    }
  }
  ASSERT_FALSE(path.empty());
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string zeros(1024, '\0');
  ASSERT_EQ(::pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(last + 1024)), 1024);
  ::close(fd);
  auto s = Open(Options(/*held=*/false));
  EXPECT_NE(s->log_torn_tail().find("group 5"), std::string::npos) << s->log_torn_tail();
  EXPECT_EQ(s->CurrentRevision(), revision - 1);
  EXPECT_EQ(s->Range(RangeRequest{.key = "k4"})->kvs.size(), 0u);
  EXPECT_EQ(s->Range(RangeRequest{.key = "k3"})->kvs.size(), 1u);
  auto put = s->Put(PutRequest{.key = "k4", .value = "again"});
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->header_revision, revision);
}

// Damage in the middle of the log is reported at Open, never served.
TEST_F(LogRecoveryTest, ACorruptRecordInTheMiddleIsDataLoss) {
  {
    auto s = Open(Options(/*held=*/true));
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(
          s->Put(PutRequest{.key = "k" + std::to_string(i), .value = "MARKER-" + std::to_string(i)})
              .ok());
    }
  }
  bool flipped = false;
  for (const std::string& p : SegmentFiles()) {
    std::string bytes = ReadFileBytes(p);
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    const size_t at = bytes.find("MARKER-2");
    if (at == std::string::npos) continue;
    bytes[at + 3] ^= 0x01;
    f.seekp(0);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    flipped = true;
  }
  ASSERT_TRUE(flipped);
  auto s = EmbeddedStore::Open(Options(/*held=*/false));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), util::Code::kDataLoss) << s.status().ToString();
}

// Under a steady stream of writes the applier keeps up and the log's segments are reused, so
// the log stays a few segments long.
TEST_F(LogRecoveryTest, SegmentsAreRecycledWhileWriting) {
  EmbeddedStoreOptions options = Options(/*held=*/false);
  options.fsync = false;
  options.log_segment_bytes = 128 << 10;
  options.max_log_tail_bytes = 256 << 10;  // the applier stays at most this far behind
  std::map<std::string, std::string> live;
  {
    auto s = Open(options);
    const std::string value = SeededRandomBytes(3000, 1);
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(s->Put(PutRequest{.key = "r" + std::to_string(i % 50), .value = value}).ok());
      live["r" + std::to_string(i % 50)] = value;
    }
    const auto stats = s->writer_stats();
    EXPECT_GT(stats.log_switches, 20u);  // ~6 MB through 128 KiB segments
    // Once the applier has caught up (it syncs 20 ms after the last group), every full
    // segment is obsolete and the preparer deletes all but a spare: the current segment and
    // the spare are left of the ~50 the writes went through. How far it got while the writes
    // ran depends on the machine's load, so wait for it (the bound only ends a broken run).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (SegmentFiles().size() > 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_LE(SegmentFiles().size(), 2u);
  }
  auto s = Open(options);
  ExpectContents(*s, live);
}

}  // namespace
}  // namespace converge::store
