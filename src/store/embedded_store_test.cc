// The embedded store: the conformance suite instantiated over it, and what only it promises
// (compaction internals, exactness at the compact revision, locking, periodic progress).
#include "store/embedded_store.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <filesystem>
#include <future>
#include <random>
#include <thread>

#include "store/group_writer.h"
#include "store/index.h"
#include "store/kv_conformance_test.h"
#include "store/record.h"
#include "store/store_test_util.h"
#include "util/clock.h"

namespace converge::store {
namespace {

// Stores in the three shapes of the writer: direct LMDB commits, the write-ahead log with the
// applier behind it, and the log with the applier held (every read comes from the log tail,
// and every reopen replays the whole log).
enum class Shape { kDirect, kLog, kLogHeld };

class EmbeddedFactory : public KvFactory {
 public:
  explicit EmbeddedFactory(Shape shape) : shape_(shape) {}
  util::StatusOr<std::unique_ptr<KV>> Open(const KvTestOptions& options) override {
    options_ = TestStoreOptions(dir_.path() + "/" + std::to_string(next_++));
    options_.write_ahead_log = shape_ != Shape::kDirect;
    options_.hold_log_for_test = shape_ == Shape::kLogHeld;
    if (options.watcher_buffer != 0) options_.watcher_buffer = options.watcher_buffer;
    return OpenEmbeddedStore(options_);
  }
  bool CanReopen() const override { return true; }
  util::StatusOr<std::unique_ptr<KV>> Reopen(std::unique_ptr<KV> kv) override {
    kv.reset();
    return OpenEmbeddedStore(options_);
  }
  bool CancelsSlowWatchers() const override { return true; }
  bool ExactAtCompactRevision() const override { return true; }

