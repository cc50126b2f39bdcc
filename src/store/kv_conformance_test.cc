// Conformance: revisions, ranges, compaction errors and transactions. See kv_conformance_test.h.
#include "store/kv_conformance_test.h"

#include <atomic>
#include <thread>

namespace converge::store {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST_P(KvConformanceTest, EmptyStoreIsAtRevisionZero) {
  EXPECT_EQ(kv_->CurrentRevision(), 0);
  RangeResponse r =
      MustRange(RangeRequest{.key = std::string(1, '\0'), .range_end = std::string(1, '\0')});
  EXPECT_THAT(r.kvs, IsEmpty());
  EXPECT_EQ(r.count, 0);
  EXPECT_FALSE(r.more);
}

TEST_P(KvConformanceTest, EachWriteTakesTheNextRevision) {
  EXPECT_EQ(Put("a", "1"), 1);
  EXPECT_EQ(Put("b", "1"), 2);
  EXPECT_EQ(Put("a", "2"), 3);
  EXPECT_EQ(kv_->CurrentRevision(), 3);
  KeyValuePtr a = Get("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->value, "2");
  EXPECT_EQ(a->create_revision, 1);
  EXPECT_EQ(a->mod_revision, 3);
  EXPECT_EQ(a->version, 2);
}

TEST_P(KvConformanceTest, GenerationsRestartVersionAndCreateRevision) {
  ASSERT_EQ(Put("k", "v1"), 1);
  ASSERT_EQ(Put("k", "v2"), 2);
  ASSERT_EQ(Delete("k"), 3);
  ASSERT_EQ(Put("k", "v3"), 4);
  struct Case {
    Revision at;
    bool exists;
    std::string value;
    Revision create, mod;
    int64_t version;
  };
  const Case cases[] = {
      {1, true, "v1", 1, 1, 1},
      {2, true, "v2", 1, 2, 2},
      {3, false, "", 0, 0, 0},
      {4, true, "v3", 4, 4, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("at revision " + std::to_string(c.at));
    KeyValuePtr kv = Get("k", c.at);
    ASSERT_EQ(kv != nullptr, c.exists);
    if (!kv) continue;
    EXPECT_EQ(kv->value, c.value);
    EXPECT_EQ(kv->create_revision, c.create);
    EXPECT_EQ(kv->mod_revision, c.mod);
    EXPECT_EQ(kv->version, c.version);
  }
}

TEST_P(KvConformanceTest, DeletingNothingDoesNotTakeARevision) {
  ASSERT_EQ(Put("a", "1"), 1);
  auto r = kv_->DeleteRange(DeleteRangeRequest{.key = "missing"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->deleted, 0);
  EXPECT_EQ(r->header_revision, 1);
  EXPECT_EQ(kv_->CurrentRevision(), 1);
  EXPECT_EQ(Put("b", "1"), 2);
}

TEST_P(KvConformanceTest, RangeSelectsSingleKeyPrefixIntervalAndFromKey) {
  for (const char* k : {"a", "ab", "abc", "b", "ba", "c"}) Put(k, k);
  const std::string nul(1, '\0');
  struct Case {
    const char* name;
    std::string key, end;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"single", "ab", "", {"ab"}},
      {"single missing", "aa", "", {}},
      {"prefix", "a", PrefixEnd("a"), {"a", "ab", "abc"}},
      {"interval", "ab", "ba", {"ab", "abc", "b"}},
      {"from key", "b", nul, {"b", "ba", "c"}},
      {"everything", nul, nul, {"a", "ab", "abc", "b", "ba", "c"}},
      {"end before start", "b", "a", {}},
      {"end equals start", "b", "b", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RangeResponse r = MustRange(RangeRequest{.key = c.key, .range_end = c.end});
    EXPECT_EQ(Keys(r), c.want);
    EXPECT_EQ(r.count, static_cast<int64_t>(c.want.size()));
  }
}

TEST_P(KvConformanceTest, PrefixEndHandlesTrailingFf) {
  EXPECT_EQ(PrefixEnd("a"), "b");
  EXPECT_EQ(PrefixEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixEnd(std::string("\xff", 1)), std::string(1, '\0'));
}

TEST_P(KvConformanceTest, LimitMoreCountKeysOnlyCountOnly) {
  for (const char* k : {"p/1", "p/2", "p/3", "p/4", "p/5"}) Put(k, std::string("value of ") + k);
  const std::string end = PrefixEnd("p/");
  struct Case {
    const char* name;
    int64_t limit;
    size_t want_kvs;
    bool want_more;
  };
  for (const Case& c : {Case{"no limit", 0, 5, false}, Case{"limit 2", 2, 2, true},
                        Case{"limit 5", 5, 5, false}, Case{"limit 9", 9, 5, false}}) {
    SCOPED_TRACE(c.name);
    RangeResponse r = MustRange(RangeRequest{.key = "p/", .range_end = end, .limit = c.limit});
    EXPECT_EQ(r.kvs.size(), c.want_kvs);
    EXPECT_EQ(r.more, c.want_more);
    EXPECT_EQ(r.count, 5);
    EXPECT_EQ(r.header_revision, 5);
  }
  RangeResponse first2 = MustRange(RangeRequest{.key = "p/", .range_end = end, .limit = 2});
  EXPECT_THAT(Keys(first2), ElementsAre("p/1", "p/2"));

  RangeResponse keys_only =
      MustRange(RangeRequest{.key = "p/", .range_end = end, .keys_only = true});
  ASSERT_EQ(keys_only.kvs.size(), 5u);
  for (const auto& kv : keys_only.kvs) {
    EXPECT_EQ(kv->value, "");
    EXPECT_GT(kv->mod_revision, 0);
  }
  RangeResponse count_only =
      MustRange(RangeRequest{.key = "p/", .range_end = end, .limit = 2, .count_only = true});
  EXPECT_THAT(count_only.kvs, IsEmpty());
  EXPECT_EQ(count_only.count, 5);
}

TEST_P(KvConformanceTest, PastRevisionReadsSeeThatState) {
  Put("x/a", "1");  // 1
  Put("x/b", "1");  // 2
  Put("x/a", "2");  // 3
  Delete("x/b");    // 4
  Put("x/c", "1");  // 5
  const std::string end = PrefixEnd("x/");
  struct Case {
    Revision at;
    std::vector<std::string> keys;
    std::string a;
  };
  for (const Case& c :
       {Case{1, {"x/a"}, "1"}, Case{2, {"x/a", "x/b"}, "1"}, Case{3, {"x/a", "x/b"}, "2"},
        Case{4, {"x/a"}, "2"}, Case{5, {"x/a", "x/c"}, "2"}}) {
    SCOPED_TRACE("at " + std::to_string(c.at));
    RangeResponse r = MustRange(RangeRequest{.key = "x/", .range_end = end, .revision = c.at});
    EXPECT_EQ(Keys(r), c.keys);
    EXPECT_EQ(r.kvs[0]->value, c.a);
    EXPECT_EQ(r.header_revision, 5) << "the header carries the current revision";
  }
}

TEST_P(KvConformanceTest, FutureAndCompactedRevisions) {
  for (int i = 0; i < 6; ++i) Put("k", std::to_string(i));  // revisions 1..6
  auto future = kv_->Range(RangeRequest{.key = "k", .revision = 7});
  ASSERT_FALSE(future.ok());
  EXPECT_TRUE(IsFutureRevision(future.status())) << future.status().ToString();

  ASSERT_TRUE(kv_->Compact(4).ok());
  EXPECT_EQ(kv_->CompactRevision(), 4);
  auto compacted = kv_->Range(RangeRequest{.key = "k", .revision = 3});
  ASSERT_FALSE(compacted.ok());
  EXPECT_TRUE(IsCompacted(compacted.status())) << compacted.status().ToString();
  KeyValuePtr at4 = Get("k", 4);
  ASSERT_NE(at4, nullptr) << "the compact revision itself stays readable";
  EXPECT_EQ(at4->value, "3");
  EXPECT_EQ(at4->version, 4);
  EXPECT_EQ(Get("k")->value, "5");

  auto again = kv_->Compact(4);
  EXPECT_TRUE(!again.ok() && IsCompacted(again.status())) << again.status().ToString();
  auto lower = kv_->Compact(2);
  EXPECT_TRUE(!lower.ok() && IsCompacted(lower.status()));
  auto ahead = kv_->Compact(7);
  EXPECT_TRUE(!ahead.ok() && IsFutureRevision(ahead.status())) << ahead.status().ToString();
  EXPECT_TRUE(kv_->Compact(6).ok());
  EXPECT_EQ(Get("k")->value, "5");
  EXPECT_EQ(Get("k")->version, 6);
}

TEST_P(KvConformanceTest, CompactionKeepsTheStateAtEveryLaterRevision) {
  Put("a", "1");  // 1
  Put("b", "1");  // 2
  Put("a", "2");  // 3
  Delete("b");    // 4
  Put("b", "2");  // 5
  Delete("a");    // 6
  Put("c", "1");  // 7
  std::vector<RangeResponse> before;
  const std::string nul(1, '\0');
  for (Revision r = 1; r <= 7; ++r)
    before.push_back(MustRange(RangeRequest{.key = nul, .range_end = nul, .revision = r}));
  for (Revision c = 2; c <= 7; ++c) {
    ASSERT_TRUE(kv_->Compact(c).ok());
    for (Revision r = c; r <= 7; ++r) {
      SCOPED_TRACE("compacted at " + std::to_string(c) + ", read at " + std::to_string(r));
      RangeResponse now = MustRange(RangeRequest{.key = nul, .range_end = nul, .revision = r});
      ASSERT_EQ(now.kvs.size(), before[r - 1].kvs.size());
      for (size_t i = 0; i < now.kvs.size(); ++i) {
        EXPECT_EQ(now.kvs[i]->key, before[r - 1].kvs[i]->key);
        EXPECT_EQ(now.kvs[i]->value, before[r - 1].kvs[i]->value);
        EXPECT_EQ(now.kvs[i]->mod_revision, before[r - 1].kvs[i]->mod_revision);
        EXPECT_EQ(now.kvs[i]->create_revision, before[r - 1].kvs[i]->create_revision);
        EXPECT_EQ(now.kvs[i]->version, before[r - 1].kvs[i]->version);
      }
    }
  }
}

TEST_P(KvConformanceTest, PutAndDeleteReturnPreviousValues) {
  auto first = kv_->Put(PutRequest{.key = "k", .value = "1", .prev_kv = true});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->prev_kv, nullptr);
  auto second = kv_->Put(PutRequest{.key = "k", .value = "2", .prev_kv = true});
  ASSERT_TRUE(second.ok());
  ASSERT_NE(second->prev_kv, nullptr);
  EXPECT_EQ(second->prev_kv->value, "1");
  EXPECT_EQ(second->prev_kv->mod_revision, 1);
  auto no_prev = kv_->Put(PutRequest{.key = "k", .value = "3"});
  ASSERT_TRUE(no_prev.ok());
  EXPECT_EQ(no_prev->prev_kv, nullptr) << "prev_kv only when asked";

  Put("k2", "x");
  Put("l", "y");
  auto del = kv_->DeleteRange(DeleteRangeRequest{.key = "k", .range_end = "l", .prev_kv = true});
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->deleted, 2);
  ASSERT_EQ(del->prev_kvs.size(), 2u);
  EXPECT_EQ(del->prev_kvs[0]->key, "k");
  EXPECT_EQ(del->prev_kvs[0]->value, "3");
  EXPECT_EQ(del->prev_kvs[1]->key, "k2");
  EXPECT_EQ(del->header_revision, 6);
  EXPECT_EQ(Get("k"), nullptr);
  EXPECT_NE(Get("l"), nullptr);
}

TEST_P(KvConformanceTest, InvalidRequestsAreRejected) {
  auto empty_put = kv_->Put(PutRequest{.key = "", .value = "v"});
  EXPECT_EQ(empty_put.status().code(), util::Code::kInvalidArgument);
  auto empty_range = kv_->Range(RangeRequest{.key = ""});
  EXPECT_EQ(empty_range.status().code(), util::Code::kInvalidArgument);
  auto empty_delete = kv_->DeleteRange(DeleteRangeRequest{.key = ""});
  EXPECT_EQ(empty_delete.status().code(), util::Code::kInvalidArgument);

  TxnRequest dup;
  dup.success = {PutRequest{.key = "a", .value = "1"}, PutRequest{.key = "a", .value = "2"}};
  EXPECT_EQ(kv_->Txn(dup).status().code(), util::Code::kInvalidArgument);
  TxnRequest put_in_delete;
  put_in_delete.failure = {DeleteRangeRequest{.key = "a", .range_end = "c"},
                           PutRequest{.key = "b", .value = "1"}};
  EXPECT_EQ(kv_->Txn(put_in_delete).status().code(), util::Code::kInvalidArgument);
  auto huge = kv_->Put(PutRequest{.key = "big", .value = std::string(2 << 20, 'x')});
  EXPECT_EQ(huge.status().code(), util::Code::kInvalidArgument);
  EXPECT_EQ(kv_->CurrentRevision(), 0) << "nothing was written";
}

// One key with known fields, compared on every target with every operator.
TEST_P(KvConformanceTest, TxnComparesEveryTargetAndResult) {
  Put("other", "x");  // 1
  Put("k", "m");      // 2: create 2
  Put("other", "y");  // 3
  Put("k", "m");      // 4: version 2, mod 4, value "m"
  using T = Compare::Target;
  using R = Compare::Result;
  struct Case {
    const char* name;
    std::string key;
    T target;
    R result;
    int64_t number;
    std::string value;
    bool want;
  };
  const Case cases[] = {
      {"version ==", "k", T::kVersion, R::kEqual, 2, "", true},
      {"version == wrong", "k", T::kVersion, R::kEqual, 1, "", false},
      {"version !=", "k", T::kVersion, R::kNotEqual, 1, "", true},
      {"version <", "k", T::kVersion, R::kLess, 3, "", true},
      {"version < equal", "k", T::kVersion, R::kLess, 2, "", false},
      {"version >", "k", T::kVersion, R::kGreater, 1, "", true},
      {"create ==", "k", T::kCreateRevision, R::kEqual, 2, "", true},
      {"create >", "k", T::kCreateRevision, R::kGreater, 2, "", false},
      {"create <", "k", T::kCreateRevision, R::kLess, 3, "", true},
      {"create !=", "k", T::kCreateRevision, R::kNotEqual, 2, "", false},
      {"mod ==", "k", T::kModRevision, R::kEqual, 4, "", true},
      {"mod == stale", "k", T::kModRevision, R::kEqual, 2, "", false},
      {"mod <", "k", T::kModRevision, R::kLess, 4, "", false},
      {"mod >", "k", T::kModRevision, R::kGreater, 3, "", true},
      {"mod !=", "k", T::kModRevision, R::kNotEqual, 3, "", true},
      {"value ==", "k", T::kValue, R::kEqual, 0, "m", true},
      {"value == other", "k", T::kValue, R::kEqual, 0, "n", false},
      {"value !=", "k", T::kValue, R::kNotEqual, 0, "n", true},
      {"value <", "k", T::kValue, R::kLess, 0, "n", true},
      {"value >", "k", T::kValue, R::kGreater, 0, "l", true},
      {"value > equal", "k", T::kValue, R::kGreater, 0, "m", false},
      {"missing version == 0", "nope", T::kVersion, R::kEqual, 0, "", true},
      {"missing create == 0", "nope", T::kCreateRevision, R::kEqual, 0, "", true},
      {"missing mod == 0", "nope", T::kModRevision, R::kEqual, 0, "", true},
      {"missing mod < 5", "nope", T::kModRevision, R::kLess, 5, "", true},
      {"missing version > 0", "nope", T::kVersion, R::kGreater, 0, "", false},
      {"missing value ==", "nope", T::kValue, R::kEqual, 0, "", false},
      {"missing value !=", "nope", T::kValue, R::kNotEqual, 0, "x", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TxnRequest txn;
    txn.compare.push_back(Compare{.key = c.key,
                                  .target = c.target,
                                  .result = c.result,
                                  .number = c.number,
                                  .value = c.value});
    auto r = kv_->Txn(txn);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->succeeded, c.want);
    EXPECT_EQ(r->header_revision, 4) << "a transaction that writes nothing takes no revision";
  }
  // The same compares inside writing transactions are evaluated by the writer.
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string("writing: ") + c.name);
    const Revision before = kv_->CurrentRevision();
    TxnRequest txn;
    txn.compare.push_back(Compare{.key = c.key,
                                  .target = c.target,
                                  .result = c.result,
                                  .number = c.number,
                                  .value = c.value});
    txn.success.push_back(DeleteRangeRequest{.key = "never-there"});
    txn.failure.push_back(DeleteRangeRequest{.key = "never-there-either"});
    auto r = kv_->Txn(txn);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->succeeded, c.want);
    EXPECT_EQ(kv_->CurrentRevision(), before);
  }
}

