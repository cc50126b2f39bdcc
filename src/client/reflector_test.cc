#include "client/reflector.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>

#include <boost/json.hpp>

#include "client/api_errors.h"
#include "client/fake_list_watch.h"

namespace converge::client {
namespace {

using std::chrono::milliseconds;

api::ObjectPtr ListedObj(const std::string& name, const std::string& rv) {
  api::Object o;
  o.SetGvk({"", "v1", "ConfigMap"});
  o.set_namespace("ns");
  o.set_name(name);
  o.set_resource_version(rv);
  return std::make_shared<const api::Object>(std::move(o));
}

// Records what the reflector does to its store, as strings.
class RecordingStore final : public ReflectorStore {
 public:
  void Add(api::ObjectPtr o) override { Record("add " + Name(o)); }
  void Update(api::ObjectPtr o) override { Record("update " + Name(o)); }
  void Delete(api::ObjectPtr o) override { Record("delete " + Name(o)); }
  void Resync() override { Record("resync"); }
  void Replace(std::vector<api::ObjectPtr> objs, const std::string& rv) override {
    std::string s = "replace@" + rv + " [";
    for (size_t i = 0; i < objs.size(); ++i) s += (i ? "," : "") + Name(objs[i]);
    Record(s + "]");
  }
  std::vector<std::string> ops() const {
    std::lock_guard lock(mu_);
    return ops_;
  }
  void WaitForOps(size_t n) const {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return ops_.size() >= n; });
  }

 private:
  static std::string Name(const api::ObjectPtr& o) {
    return std::string(o->name()) + "@" + std::string(o->resource_version());
  }
  void Record(std::string s) {
    std::lock_guard lock(mu_);
    ops_.push_back(std::move(s));
    cv_.notify_all();
  }
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<std::string> ops_;
};

util::Status Expired() {
  return util::OutOfRange("too old resource version: 15 (20)").WithReason("Expired");
}

struct ReflectorHarness {
  explicit ReflectorHarness(util::Clock::Duration resync = {}) {
    ReflectorOptions o;
    o.name = "test";
    o.lister_watcher = &lw;
    o.store = &store;
    o.clock = &clock;
    o.resync_period = resync;
    o.backoff.random = [] { return 0.0; };  // no jitter: exact delays
    o.random = [] { return 0.25; };         // timeoutSeconds = 300·1.25
    o.on_error = [](const util::Status&) {};
    reflector = std::make_unique<Reflector>(std::move(o));
  }
  ~ReflectorHarness() { Stop(); }
  void Start() {
    thread = std::jthread([this](std::stop_token st) { reflector->Run(st); });
  }
  void Stop() {
    if (thread.joinable()) {
      thread.request_stop();
      thread.join();
    }
  }
  // Asserts that the reflector is sleeping exactly `d`: still asleep 1 ms before, awake at d.
  void ExpectSleep(util::Clock::Duration d) {
    clock.BlockUntilWaiters(1);
    clock.Step(d - milliseconds(1));
    EXPECT_EQ(clock.Waiters(), 1) << "woke before " << d.count() << "ns";
    clock.Step(milliseconds(1));
  }

  util::FakeClock clock;
  FakeListerWatcher lw;
  RecordingStore store;
  std::unique_ptr<Reflector> reflector;
  std::jthread thread;
};