 private:
  const Shape shape_;
  TempDir dir_;
  int next_ = 0;
  EmbeddedStoreOptions options_;
};

INSTANTIATE_TEST_SUITE_P(
    Embedded, KvConformanceTest,
    ::testing::Values(
        KvBackend{"Embedded",
                  [] { return std::unique_ptr<KvFactory>(new EmbeddedFactory(Shape::kDirect)); }},
        KvBackend{"EmbeddedLog",
                  [] { return std::unique_ptr<KvFactory>(new EmbeddedFactory(Shape::kLog)); }},
        KvBackend{"EmbeddedLogHeld",
                  [] { return std::unique_ptr<KvFactory>(new EmbeddedFactory(Shape::kLogHeld)); }}),
    KvBackendName);

class EmbeddedStoreTest : public ::testing::Test {
 protected:
  void Open(EmbeddedStoreOptions options) {
    store_.reset();
    auto s = EmbeddedStore::Open(options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void Open() { Open(TestStoreOptions(dir_.path())); }
  Revision Put(const std::string& k, const std::string& v) {
    auto r = store_->Put(PutRequest{.key = k, .value = v});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->header_revision : 0;
  }
  Revision Delete(const std::string& k) {
    auto r = store_->DeleteRange(DeleteRangeRequest{.key = k});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->header_revision : 0;
  }

  TempDir dir_;
  util::FakeClock clock_;  // outlives store_, whose notifier may wait on it
  std::unique_ptr<EmbeddedStore> store_;
};

// `n` bytes no compressor shrinks.
std::string Incompressible(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// A JSON value of about 4 KB made of a few words, as compressible as an object's JSON.
std::string Wordy(int i) {
  static const char* const kWords[] = {"metadata", "status",  "True", "Running", "pause",
                                       "registry", "default", "node", "Ready",   "conditions"};
  std::mt19937 rng(static_cast<unsigned>(i));
  std::string s = R"({"name":"pod-)" + std::to_string(i) + R"(","words":")";
  while (s.size() < 4000) s += std::string(kWords[rng() % std::size(kWords)]) + " ";
  return s + R"("})";
}

std::vector<Revision> Mains(const std::vector<RevisionPair>& revs) {
  std::vector<Revision> out;
  for (const auto& r : revs) out.push_back(r.main);
  return out;
}

// key_index.h's worked example, end to end: the revisions left after compacting at each
// revision, in memory, and after the deletions reached the disk (reopen).
TEST_F(EmbeddedStoreTest, CompactionKeepsWhatTheWorkedExampleSays) {
  struct Case {
    Revision at;
    std::vector<Revision> left;
  };
  const Case cases[] = {{1, {1, 2, 3, 4}}, {2, {1, 2, 3, 4}}, {3, {2, 3, 4}}, {4, {4}}};
  for (const Case& c : cases) {
    SCOPED_TRACE("compact at " + std::to_string(c.at));
    TempDir dir;
    Open(TestStoreOptions(dir.path()));
    Put("k", "1");  // 1
    Put("k", "2");  // 2
    Delete("k");    // 3
    Put("k", "4");  // 4
    ASSERT_TRUE(store_->Compact(c.at).ok());
    store_->WaitForCompaction();
    EXPECT_EQ(Mains(store_->index().RevisionsForTest("k")), c.left);
    Open(TestStoreOptions(dir.path()));
    EXPECT_EQ(Mains(store_->index().RevisionsForTest("k")), c.left) << "after reopen";
    auto k = store_->Range(RangeRequest{.key = "k"});
    ASSERT_TRUE(k.ok());
    ASSERT_EQ(k->kvs.size(), 1u);
    EXPECT_EQ(k->kvs[0]->value, "4");
    store_.reset();
  }
}

TEST_F(EmbeddedStoreTest, ForgetsDeletedKeysOnceCompacted) {
  Open();
  Put("gone", "1");
  Delete("gone");
  Put("other", "1");
  ASSERT_TRUE(store_->Compact(3).ok());
  store_->WaitForCompaction();
  EXPECT_TRUE(store_->index().RevisionsForTest("gone").empty());
  EXPECT_EQ(store_->index().KeyCount(), 1u);
}

// etcd loses these at its compact revision; this store keeps them, so a watch resumed from
// the compact revision is exact.
TEST_F(EmbeddedStoreTest, WatchFromTheCompactRevisionKeepsDeletesAndPrevKv) {
  Open();
  Put("k", "1");  // 1
  Put("k", "2");  // 2
  Delete("k");    // 3
  Put("x", "1");  // 4
  Put("x", "2");  // 5
  ASSERT_TRUE(store_->Compact(3).ok());
  store_->WaitForCompaction();
  auto w = store_->Watch(WatchRequest{.key = std::string(1, '\0'),
                                      .range_end = std::string(1, '\0'),
                                      .start_revision = 3,
                                      .prev_kv = true});
  ASSERT_TRUE(w.ok());
  auto events = Flatten(ReadUntil(**w, 5));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, Event::Type::kDelete);
  EXPECT_EQ(events[0].kv->mod_revision, 3);
  ASSERT_NE(events[0].prev_kv, nullptr);
  EXPECT_EQ(events[0].prev_kv->value, "2");
  ASSERT_TRUE(store_->Compact(5).ok());
  store_->WaitForCompaction();
  auto w5 = store_->Watch(WatchRequest{.key = "x", .start_revision = 5, .prev_kv = true});
  ASSERT_TRUE(w5.ok());
  auto e5 = Flatten(ReadUntil(**w5, 5));
  ASSERT_EQ(e5.size(), 1u);
  ASSERT_NE(e5[0].prev_kv, nullptr);
  EXPECT_EQ(e5[0].prev_kv->value, "1");
}

TEST_F(EmbeddedStoreTest, ASecondOpenOfTheSameDirectoryFails) {
  Open();
  auto second = EmbeddedStore::Open(TestStoreOptions(dir_.path()));
  EXPECT_EQ(second.status().code(), util::Code::kFailedPrecondition) << second.status().ToString();
  store_.reset();
  auto third = EmbeddedStore::Open(TestStoreOptions(dir_.path()));
  EXPECT_TRUE(third.ok()) << "the lock goes with the store";
}

TEST_F(EmbeddedStoreTest, PeriodicProgressNotificationsFollowTheClock) {
  EmbeddedStoreOptions options = TestStoreOptions(dir_.path());
  options.clock = &clock_;
  options.progress_interval = std::chrono::seconds(5);
  Open(options);
  Put("a", "1");
  auto with = store_->Watch(WatchRequest{.key = "a", .progress_notify = true});
  auto without = store_->Watch(WatchRequest{.key = "a"});
  ASSERT_TRUE(with.ok() && without.ok());
  // Periodic notifications go to live watchers; an answered RequestProgress proves a watcher
  // is live.
  for (auto* w : {&*with, &*without}) {
    (**w).RequestProgress();
    auto live = NextOrTimeout(**w);
    ASSERT_TRUE(live.ok() && live->IsProgressNotify());
    EXPECT_EQ(live->header_revision, 1);
  }
  Put("a", "2");
  ASSERT_EQ(NextOrTimeout(**with)->events.size(), 1u);
  ASSERT_EQ(NextOrTimeout(**without)->events.size(), 1u);
  clock_.Step(std::chrono::seconds(6));
  auto progress = NextOrTimeout(**with);
  ASSERT_TRUE(progress.ok());
  EXPECT_TRUE(progress->IsProgressNotify());
  EXPECT_EQ(progress->header_revision, 2);
  Put("a", "3");
  auto event = NextOrTimeout(**without);
  ASSERT_TRUE(event.ok());
  EXPECT_FALSE(event->IsProgressNotify()) << "only watches that asked get progress";
  EXPECT_EQ(event->events[0].kv->mod_revision, 3);
}

// Compaction stopped half-way (by closing the store) resumes at the next open and ends in
// exactly the state an uninterrupted compaction leaves.
TEST_F(EmbeddedStoreTest, InterruptedCompactionResumesAtOpen) {
  auto fill = [this] {
    for (int i = 0; i < 400; ++i) {
      if (i % 7 == 3) {
        Delete("k" + std::to_string(i % 40));
      } else {
        Put("k" + std::to_string(i % 40), std::to_string(i));
      }
    }
  };
  TempDir reference_dir;
  EmbeddedStoreOptions options = TestStoreOptions(reference_dir.path());
  options.fsync = false;
  Open(options);
  fill();
  const Revision at = store_->CurrentRevision() - 5;
  ASSERT_TRUE(store_->Compact(at).ok());
  store_->WaitForCompaction();
  std::map<std::string, std::vector<RevisionPair>> want;
  for (int i = 0; i < 40; ++i) {
    want["k" + std::to_string(i)] = store_->index().RevisionsForTest("k" + std::to_string(i));
  }

  options = TestStoreOptions(dir_.path());
  options.compaction_batch = 1;  // hundreds of commits: closing interrupts it
  Open(options);
  fill();
  ASSERT_TRUE(store_->Compact(at).ok());
  store_.reset();
  Open(options);
  EXPECT_EQ(store_->CompactRevision(), at);
  store_->WaitForCompaction();
  for (const auto& [key, revs] : want)
    EXPECT_EQ(store_->index().RevisionsForTest(key), revs) << key;
  Open(options);  // and the disk agrees
  for (const auto& [key, revs] : want)
    EXPECT_EQ(store_->index().RevisionsForTest(key), revs) << key;
}

TEST_F(EmbeddedStoreTest, WatchStreamsOutliveTheStore) {
  Open();
  Put("a", "1");
  auto w = store_->Watch(WatchRequest{.key = "a", .start_revision = 1});
  ASSERT_TRUE(w.ok());
  store_.reset();
  auto r = (*w)->Next(std::stop_token());
  // Either the buffered history or the shutdown: never a crash or a hang.
  if (r.ok()) {
    EXPECT_FALSE(r->canceled);
  } else {
    EXPECT_EQ(r.status().code(), util::Code::kUnavailable) << r.status().ToString();
  }
}

TEST_F(EmbeddedStoreTest, WorksWithoutFsync) {
  EmbeddedStoreOptions options = TestStoreOptions(dir_.path());
  options.fsync = false;
  Open(options);
  for (int i = 0; i < 50; ++i) Put("n" + std::to_string(i), "v");
  Open(options);
  EXPECT_EQ(store_->CurrentRevision(), 50);
}

// Direct mode: a lone write is acknowledged after an explicit sync, which first tops up the
// zero-filled space past the data to at least the reserve (Backend::ReserveSpace, in steps of
// the reserve: between one and two reserves are left after a top-up); later lone writes
// overwrite it instead of growing the file. (In log mode the applier does the same off the
// writers' path, when it syncs after falling idle.)
TEST_F(EmbeddedStoreTest, ALoneWriteReservesSpaceAndLaterWritesUseIt) {
  constexpr size_t kReserve = 512 * 1024;
  const std::string data = dir_.path() + "/data.mdb";
  EmbeddedStoreOptions options = TestStoreOptions(dir_.path());
  options.write_ahead_log = false;
  options.reserve_bytes = kReserve;
  Open(options);
  Put("a", "v");
  EXPECT_EQ(store_->writer_stats().reserves, 1u);
  EXPECT_GE(std::filesystem::file_size(data), kReserve);
  Put("a", Incompressible(3000, 1));  // uses a page of the reserve: tops up to ~2 reserves
  EXPECT_EQ(store_->writer_stats().reserves, 2u);
  const auto reserved = std::filesystem::file_size(data);
  // ~100 KB of pages, well inside the reserve: no top-up, no growth.
  for (int i = 0; i < 20; ++i) Put("b" + std::to_string(i), Incompressible(3000, 2 + i));
  EXPECT_EQ(store_->writer_stats().reserves, 2u);
  EXPECT_EQ(std::filesystem::file_size(data), reserved);

  // Without a reserve the same writes grow the file.
  TempDir other;
  options = TestStoreOptions(other.path());
  options.write_ahead_log = false;
  options.reserve_bytes = 0;
  Open(options);
  Put("a", "v");
  const auto before = std::filesystem::file_size(other.path() + "/data.mdb");
  EXPECT_LT(before, kReserve);
  for (int i = 0; i < 20; ++i) Put("b" + std::to_string(i), Incompressible(3000, 2 + i));
  EXPECT_GT(std::filesystem::file_size(other.path() + "/data.mdb"), before);
  EXPECT_EQ(store_->writer_stats().reserves, 0u);
}

// Values are stored compressed (record.h): 4 KB values that would each take two overflow pages
// take less than a page each, and every way of reading them back (range, watch from the history
// with prev_kv, after reopening) gives the original bytes. In each writer shape.
TEST_F(EmbeddedStoreTest, CompressibleValuesTakeLessThanAPageAndReadBackWhole) {
  constexpr int kKeys = 100;
  for (bool log : {false, true}) {
    SCOPED_TRACE(log ? "log" : "direct");
    TempDir dir;
    EmbeddedStoreOptions options = TestStoreOptions(dir.path());
    options.write_ahead_log = log;
    options.reserve_bytes = 0;
    Open(options);
    for (int i = 0; i < kKeys; ++i) Put("k" + std::to_string(i), Wordy(i));
    for (int i = 0; i < kKeys; ++i) Put("k" + std::to_string(i), Wordy(kKeys + i));
    Open(options);  // the log, if any, is in LMDB once the store closed
    EXPECT_LT(std::filesystem::file_size(dir.path() + "/data.mdb"), size_t{2 * kKeys} * 4096);

    auto all = store_->Range(RangeRequest{.key = "k", .range_end = "l"});
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    ASSERT_EQ(all->kvs.size(), size_t{kKeys});
    for (const KeyValuePtr& kv : all->kvs) {
      const int i = std::stoi(kv->key.substr(1));
      EXPECT_EQ(kv->value, Wordy(kKeys + i)) << kv->key;
    }
    auto w = store_->Watch(
        WatchRequest{.key = "k", .range_end = "l", .start_revision = 1, .prev_kv = true});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    int seen = 0;
    while (seen < 2 * kKeys) {
      auto r = (*w)->Next(std::stop_token());
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      for (const Event& e : r->events) {
        const int i = std::stoi(e.kv->key.substr(1));
        if (seen < kKeys) {
          EXPECT_EQ(e.kv->value, Wordy(i));
          EXPECT_EQ(e.prev_kv, nullptr);
        } else {
          EXPECT_EQ(e.kv->value, Wordy(kKeys + i));
          ASSERT_NE(e.prev_kv, nullptr);
          EXPECT_EQ(e.prev_kv->value, Wordy(i));
        }
        ++seen;
      }
    }
    store_.reset();
  }
}

// Watchers that follow the writes live get each change's previous value whole when they asked
// for prev_kv (read from the store as they deliver it), and none when they did not: puts and
// deletes, range and single-key watchers, a key overwritten twice, and only for the keys under
// prev_kv_prefixes when the watcher names some.
TEST_F(EmbeddedStoreTest, LiveWatchersGetPreviousValuesOnlyWhenAsked) {
  Open();
  for (int i = 0; i < 3; ++i) Put("k" + std::to_string(i), Wordy(i));
  auto next = [](WatchStream& w, size_t want) {
    std::vector<Event> events;
    while (events.size() < want) {
      auto r = w.Next(std::stop_token());
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok()) break;
      events.insert(events.end(), r->events.begin(), r->events.end());
    }
    return events;
  };
  struct Follower {
    std::unique_ptr<WatchStream> stream;
    std::future<std::vector<Event>> events;
  };
  // Each follower reads the warm-up write, then waits in the hub for the rest (live delivery,
  // not a read of the history).
  auto follow = [&](std::string key, std::string end, bool prev, size_t want,
                    std::vector<std::string> prefixes = {}) {
    auto w = store_->Watch(
        WatchRequest{.key = key, .range_end = end, .prev_kv = prev, .prev_kv_prefixes = prefixes});
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    Follower f{std::move(w).value(), {}};
    WatchStream* s = f.stream.get();
    f.events = std::async(std::launch::async, [s, want, next] {
      next(*s, 1);  // the warm-up write
      return next(*s, want);
    });
    return f;
  };
  Follower range_prev = follow("k", "l", true, 4);
  Follower range_plain = follow("k", "l", false, 4);
  Follower single_prev = follow("k1", "", true, 2);
  Follower k1_prev = follow("k", "l", true, 4, {"k1"});
  Put("k1", Wordy(1));                                          // warm-up: the same value again
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the followers wait in the hub
  Put("k0", Wordy(10));
  Put("k1", Wordy(11));
  Delete("k2");
  TxnRequest txn;  // k1 again, in a transaction
  txn.success.push_back(PutRequest{.key = "k1", .value = Wordy(21)});
  ASSERT_TRUE(store_->Txn(std::move(txn)).ok());