TEST_P(KvConformanceTest, TxnCompareOverARangeNeedsEveryKey) {
  Put("r/a", "1");  // 1
  Put("r/b", "1");  // 2
  Put("s", "1");    // 3
  using T = Compare::Target;
  using R = Compare::Result;
  struct Case {
    const char* name;
    std::string key, end;
    T target;
    R result;
    int64_t number;
    std::string value;
    bool want;
  };
  const Case cases[] = {
      {"all values equal", "r/", PrefixEnd("r/"), T::kValue, R::kEqual, 0, "1", true},
      {"all mod < 3", "r/", PrefixEnd("r/"), T::kModRevision, R::kLess, 3, "", true},
      {"not all mod < 2", "r/", PrefixEnd("r/"), T::kModRevision, R::kLess, 2, "", false},
      {"empty range is version 0", "t/", PrefixEnd("t/"), T::kVersion, R::kEqual, 0, "", true},
      {"empty range value", "t/", PrefixEnd("t/"), T::kValue, R::kNotEqual, 0, "z", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TxnRequest txn;
    txn.compare.push_back(Compare{.key = c.key,
                                  .range_end = c.end,
                                  .target = c.target,
                                  .result = c.result,
                                  .number = c.number,
                                  .value = c.value});
    auto r = kv_->Txn(txn);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->succeeded, c.want);
  }
}

