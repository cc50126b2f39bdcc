// Conformance: watch ordering, atomicity, resumption, prev_kv, compaction, progress and slow
// watchers. See kv_conformance_test.h.
#include <atomic>
#include <map>
#include <thread>

#include "store/kv_conformance_test.h"

namespace converge::store {
namespace {

using ::testing::ElementsAre;

// A compact, comparable description of an event.
std::string Describe(const Event& e, bool with_prev) {
  std::string s = (e.type == Event::Type::kPut ? "PUT " : "DEL ") + e.kv->key + "@" +
                  std::to_string(e.kv->mod_revision);
  if (e.type == Event::Type::kPut) {
    s += "=" + e.kv->value + " c" + std::to_string(e.kv->create_revision) + " v" +
         std::to_string(e.kv->version);
  } else {
    EXPECT_EQ(e.kv->version, 0);
    EXPECT_EQ(e.kv->create_revision, 0);
    EXPECT_EQ(e.kv->value, "");
  }
  if (with_prev) {
    s += e.prev_kv ? " prev=" + e.prev_kv->value + "@" + std::to_string(e.prev_kv->mod_revision)
                   : " prev=none";
  } else {
    EXPECT_EQ(e.prev_kv, nullptr) << "prev_kv only when asked";
  }
  return s;
}

std::vector<std::string> DescribeAll(const std::vector<Event>& events, bool with_prev) {
  std::vector<std::string> out;
  for (const Event& e : events) out.push_back(Describe(e, with_prev));
  return out;
}

TEST_P(KvConformanceTest, WatchDeliversLaterChangesInOrder) {
  Put("w/a", "0");  // 1: before the watch
  auto w = MustWatch(WatchRequest{.key = "w/", .range_end = PrefixEnd("w/"), .prev_kv = true});
  Put("w/a", "1");    // 2
  Put("other", "x");  // 3
  Put("w/b", "1");    // 4
  Delete("w/a");      // 5
  auto events = Flatten(ReadUntil(*w, 5));
  EXPECT_THAT(DescribeAll(events, true),
              ElementsAre("PUT w/a@2=1 c1 v2 prev=0@1", "PUT w/b@4=1 c4 v1 prev=none",
                          "DEL w/a@5 prev=1@2"));
}

TEST_P(KvConformanceTest, WatchDeliversATransactionInOneResponse) {
  auto w = MustWatch(WatchRequest{.key = "t/", .range_end = PrefixEnd("t/")});
  TxnRequest txn;
  txn.success = {PutRequest{.key = "t/b", .value = "1"}, PutRequest{.key = "x", .value = "1"},
                 PutRequest{.key = "t/a", .value = "1"}, PutRequest{.key = "t/c", .value = "1"}};
  ASSERT_TRUE(kv_->Txn(txn).ok());
  Put("t/d", "1");
  auto responses = ReadUntil(*w, 2);
  ASSERT_GE(responses.size(), 1u);
  // Whatever the batching, the first response holds all of revision 1, in request order.
  const std::vector<std::string> got = DescribeAll(responses[0].events, false);
  ASSERT_GE(got.size(), 3u);
  EXPECT_THAT(std::vector<std::string>(got.begin(), got.begin() + 3),
              ElementsAre("PUT t/b@1=1 c1 v1", "PUT t/a@1=1 c1 v1", "PUT t/c@1=1 c1 v1"));
  for (const auto& r : responses) {
    EXPECT_GE(r.header_revision, r.events.back().kv->mod_revision);
  }
}

TEST_P(KvConformanceTest, WatchFiltersByRange) {
  auto single = MustWatch(WatchRequest{.key = "b"});
  auto interval = MustWatch(WatchRequest{.key = "b", .range_end = "d"});
  auto from_key = MustWatch(WatchRequest{.key = "c", .range_end = std::string(1, '\0')});
  for (const char* k : {"a", "b", "bb", "c", "d", "e"}) Put(k, "1");  // revisions 1..6
  Put("b", "2");                                                      // 7
  auto keys = [](const std::vector<Event>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.kv->key);
    return out;
  };
  EXPECT_THAT(keys(Flatten(ReadUntil(*single, 7))), ElementsAre("b", "b"));
  EXPECT_THAT(keys(Flatten(ReadUntil(*interval, 7))), ElementsAre("b", "bb", "c", "b"));
  EXPECT_THAT(keys(Flatten(ReadUntil(*from_key, 6))), ElementsAre("c", "d", "e"));
}

// Builds a varied history and checks that a watch from every revision yields exactly the
// events at or after it: the resumable property.
TEST_P(KvConformanceTest, WatchResumesExactlyFromEveryRevision) {
  std::vector<std::string> all;  // expected description of every event, in order
  auto put = [&](const std::string& k, const std::string& v) {
    auto prev = Get(k);
    Revision rev = Put(k, v);
    auto now = Get(k);
    all.push_back(
        "PUT " + k + "@" + std::to_string(rev) + "=" + v + " c" +
        std::to_string(now->create_revision) + " v" + std::to_string(now->version) +
        (prev ? " prev=" + prev->value + "@" + std::to_string(prev->mod_revision) : " prev=none"));
  };
  auto del = [&](const std::string& k) {
    auto prev = Get(k);
    Revision rev = Delete(k);
    all.push_back("DEL " + k + "@" + std::to_string(rev) + " prev=" + prev->value + "@" +
                  std::to_string(prev->mod_revision));
  };
  put("h/a", "1");
  put("h/b", "1");
  put("h/a", "2");
  del("h/b");
  put("h/b", "2");
  put("h/c", "1");
  del("h/a");
  put("h/a", "3");
  put("h/c", "2");
  const Revision last = kv_->CurrentRevision();
  ASSERT_EQ(static_cast<size_t>(last), all.size());
  for (Revision from = 1; from <= last; ++from) {
    SCOPED_TRACE("from " + std::to_string(from));
    auto w = MustWatch(WatchRequest{
        .key = "h/", .range_end = PrefixEnd("h/"), .start_revision = from, .prev_kv = true});
    auto got = DescribeAll(Flatten(ReadUntil(*w, last)), true);
    std::vector<std::string> want(all.begin() + (from - 1), all.end());
    EXPECT_EQ(got, want);
  }
}

TEST_P(KvConformanceTest, WatchFromAFutureRevisionWaitsForIt) {
  Put("f", "1");  // 1
  auto w = MustWatch(WatchRequest{.key = "f", .start_revision = 4});
  // Once the watch is live (it answered a progress request), revisions 2 and 3 arrive while it
  // waits and must be skipped.
  w->RequestProgress();
  auto progress = NextOrTimeout(*w);
  ASSERT_TRUE(progress.ok() && progress->IsProgressNotify());
  Put("f", "2");  // 2
  Put("f", "3");  // 3
  Put("f", "4");  // 4
  Put("f", "5");  // 5
  auto events = Flatten(ReadUntil(*w, 5));
  EXPECT_THAT(DescribeAll(events, false), ElementsAre("PUT f@4=4 c1 v4", "PUT f@5=5 c1 v5"));
}

TEST_P(KvConformanceTest, WatchBelowTheCompactRevisionIsCanceled) {
  for (int i = 1; i <= 6; ++i) Put("c/" + std::to_string(i % 2), std::to_string(i));
  ASSERT_TRUE(kv_->Compact(4).ok());
  auto w = MustWatch(WatchRequest{.key = "c/", .range_end = PrefixEnd("c/"), .start_revision = 3});
  auto r = NextOrTimeout(*w);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->canceled);
  EXPECT_EQ(r->cancel_reason, kCancelReasonCompacted);
  EXPECT_EQ(r->compact_revision, 4);
  EXPECT_FALSE(w->Next(std::stop_token()).ok()) << "nothing after a cancel";