  std::vector<Event> with = range_prev.events.get();
  ASSERT_EQ(with.size(), 4u);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"k0", Wordy(0)}, {"k1", Wordy(1)}, {"k2", Wordy(2)}, {"k1", Wordy(11)}};
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(with[i].kv->key, want[i].first);
    ASSERT_NE(with[i].prev_kv, nullptr);
    EXPECT_EQ(with[i].prev_kv->key, want[i].first);
    EXPECT_EQ(with[i].prev_kv->value, want[i].second);
  }
  EXPECT_EQ(with[2].type, Event::Type::kDelete);
  EXPECT_EQ(with[3].prev_kv->version, 3);
  EXPECT_EQ(with[3].prev_kv->mod_revision, with[1].kv->mod_revision);
  EXPECT_EQ(with[3].kv->version, 4);
  EXPECT_EQ(with[3].kv->create_revision, with[1].kv->create_revision);
  for (const Event& e : range_plain.events.get()) EXPECT_EQ(e.prev_kv, nullptr) << e.kv->key;
  std::vector<Event> single = single_prev.events.get();
  ASSERT_EQ(single.size(), 2u);
  ASSERT_NE(single[0].prev_kv, nullptr);
  EXPECT_EQ(single[0].prev_kv->value, Wordy(1));
  ASSERT_NE(single[1].prev_kv, nullptr);
  EXPECT_EQ(single[1].prev_kv->value, Wordy(11));
  for (const Event& e : k1_prev.events.get()) {
    if (e.kv->key == "k1") {
      EXPECT_NE(e.prev_kv, nullptr) << "prev_kv_prefixes names k1";
    } else {
      EXPECT_EQ(e.prev_kv, nullptr) << e.kv->key << " is under none of prev_kv_prefixes";
    }
  }
}