TEST(ReflectorTest, ExactListWatchResourceVersionSequence) {
  ReflectorHarness h;
  // 1. The first list: resourceVersion "0", pages of 500; the second page drops the
  //    resourceVersion and follows the continue token.
  h.lw.PushList(MakeList("10", {ListedObj("a", "5")}, "c1"));
  h.lw.PushList(MakeList("10", {ListedObj("b", "7")}));
  std::shared_ptr<FakeWatcher> w1 = h.lw.PushWatch();
  h.Start();
  h.lw.WaitForWatches(1);
  std::vector<ListOptions> lists = h.lw.lists();
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0].resource_version, "0");
  EXPECT_EQ(lists[0].limit, 500);
  EXPECT_EQ(lists[0].continue_token, "");
  EXPECT_EQ(lists[1].resource_version, "");
  EXPECT_EQ(lists[1].limit, 500);
  EXPECT_EQ(lists[1].continue_token, "c1");

  // 2. Watch from the list's resourceVersion, with bookmarks and a randomized timeout.
  ListOptions watch = h.lw.watches()[0];
  EXPECT_EQ(watch.resource_version, "10");
  EXPECT_TRUE(watch.allow_watch_bookmarks);
  EXPECT_EQ(watch.timeout_seconds, 375);

  // 3. Events and bookmarks advance the resourceVersion; a clean close resumes from it at once.
  w1->Push(EventType::kAdded, ListedObj("c", "11"));
  w1->Push(EventType::kModified, ListedObj("a", "12"));
  w1->PushBookmark("15");
  std::shared_ptr<FakeWatcher> w2 = h.lw.PushWatch();
  w1->End();
  h.lw.WaitForWatches(2);
  EXPECT_EQ(h.lw.watches()[1].resource_version, "15");
  EXPECT_EQ(h.reflector->LastSyncResourceVersion(), "15");
  EXPECT_EQ(h.lw.lists().size(), 2u);  // no relist for a dropped watch

  // 4. 410 Expired in the watch: back off, then relist at the last resourceVersion ("not older
  //    than": it cannot go back in time). That list is 410 too: relist at once with
  //    resourceVersion unset — a consistent read. The relists stay paged because the first list
  //    ("0") came back in pages: the server has no watch cache for this resource (client-go's
  //    paginatedResult; see RelistAtTheLastResourceVersionWhenTheCacheHasIt for the unpaged case).
  h.lw.PushList(Expired());
  h.lw.PushList(MakeList("30", {ListedObj("a", "12"), ListedObj("d", "29")}));
  std::shared_ptr<FakeWatcher> w3 = h.lw.PushWatch();
  w2->PushError(Expired());
  h.ExpectSleep(milliseconds(800));
  h.lw.WaitForWatches(3);
  lists = h.lw.lists();
  ASSERT_EQ(lists.size(), 4u);
  EXPECT_EQ(lists[2].resource_version, "15");
  EXPECT_EQ(lists[2].limit, 500);
  EXPECT_EQ(lists[3].resource_version, "");
  EXPECT_EQ(lists[3].limit, 500);

  // 5. Watch again from the consistent list's resourceVersion.
  EXPECT_EQ(h.lw.watches()[2].resource_version, "30");
  h.Stop();
  EXPECT_TRUE(w3->stopped());
  EXPECT_EQ(h.store.ops(), (std::vector<std::string>{"replace@10 [a@5,b@7]", "add c@11",
                                                     "update a@12", "replace@30 [a@12,d@29]"}));
}

TEST(ReflectorTest, RelistAtTheLastResourceVersionWhenTheCacheHasIt) {
  ReflectorHarness h;
  h.lw.PushList(MakeList("10", {}));
  std::shared_ptr<FakeWatcher> w1 = h.lw.PushWatch();
  h.Start();
  h.lw.WaitForWatches(1);
  w1->Push(EventType::kAdded, ListedObj("a", "12"));
  h.lw.PushList(MakeList("20", {ListedObj("a", "12")}));
  h.lw.PushWatch();
  w1->PushError(Expired());
  h.ExpectSleep(milliseconds(800));
  h.lw.WaitForWatches(2);
  std::vector<ListOptions> lists = h.lw.lists();
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0].limit, 500);
  // Unpaged, so that a watch cache can answer at "not older than 12" without touching the store.
  EXPECT_EQ(lists[1].resource_version, "12");
  EXPECT_EQ(lists[1].limit, 0);
  EXPECT_EQ(h.lw.watches()[1].resource_version, "20");
}

TEST(ReflectorTest, UnreachableServerRetriesTheWatchFromTheSameResourceVersion) {
  ReflectorHarness h;
  h.lw.PushList(MakeList("10", {}));
  std::shared_ptr<FakeWatcher> w1 = h.lw.PushWatch();
  h.Start();
  h.lw.WaitForWatches(1);
  w1->Push(EventType::kAdded, ListedObj("a", "11"));
  // The server goes away: the stream breaks, re-watching is refused twice, then works.
  h.lw.PushWatchError(util::Unavailable("connection refused"));
  h.lw.PushWatchError(util::Unavailable("connection refused"));
  h.lw.PushWatch();
  w1->Fail(util::Unavailable("connection reset by peer"));
  h.ExpectSleep(milliseconds(800));
  h.ExpectSleep(milliseconds(1600));
  h.lw.WaitForWatches(4);
  std::vector<ListOptions> watches = h.lw.watches();
  EXPECT_EQ(watches[1].resource_version, "11");
  EXPECT_EQ(watches[2].resource_version, "11");
  EXPECT_EQ(watches[3].resource_version, "11");
  EXPECT_EQ(h.lw.lists().size(), 1u);  // no relist
}