TEST_P(KvConformanceTest, TxnAppliesOneBranchAtOneRevision) {
  Put("cfg", "v1");  // 1
  TxnRequest txn;
  txn.compare.push_back(Compare{.key = "cfg",
                                .target = Compare::Target::kValue,
                                .result = Compare::Result::kEqual,
                                .value = "v1"});
  txn.success = {PutRequest{.key = "a", .value = "A"}, PutRequest{.key = "b", .value = "B"},
                 DeleteRangeRequest{.key = "cfg"}, RangeRequest{.key = "a", .range_end = "c"}};
  txn.failure = {PutRequest{.key = "failed", .value = "1"}};
  auto r = kv_->Txn(txn);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->succeeded);
  EXPECT_EQ(r->header_revision, 2);
  ASSERT_EQ(r->responses.size(), 4u);
  EXPECT_EQ(std::get<PutResponse>(r->responses[0]).header_revision, 2);
  EXPECT_EQ(std::get<DeleteRangeResponse>(r->responses[2]).deleted, 1);
  const auto& range = std::get<RangeResponse>(r->responses[3]);
  EXPECT_THAT(Keys(range), ElementsAre("a", "b")) << "ranges see the transaction's writes";
  EXPECT_EQ(range.kvs[0]->mod_revision, 2);
  EXPECT_EQ(Get("a")->mod_revision, 2);
  EXPECT_EQ(Get("b")->mod_revision, 2);
  EXPECT_EQ(Get("cfg"), nullptr);
  EXPECT_EQ(Get("failed"), nullptr);
  EXPECT_EQ(kv_->CurrentRevision(), 2);

  // Now cfg is gone: the failure branch runs.
  auto second = kv_->Txn(txn);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->succeeded);
  EXPECT_EQ(second->header_revision, 3);
  EXPECT_NE(Get("failed"), nullptr);
  EXPECT_EQ(Get("a")->mod_revision, 2);
}

