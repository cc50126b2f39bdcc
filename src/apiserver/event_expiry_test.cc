#include "apiserver/event_expiry.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "store/embedded_store.h"
#include "store/store_test_util.h"

namespace converge::apiserver {
namespace {

using std::chrono::minutes;

// A KV that runs `before_txn` once, just before the first transaction it forwards.
class InterposingKv final : public store::KV {
 public:
  InterposingKv(store::KV* kv, std::function<void()> before_txn)
      : kv_(kv), before_txn_(std::move(before_txn)) {}
  util::StatusOr<store::RangeResponse> Range(const store::RangeRequest& r) override {
    ++ranges;
    return kv_->Range(r);
  }
  util::StatusOr<store::PutResponse> Put(const store::PutRequest& r) override {
    return kv_->Put(r);
  }
  util::StatusOr<store::DeleteRangeResponse> DeleteRange(
      const store::DeleteRangeRequest& r) override {
    return kv_->DeleteRange(r);
  }
  util::StatusOr<store::TxnResponse> Txn(store::TxnRequest r) override {
    ++txns;
    if (before_txn_) std::exchange(before_txn_, nullptr)();
    return kv_->Txn(r);
  }
  void TxnAsync(store::TxnRequest r, TxnCallback done) override {
    kv_->TxnAsync(std::move(r), std::move(done));
  }
  util::StatusOr<store::CompactResponse> Compact(store::Revision r) override {
    return kv_->Compact(r);
  }
  util::StatusOr<std::unique_ptr<store::WatchStream>> Watch(const store::WatchRequest& r) override {
    return kv_->Watch(r);
  }
  store::Revision CurrentRevision() const override { return kv_->CurrentRevision(); }
  store::Revision CompactRevision() const override { return kv_->CompactRevision(); }

  int ranges = 0;
  int txns = 0;

 private:
  store::KV* kv_;
  std::function<void()> before_txn_;
};

class EventExpiryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kv = store::OpenEmbeddedStore(store::TestStoreOptions(dir_.path()));
    ASSERT_TRUE(kv.ok()) << kv.status().ToString();
    kv_ = std::move(*kv);
  }
  void Put(const std::string& key) {
    ASSERT_TRUE(kv_->Put({.key = key, .value = "{}"}).ok()) << key;
  }
  bool Exists(const std::string& key) {
    auto r = kv_->Range({.key = key});
    return r.ok() && !r->kvs.empty();
  }
  EventExpiryOptions Options(store::KV* kv) {
    return {.kv = kv, .clock = &clock_, .ttl = minutes(60)};
  }

  store::TempDir dir_;
  std::unique_ptr<store::KV> kv_;
  util::FakeClock clock_;
};

TEST_F(EventExpiryTest, AnEventGoesTtlAfterItsLastWriteAndNothingElseDoes) {
  Put("/registry/events/default/a");
  Put("/registry/events/default/b");
  Put("/registry/events/kube-system/c");
  Put("/registry/pods/default/p");
  Put("/registry/eventsx/default/not-an-event");
  EventExpiry expiry(Options(kv_.get()));
  expiry.Start();  // t = 0: what is stored now expires at t = 60 min

  clock_.Step(minutes(30));
  Put("/registry/events/default/b");  // rewritten at t = 30
  Put("/registry/events/default/d");  // new at t = 30
  auto n = expiry.Sweep();
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 0u) << "nothing is an hour old yet";

  clock_.Step(minutes(31));  // t = 61
  n = expiry.Sweep();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2u);
  EXPECT_FALSE(Exists("/registry/events/default/a"));
  EXPECT_FALSE(Exists("/registry/events/kube-system/c"));
  EXPECT_TRUE(Exists("/registry/events/default/b")) << "written 31 minutes ago";
  EXPECT_TRUE(Exists("/registry/events/default/d"));
  EXPECT_TRUE(Exists("/registry/pods/default/p"));
  EXPECT_TRUE(Exists("/registry/eventsx/default/not-an-event"));

  clock_.Step(minutes(30));  // t = 91: the writes of t = 30 are an hour old
  n = expiry.Sweep();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2u);
  EXPECT_FALSE(Exists("/registry/events/default/b"));
  EXPECT_FALSE(Exists("/registry/events/default/d"));
  EXPECT_TRUE(Exists("/registry/pods/default/p"));
}

TEST_F(EventExpiryTest, AnEventWrittenDuringTheSweepStays) {
  for (int i = 0; i < 5; ++i) Put("/registry/events/default/e" + std::to_string(i));
  // Written after the sweep read the keys, before it deletes: the batch fails as a whole, and
  // the others are deleted one at a time.
  InterposingKv kv(kv_.get(), [this] { Put("/registry/events/default/e2"); });
  EventExpiry expiry(Options(&kv));
  expiry.Start();
  clock_.Step(minutes(61));
  auto n = expiry.Sweep();
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 4u);
  EXPECT_EQ(kv.txns, 1 + 5);
  EXPECT_TRUE(Exists("/registry/events/default/e2"));
  for (int i : {0, 1, 3, 4}) EXPECT_FALSE(Exists("/registry/events/default/e" + std::to_string(i)));
}

TEST_F(EventExpiryTest, PagesAndBatchesCoverEveryEvent) {
  for (int i = 0; i < 23; ++i) Put("/registry/events/ns/e" + std::to_string(100 + i));
  EventExpiryOptions o = Options(kv_.get());
  o.page = 4;
  o.batch = 5;
  EventExpiry expiry(o);
  expiry.Start();
  clock_.Step(minutes(61));
  auto n = expiry.Sweep();
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 23u);
  auto left =
      kv_->Range({.key = "/registry/events/", .range_end = store::PrefixEnd("/registry/events/")});
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(left->count, 0);
}

TEST_F(EventExpiryTest, ASweepWithNothingNewlyExpiredReadsNothing) {
  Put("/registry/events/default/a");
  InterposingKv kv(kv_.get(), nullptr);
  EventExpiry expiry(Options(&kv));
  expiry.Start();
  clock_.Step(minutes(61));
  ASSERT_EQ(*expiry.Sweep(), 1u);
  const int ranges = kv.ranges;
  const int txns = kv.txns;
  // Written after the last note: it expires only once a note taken after it is an hour old.
  Put("/registry/events/default/b");
  clock_.Step(minutes(1));
  ASSERT_EQ(*expiry.Sweep(), 0u);
  EXPECT_EQ(kv.ranges, ranges);
  EXPECT_EQ(kv.txns, txns);
  EXPECT_TRUE(Exists("/registry/events/default/b"));
}

TEST(EventExpiryPeriodTest, ATenthOfTheTtlWithinASecondAndAMinute) {
  auto period = [](std::chrono::milliseconds ttl) {
    return EventExpiry({.ttl = ttl}).sweep_period();
  };
  EXPECT_EQ(period(std::chrono::hours(1)), minutes(1));
  EXPECT_EQ(period(minutes(5)), std::chrono::seconds(30));
  EXPECT_EQ(period(std::chrono::seconds(2)), std::chrono::seconds(1));
}

}  // namespace
}  // namespace converge::apiserver