// A synced watcher that asked for prev_kv reads an overwritten value from the store when it
// delivers the change. If it lags so far behind that compaction removed that value, it is
// cancelled as compacted, as etcd cancels a watcher behind the compact revision (and not failed
// with DataLoss).
TEST_F(EmbeddedStoreTest, APrevKvWatcherLaggingBehindACompactionIsCancelledAsCompacted) {
  EmbeddedStoreOptions options = TestStoreOptions(dir_.path());
  options.write_ahead_log = false;  // records live in LMDB alone, where compaction removes them
  Open(options);
  Put("k", "1");  // 1
  auto w = store_->Watch(WatchRequest{.key = "k", .prev_kv = true});
  ASSERT_TRUE(w.ok());
  WatchStream* stream = w->get();
  // The first read joins the hub and waits there; revision 2 reaches it live.
  auto first = std::async(std::launch::async, [stream] { return stream->Next(std::stop_token()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Put("k", "2");  // 2
  auto r2 = first.get();
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  ASSERT_EQ(r2->events.size(), 1u);
  ASSERT_NE(r2->events[0].prev_kv, nullptr);
  EXPECT_EQ(r2->events[0].prev_kv->value, "1");
  // Revisions 3 and 4 wait in the watcher's group while compaction at 4 removes revision 2, the
  // value revision 3 overwrote (revision 3, which 4 overwrote, stays: see above).
  Put("k", "3");  // 3
  Put("k", "4");  // 4
  ASSERT_TRUE(store_->Compact(4).ok());
  store_->WaitForCompaction();
  auto r = stream->Next(std::stop_token());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->canceled);
  EXPECT_EQ(r->cancel_reason, kCancelReasonCompacted);
  EXPECT_EQ(r->compact_revision, 4);
  EXPECT_TRUE(r->events.empty());
}

// A writer that compressed a value itself (the API server, whose watch cache keeps the frame)
// hands the frame over; the store keeps it instead of compressing again, unless the frame's
// declared length is not the value's.
TEST_F(EmbeddedStoreTest, AWritersFrameIsKeptWhenItsLengthIsTheValues) {
  const std::string value = Wordy(1);
  std::string frame;
  ASSERT_TRUE(CompressValue(value, &frame));
  // Level 19 makes a frame unlike level 1's: which one is stored shows whose it is.
  std::string strong(ZSTD_compressBound(value.size()), '\0');
  strong.resize(ZSTD_compress(strong.data(), strong.size(), value.data(), value.size(), 19));
  ASSERT_NE(strong, frame);
  std::string other_frame;
  ASSERT_TRUE(CompressValue(Wordy(2) + " ", &other_frame));

  TxnRequest txn;
  txn.success.push_back(PutRequest{
      .key = "a", .value = value, .compressed_value = std::make_shared<std::string>(strong)});
  txn.success.push_back(PutRequest{
      .key = "b", .value = value, .compressed_value = std::make_shared<std::string>(other_frame)});
  txn.success.push_back(PutRequest{.key = "c", .value = value});
  txn.success.push_back(PutRequest{.key = "d", .value = "too short to pay"});
  const ValueFrames frames = CompressPutValues(txn);
  ASSERT_EQ(frames.size(), 4u);
  ASSERT_NE(frames[0], nullptr);
  EXPECT_EQ(frames[0], std::get<PutRequest>(txn.success[0]).compressed_value)
      << "the writer's frame is shared, not copied";
  ASSERT_NE(frames[1], nullptr);
  EXPECT_EQ(*frames[1], frame);  // not the value's length: compressed here instead
  ASSERT_NE(frames[2], nullptr);
  EXPECT_EQ(*frames[2], frame);
  EXPECT_EQ(frames[3], nullptr);  // stored as it is

  // Stored and read back, through the log and after it reached LMDB.
  Open();
  auto put = store_->Txn(std::move(txn));
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  for (int pass = 0; pass < 2; ++pass) {
    auto all = store_->Range(RangeRequest{.key = "a", .range_end = "e"});
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    ASSERT_EQ(all->kvs.size(), 4u);
    for (const KeyValuePtr& kv : all->kvs) {
      EXPECT_EQ(kv->value, kv->key == "d" ? "too short to pay" : value) << kv->key;
    }
    Open();
  }
}

}  // namespace
}  // namespace converge::store