TEST(ReflectorTest, AVeryShortEmptyWatchRelistsAfterABackoff) {
  ReflectorHarness h;
  h.lw.PushList(MakeList("10", {}));
  std::shared_ptr<FakeWatcher> w1 = h.lw.PushWatch();
  h.lw.PushList(MakeList("10", {}));
  h.lw.PushWatch();
  h.Start();
  h.lw.WaitForWatches(1);
  w1->End();  // closed at once, nothing delivered: something rejects the watch
  h.ExpectSleep(milliseconds(800));
  h.lw.WaitForWatches(2);
  ASSERT_EQ(h.lw.lists().size(), 2u);
  EXPECT_EQ(h.lw.lists()[1].resource_version, "10");
}

TEST(ReflectorTest, AnExpiredContinuationFallsBackToOneFullList) {
  ReflectorHarness h;
  h.lw.PushList(MakeList("10", {ListedObj("a", "5")}, "c1"));
  h.lw.PushList(Expired());
  h.lw.PushList(MakeList("40", {ListedObj("a", "5"), ListedObj("b", "33")}));
  h.lw.PushWatch();
  h.Start();
  h.lw.WaitForWatches(1);
  std::vector<ListOptions> lists = h.lw.lists();
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[2].continue_token, "");
  EXPECT_EQ(lists[2].limit, 0);
  EXPECT_EQ(lists[2].resource_version, "");
  EXPECT_EQ(h.lw.watches()[0].resource_version, "40");
  EXPECT_EQ(h.store.ops(), (std::vector<std::string>{"replace@40 [a@5,b@33]"}));
}

TEST(ReflectorTest, BackoffGrowsOverFailuresAndResetsAfterAHealthyWatch) {
  ReflectorHarness h;
  h.lw.PushList(util::Unavailable("connection refused"));
  h.lw.PushList(util::Unavailable("connection refused"));
  h.lw.PushList(util::Unavailable("connection refused"));
  h.lw.PushList(MakeList("10", {}));
  std::shared_ptr<FakeWatcher> w1 = h.lw.PushWatch();
  h.Start();
  h.ExpectSleep(milliseconds(800));
  h.ExpectSleep(milliseconds(1600));
  h.ExpectSleep(milliseconds(3200));
  h.lw.WaitForWatches(1);
  // The watch stays up for three minutes, then fails: the next wait starts over at 800 ms.
  w1->Push(EventType::kAdded, ListedObj("a", "11"));
  h.clock.Step(std::chrono::minutes(3));
  h.lw.PushList(MakeList("20", {}));
  h.lw.PushWatch();
  w1->PushError(util::Internal("boom").WithReason("InternalError"));
  h.ExpectSleep(milliseconds(800));
  h.lw.WaitForWatches(2);
}

TEST(ReflectorTest, TooManyRequestsOnAWatchBacksOffAndRewatches) {
  ReflectorHarness h;
  h.lw.PushList(MakeList("10", {}));
  std::shared_ptr<FakeWatcher> w1 = h.lw.PushWatch();
  h.Start();
  h.lw.WaitForWatches(1);
  w1->Push(EventType::kAdded, ListedObj("a", "11"));
  h.lw.PushWatch();
  w1->PushError(util::Unavailable("slow down").WithReason("TooManyRequests"));
  h.ExpectSleep(milliseconds(800));
  h.lw.WaitForWatches(2);
  EXPECT_EQ(h.lw.watches()[1].resource_version, "11");
  EXPECT_EQ(h.lw.lists().size(), 1u);
}

TEST(ReflectorTest, ResyncCallsTheStoreEveryPeriodWhileWatching) {
  ReflectorHarness h(std::chrono::seconds(30));
  h.lw.PushList(MakeList("10", {}));
  h.lw.PushWatch();
  h.Start();
  h.lw.WaitForWatches(1);
  h.clock.BlockUntilWaiters(1);  // the resync timer
  h.clock.Step(std::chrono::seconds(30));
  h.store.WaitForOps(2);
  h.clock.BlockUntilWaiters(1);
  h.clock.Step(std::chrono::seconds(30));
  h.store.WaitForOps(3);
  EXPECT_EQ(h.store.ops(), (std::vector<std::string>{"replace@10 []", "resync", "resync"}));
}