TEST_P(KvConformanceTest, TxnRangeSeesEarlierDeletesAndPreviousValues) {
  Put("d/1", "x");  // 1
  Put("d/2", "y");  // 2
  TxnRequest txn;
  txn.success = {DeleteRangeRequest{.key = "d/1"},
                 RangeRequest{.key = "d/", .range_end = PrefixEnd("d/")},
                 PutRequest{.key = "d/3", .value = "z", .prev_kv = true},
                 RangeRequest{.key = "d/", .range_end = PrefixEnd("d/"), .count_only = true},
                 RangeRequest{.key = "d/", .range_end = PrefixEnd("d/"), .revision = 1}};
  auto r = kv_->Txn(txn);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(Keys(std::get<RangeResponse>(r->responses[1])), ElementsAre("d/2"));
  EXPECT_EQ(std::get<PutResponse>(r->responses[2]).prev_kv, nullptr);
  EXPECT_EQ(std::get<RangeResponse>(r->responses[3]).count, 2);
  EXPECT_THAT(Keys(std::get<RangeResponse>(r->responses[4])), ElementsAre("d/1"))
      << "a range at an explicit revision reads history";

  TxnRequest future;
  future.success = {PutRequest{.key = "d/4", .value = "w"},
                    RangeRequest{.key = "d/", .range_end = PrefixEnd("d/"), .revision = 99}};
  auto f = kv_->Txn(future);
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(IsFutureRevision(f.status())) << f.status().ToString();
  EXPECT_EQ(Get("d/4"), nullptr) << "the failed transaction wrote nothing";
  EXPECT_EQ(kv_->CurrentRevision(), 3);
}