  auto ok = MustWatch(WatchRequest{.key = "c/", .range_end = PrefixEnd("c/"), .start_revision = 5});
  auto events = Flatten(ReadUntil(*ok, 6));
  EXPECT_THAT(DescribeAll(events, false), ElementsAre("PUT c/1@5=5 c1 v3", "PUT c/0@6=6 c2 v3"));
}

// A progress notification at R promises that every event <= R was delivered before it.
TEST_P(KvConformanceTest, ProgressNotificationsNeverRunAheadOfEvents) {
  for (int i = 0; i < 50; ++i) Put("p/" + std::to_string(i % 7), std::to_string(i));
  auto w = MustWatch(WatchRequest{
      .key = "p/", .range_end = PrefixEnd("p/"), .start_revision = 1, .progress_notify = true});
  w->RequestProgress();  // before anything was read: must wait for the catch-up
  Revision delivered = 0;
  bool got_progress = false;
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    for (int i = 0; i < 30; ++i) Put("p/" + std::to_string(i % 7), "more");
    writing = false;
  });
  while (!got_progress || writing || delivered < kv_->CurrentRevision()) {
    auto r = NextOrTimeout(*w);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_FALSE(r->canceled);
    if (r->IsProgressNotify()) {
      got_progress = true;
      EXPECT_GE(r->header_revision, delivered);
      // Everything up to the notified revision must already be here.
      auto check = kv_->Range(
          RangeRequest{.key = "p/", .range_end = PrefixEnd("p/"), .revision = r->header_revision});
      ASSERT_TRUE(check.ok());
      for (const auto& kv : check->kvs) EXPECT_LE(kv->mod_revision, delivered);
      if (writing) w->RequestProgress();
      continue;
    }
    for (const auto& e : r->events) {
      EXPECT_GT(e.kv->mod_revision, delivered) << "ordered, no duplicates";
      delivered = e.kv->mod_revision;
    }
    if (!writing && delivered >= kv_->CurrentRevision() && !got_progress) w->RequestProgress();
  }
  writer.join();
  EXPECT_EQ(delivered, 80);
}