// Keeps the last object the reflector handed over for each name.
class KeepingStore final : public ReflectorStore {
 public:
  void Add(api::ObjectPtr o) override { Keep({std::move(o)}); }
  void Update(api::ObjectPtr o) override { Keep({std::move(o)}); }
  void Delete(api::ObjectPtr o) override { Keep({std::move(o)}); }
  void Resync() override {}
  void Replace(std::vector<api::ObjectPtr> objs, const std::string&) override {
    Keep(std::move(objs));
  }
  // Waits until `n` names were seen, then returns what is kept.
  std::map<std::string, api::ObjectPtr> WaitFor(size_t n) const {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return kept_.size() >= n; });
    return kept_;
  }

 private:
  void Keep(std::vector<api::ObjectPtr> objs) {
    std::lock_guard lock(mu_);
    for (auto& o : objs) kept_[std::string(o->name())] = std::move(o);
    cv_.notify_all();
  }
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::map<std::string, api::ObjectPtr> kept_;  // guarded by mu_
};

api::ObjectPtr ObjWithManagedFields(const std::string& name, const std::string& rv) {
  api::Object o = *ListedObj(name, rv);
  o.mutable_metadata()["managedFields"] = boost::json::parse(
      R"([{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:data":{}}}])");
  return std::make_shared<const api::Object>(std::move(o));
}

bool HasManagedFields(const api::ObjectPtr& o) {
  return static_cast<bool>(api::Find(o->view(), {"metadata", "managedFields"}));
}

// Lists "a" (with managedFields), then watches "b" (with) and "c" (without) into a store.
std::map<std::string, api::ObjectPtr> ListAndWatchThreeObjects(bool drop_managed_fields,
                                                               const api::ObjectPtr& c,
                                                               bool compact = false) {
  util::FakeClock clock;
  FakeListerWatcher lw;
  KeepingStore store;
  ReflectorOptions o;
  o.lister_watcher = &lw;
  o.store = &store;
  o.clock = &clock;
  o.on_error = [](const util::Status&) {};
  o.drop_managed_fields = drop_managed_fields;
  o.compact_objects = compact;
  Reflector reflector(std::move(o));
  lw.PushList(MakeList("10", {ObjWithManagedFields("a", "5")}));
  std::shared_ptr<FakeWatcher> w = lw.PushWatch();
  std::jthread thread([&](std::stop_token st) { reflector.Run(st); });
  lw.WaitForWatches(1);
  w->Push(EventType::kAdded, ObjWithManagedFields("b", "11"));
  w->Push(EventType::kAdded, c);
  return store.WaitFor(3);
}

TEST(ReflectorTest, DropManagedFieldsStripsListedAndWatchedObjects) {
  api::ObjectPtr c = ListedObj("c", "12");
  std::map<std::string, api::ObjectPtr> kept = ListAndWatchThreeObjects(true, c);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_FALSE(HasManagedFields(kept["a"]));
  EXPECT_FALSE(HasManagedFields(kept["b"]));
  // The rest of the object is kept.
  EXPECT_EQ(kept["a"]->doc(), ListedObj("a", "5")->doc());
  EXPECT_EQ(kept["b"]->doc(), ListedObj("b", "11")->doc());
  // An object without managedFields (what the in-process watch hands over) is not copied.
  EXPECT_EQ(kept["c"].get(), c.get());

  // Without the option they stay.
  kept = ListAndWatchThreeObjects(false, c);
  EXPECT_TRUE(HasManagedFields(kept["a"]));
  EXPECT_TRUE(HasManagedFields(kept["b"]));
}

TEST(ReflectorTest, CompactObjectsStoresListedAndWatchedObjectsCompact) {
  api::ObjectPtr c = ListedObj("c", "12");
  std::map<std::string, api::ObjectPtr> kept =
      ListAndWatchThreeObjects(/*drop_managed_fields=*/true, c, /*compact=*/true);
  ASSERT_EQ(kept.size(), 3u);
  for (const char* name : {"a", "b", "c"}) {
    EXPECT_TRUE(kept[name]->is_compact()) << name;
    EXPECT_FALSE(HasManagedFields(kept[name])) << name;
  }
  EXPECT_TRUE(kept["a"]->view() == ListedObj("a", "5")->view());
  EXPECT_TRUE(kept["b"]->view() == ListedObj("b", "11")->view());
  EXPECT_TRUE(kept["c"]->view() == c->view());
  // One the watch hands over compact already is stored as it is.
  auto shared =
      std::make_shared<const api::Object>(api::Object::Compact(ListedObj("d", "13")->doc()));
  kept = ListAndWatchThreeObjects(true, shared, true);
  EXPECT_EQ(kept["d"].get(), shared.get());
}

}  // namespace
}  // namespace converge::client