// Optimistic concurrency: many writers increment one counter with compare-and-swap on its
// mod revision. Exactly the successful swaps are counted, so a lost update would show.
TEST_P(KvConformanceTest, CompareAndSwapIsExactUnderConcurrency) {
  Put("counter", "0");
  constexpr int kThreads = 8;
  constexpr int kIncrements = 25;
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int done = 0; done < kIncrements;) {
        KeyValuePtr cur = Get("counter");
        ASSERT_NE(cur, nullptr);
        TxnRequest txn;
        txn.compare.push_back(Compare{.key = "counter",
                                      .target = Compare::Target::kModRevision,
                                      .result = Compare::Result::kEqual,
                                      .number = cur->mod_revision});
        txn.success.push_back(
            PutRequest{.key = "counter", .value = std::to_string(std::stoi(cur->value) + 1)});
        auto r = kv_->Txn(txn);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        if (r->succeeded) {
          ++done;
        } else {
          ++conflicts;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  KeyValuePtr end = Get("counter");
  EXPECT_EQ(end->value, std::to_string(kThreads * kIncrements));
  EXPECT_EQ(end->version, kThreads * kIncrements + 1);
  EXPECT_EQ(kv_->CurrentRevision(), kThreads * kIncrements + 1) << "failed swaps take no revision";
}

TEST_P(KvConformanceTest, TxnAsyncCallsBackOnceWithItsOwnRevision) {
  constexpr int kTxns = 200;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Revision> revisions;
  int calls = 0;
  for (int i = 0; i < kTxns; ++i) {
    TxnRequest txn;
    txn.success.push_back(PutRequest{.key = "async/" + std::to_string(i), .value = "v"});
    kv_->TxnAsync(std::move(txn), [&](util::StatusOr<TxnResponse> r) {
      std::lock_guard lock(mu);
      ++calls;
      if (r.ok()) revisions.push_back(r->header_revision);
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return calls == kTxns; }));
  std::sort(revisions.begin(), revisions.end());
  ASSERT_EQ(revisions.size(), static_cast<size_t>(kTxns));
  for (int i = 0; i < kTxns; ++i) EXPECT_EQ(revisions[i], i + 1);
  EXPECT_GE(kv_->CurrentRevision(), kTxns) << "acknowledged means visible";
}

TEST_P(KvConformanceTest, ReopenKeepsEverything) {
  if (!factory_->CanReopen()) GTEST_SKIP() << "backend cannot reopen";
  Put("a", "1");
  Put("b", "1");
  Put("a", "2");
  Delete("b");
  ASSERT_TRUE(kv_->Compact(2).ok());
  auto reopened = factory_->Reopen(std::move(kv_));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  kv_ = std::move(reopened).value();
  EXPECT_EQ(kv_->CurrentRevision(), 4);
  EXPECT_EQ(kv_->CompactRevision(), 2);
  EXPECT_EQ(Get("a")->value, "2");
  EXPECT_EQ(Get("a")->version, 2);
  EXPECT_EQ(Get("b"), nullptr);
  EXPECT_EQ(Get("b", 3)->value, "1");
  EXPECT_TRUE(IsCompacted(kv_->Range(RangeRequest{.key = "a", .revision = 1}).status()));
  EXPECT_EQ(Put("c", "1"), 5);
}

}  // namespace
}  // namespace converge::store