TEST_P(KvConformanceTest, CancelAndStopEndABlockedNext) {
  auto w = MustWatch(WatchRequest{.key = "nothing"});
  std::thread canceler([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    w->Cancel();
  });
  auto r = NextOrTimeout(*w);
  canceler.join();
  EXPECT_EQ(r.status().code(), util::Code::kCancelled) << r.status().ToString();

  auto w2 = MustWatch(WatchRequest{.key = "nothing"});
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop.request_stop();
  });
  auto r2 = w2->Next(stop.get_token());
  stopper.join();
  EXPECT_EQ(r2.status().code(), util::Code::kCancelled) << r2.status().ToString();
}

// Writers and many watchers at once: every watcher sees every event of its range exactly once,
// in order, whether it started in the past (catch-up) or at the current revision.
TEST_P(KvConformanceTest, ConcurrentWatchersSeeEveryEventOnce) {
  constexpr int kWriters = 4;
  constexpr int kWritesEach = 100;
  constexpr int kWatchers = 8;
  Put("cw/seed", "0");
  std::vector<std::unique_ptr<WatchStream>> watches;
  for (int i = 0; i < kWatchers; ++i) {
    WatchRequest req{.key = "cw/", .range_end = PrefixEnd("cw/"), .prev_kv = (i % 2 == 0)};
    if (i % 3 == 0) req.start_revision = 1;
    watches.push_back(MustWatch(req));
  }
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kWritesEach; ++i) {
        Put("cw/" + std::to_string(t) + "/" + std::to_string(i % 10), std::to_string(i));
      }
    });
  }
  for (auto& t : writers) t.join();
  const Revision last = kv_->CurrentRevision();
  ASSERT_EQ(last, 1 + kWriters * kWritesEach);
  for (int i = 0; i < kWatchers; ++i) {
    SCOPED_TRACE("watcher " + std::to_string(i));
    auto events = Flatten(ReadUntil(*watches[i], last));
    const Revision first = (i % 3 == 0) ? 1 : 2;
    ASSERT_EQ(events.size(), static_cast<size_t>(last - first + 1));
    for (size_t j = 0; j < events.size(); ++j) {
      EXPECT_EQ(events[j].kv->mod_revision, first + static_cast<Revision>(j));
      if (i % 2 == 0 && events[j].kv->version > 1) {
        ASSERT_NE(events[j].prev_kv, nullptr);
        EXPECT_EQ(events[j].prev_kv->version, events[j].kv->version - 1);
      }
    }
  }
}

// A watcher that does not read while its range keeps changing is cancelled as slow rather than
// holding back writers; resuming from the revision after its last event loses nothing.
TEST_P(KvConformanceTest, SlowWatcherIsCanceledAndResumesWithoutGaps) {
  if (!factory_->CancelsSlowWatchers()) GTEST_SKIP() << "backend does not cancel slow watchers";
  kv_.reset();
  auto small = factory_->Open(KvTestOptions{.watcher_buffer = 16});
  ASSERT_TRUE(small.ok());
  kv_ = std::move(small).value();
  auto w =
      MustWatch(WatchRequest{.key = "s/", .range_end = PrefixEnd("s/"), .progress_notify = true});
  // A progress notification means the watcher is live (caught up); then it stops reading.
  w->RequestProgress();
  auto progress = NextOrTimeout(*w);
  ASSERT_TRUE(progress.ok() && progress->IsProgressNotify());
  Put("s/x", "first");
  // etcd also notifies progress every 100 ms here (EtcdClusterOptions); skip those.
  auto first = NextOrTimeout(*w);
  while (first.ok() && first->IsProgressNotify()) {
    first = NextOrTimeout(*w);
  }
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->events.size(), 1u);
  constexpr int kWrites = 200;
  for (int i = 0; i < kWrites; ++i) Put("s/" + std::to_string(i % 5), std::to_string(i));
  const Revision last = kv_->CurrentRevision();
  Revision seen = first->events.back().kv->mod_revision;
  bool canceled = false;
  while (!canceled) {
    auto r = NextOrTimeout(*w);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (r->canceled) {
      EXPECT_EQ(r->cancel_reason, kCancelReasonSlow);
      canceled = true;
      break;
    }
    for (const auto& e : r->events) {
      ASSERT_EQ(e.kv->mod_revision, seen + 1) << "no gap before the cancel";
      seen = e.kv->mod_revision;
    }
    ASSERT_LT(seen, last) << "a writer outran a 16-event buffer by 200 events without a cancel";
  }
  auto resumed = MustWatch(
      WatchRequest{.key = "s/", .range_end = PrefixEnd("s/"), .start_revision = seen + 1});
  for (const auto& e : Flatten(ReadUntil(*resumed, last))) {
    ASSERT_EQ(e.kv->mod_revision, seen + 1);
    seen = e.kv->mod_revision;
  }
  EXPECT_EQ(seen, last);
}

}  // namespace
}  // namespace converge::store
