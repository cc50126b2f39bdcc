#include "client/shared_informer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "client/fake_list_watch.h"
#include "client/fake_transport.h"
#include "client/shared_informer_factory.h"

namespace converge::client {
namespace {

api::ObjectPtr InformerObj(const std::string& name, const std::string& rv) {
  api::Object o;
  o.SetGvk({"", "v1", "ConfigMap"});
  o.set_namespace("ns");
  o.set_name(name);
  o.set_resource_version(rv);
  return std::make_shared<const api::Object>(std::move(o));
}

std::string Name(const api::ObjectPtr& o) {
  return o ? std::string(o->name()) + "@" + std::string(o->resource_version()) : "null";
}

// Records notifications as strings; optionally blocks in every call until released.
class RecordingHandler final : public ResourceEventHandler {
 public:
  void OnAdd(const api::ObjectPtr& obj, bool initial) override {
    Record(std::string(initial ? "add* " : "add ") + Name(obj));
  }
  void OnUpdate(const api::ObjectPtr& old_obj, const api::ObjectPtr& new_obj) override {
    Record("update " + Name(old_obj) + "->" + Name(new_obj) +
           (old_obj == new_obj ? " (resync)" : ""));
  }
  void OnDelete(const DeletedObject& d) override {
    Record(std::string(d.final_state_unknown ? "tombstone " : "delete ") + d.key.ToString() +
           " last=" + Name(d.object));
  }

  void Block() {
    std::lock_guard lock(mu_);
    blocked_ = true;
  }
  void Unblock() {
    std::lock_guard lock(mu_);
    blocked_ = false;
    cv_.notify_all();
  }
  bool waiting_in_handler() const {
    std::lock_guard lock(mu_);
    return waiting_;
  }
  std::vector<std::string> got() const {
    std::lock_guard lock(mu_);
    return got_;
  }
  void WaitFor(size_t n) const {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return got_.size() >= n; });
  }

 private:
  void Record(std::string s) {
    std::unique_lock lock(mu_);
    waiting_ = blocked_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return !blocked_; });
    waiting_ = false;
    got_.push_back(std::move(s));
    cv_.notify_all();
  }
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<std::string> got_;
  bool blocked_ = false;
  bool waiting_ = false;
};

struct InformerHarness {
  InformerHarness() {
    auto lw_owned = std::make_unique<FakeListerWatcher>();
    lw = lw_owned.get();
    SharedInformerOptions o;
    o.name = "configmaps";
    o.lister_watcher = std::move(lw_owned);
    o.clock = &clock;
    o.reflector.backoff.random = [] { return 0.0; };
    o.reflector.on_error = [](const util::Status&) {};
    informer = std::make_unique<SharedInformer>(std::move(o));
  }
  ~InformerHarness() { Stop(); }
  void Start() {
    thread = std::jthread([this](std::stop_token st) { informer->Run(st); });
  }
  void Stop() {
    if (thread.joinable()) {
      thread.request_stop();
      thread.join();
    }
  }
  std::shared_ptr<RecordingHandler> Handler(HandlerOptions options = {}) {
    auto h = std::make_shared<RecordingHandler>();
    util::StatusOr<HandlerRegistration> reg = informer->AddEventHandler(h, options);
    EXPECT_TRUE(reg.ok());
    registrations.push_back(*reg);
    return h;
  }

  util::FakeClock clock;
  FakeListerWatcher* lw;
  std::unique_ptr<SharedInformer> informer;
  std::vector<HandlerRegistration> registrations;
  std::jthread thread;
};

TEST(SharedInformerTest, DeliversTheListThenEveryChangeInOrder) {
  InformerHarness h;
  auto handler = h.Handler();
  h.lw->PushList(MakeList("10", {InformerObj("a", "1"), InformerObj("b", "2")}));
  std::shared_ptr<FakeWatcher> w = h.lw->PushWatch();
  h.Start();
  std::stop_source never;
  ASSERT_TRUE(h.informer->WaitForCacheSync(never.get_token()));
  EXPECT_EQ(h.informer->indexer().size(), 2u);

  w->Push(EventType::kModified, InformerObj("a", "11"));
  w->Push(EventType::kDeleted, InformerObj("b", "12"));
  w->Push(EventType::kAdded, InformerObj("c", "13"));
  handler->WaitFor(5);
  std::vector<std::string> got = handler->got();
  std::sort(got.begin(), got.begin() + 2);  // the initial list has no order
  EXPECT_EQ(got, (std::vector<std::string>{"add* a@1", "add* b@2", "update a@1->a@11",
                                           "delete ns/b last=b@12", "add c@13"}));
  EXPECT_TRUE(h.registrations[0].HasSynced());
  EXPECT_EQ(h.informer->indexer().Get({"ns", "a"})->resource_version(), "11");
  EXPECT_EQ(h.informer->indexer().Get({"ns", "b"}), nullptr);
  // The reflector records the resourceVersion right after handing the event over.
  while (h.informer->LastSyncResourceVersion() != "13") std::this_thread::yield();
}

// Lists nothing, then serves one watch of three ADDs; on every read after the first it notes
// whether the object of the previous event is already in the informer's cache.
class CacheCheckingListerWatcher final : public ListerWatcher {
 public:
  util::StatusOr<ObjectList> List(const ListOptions&) override { return MakeList("1", {}); }
  util::StatusOr<std::unique_ptr<Watcher>> Watch(const ListOptions& options) override;
  void set_informer(const SharedInformer* informer) { informer_ = informer; }
  std::vector<bool> cached_before_next_read() const {
    std::lock_guard lock(mu_);
    return cached_;
  }
  void WaitForChecks(size_t n) const {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return cached_.size() >= n; });
  }

 private:
  class Checking;
  const SharedInformer* informer_ = nullptr;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<bool> cached_;  // guarded by mu_
};

class CacheCheckingListerWatcher::Checking final : public Watcher {
 public:
  Checking(CacheCheckingListerWatcher* owner, std::stop_token stop)
      : owner_(owner), stop_(std::move(stop)) {}
  util::StatusOr<std::optional<WatchEvent>> Next() override {
    if (reads_ > 0 && reads_ <= 3) {
      const bool cached =
          owner_->informer_->indexer().Get({"ns", "o" + std::to_string(reads_)}) != nullptr;
      std::lock_guard lock(owner_->mu_);
      owner_->cached_.push_back(cached);
      owner_->cv_.notify_all();
    }
    ++reads_;
    if (reads_ <= 3) {
      return std::optional<WatchEvent>(
          WatchEvent{EventType::kAdded,
                     InformerObj("o" + std::to_string(reads_), std::to_string(reads_ + 1)),
                     {}});
    }
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait(lock, stop_, [] { return false; });
    return util::Cancelled("stopped");
  }

 private:
  CacheCheckingListerWatcher* const owner_;
  const std::stop_token stop_;
  int reads_ = 0;  // the reflector's thread only
};

util::StatusOr<std::unique_ptr<Watcher>> CacheCheckingListerWatcher::Watch(
    const ListOptions& options) {
  return std::unique_ptr<Watcher>(std::make_unique<Checking>(this, options.stop));
}

// The reflector's thread applies what it stored before it reads the next watch event: no
// hand-off to another thread (and no wake-up) per event.
TEST(SharedInformerTest, AnEventIsInTheCacheBeforeTheNextIsRead) {
  auto lw_owned = std::make_unique<CacheCheckingListerWatcher>();
  CacheCheckingListerWatcher* lw = lw_owned.get();
  SharedInformerOptions o;
  o.name = "configmaps";
  o.lister_watcher = std::move(lw_owned);
  o.reflector.on_error = [](const util::Status&) {};
  SharedInformer informer(std::move(o));
  lw->set_informer(&informer);
  auto handler = std::make_shared<RecordingHandler>();
  ASSERT_TRUE(informer.AddEventHandler(handler).ok());
  std::jthread run([&](std::stop_token st) { informer.Run(st); });
  lw->WaitForChecks(3);
  EXPECT_EQ(lw->cached_before_next_read(), (std::vector<bool>{true, true, true}));
  handler->WaitFor(3);
  EXPECT_EQ(handler->got(), (std::vector<std::string>{"add o1@2", "add o2@3", "add o3@4"}));
}

TEST(SharedInformerTest, ABlockedHandlerDoesNotStallAnother) {
  InformerHarness h;
  auto slow = h.Handler();
  auto fast = h.Handler();
  slow->Block();
  h.lw->PushList(MakeList("10", {}));
  std::shared_ptr<FakeWatcher> w = h.lw->PushWatch();
  h.Start();
  constexpr int kEvents = 200;
  for (int i = 0; i < kEvents; ++i) {
    w->Push(EventType::kAdded, InformerObj("o" + std::to_string(i), std::to_string(11 + i)));
  }
  // The fast handler gets everything while the slow one is still stuck in its first call.
  while (!slow->waiting_in_handler()) std::this_thread::yield();
  fast->WaitFor(kEvents);
  EXPECT_TRUE(slow->waiting_in_handler());
  EXPECT_TRUE(slow->got().empty());
  EXPECT_EQ(h.informer->indexer().size(), static_cast<size_t>(kEvents));
  slow->Unblock();
  slow->WaitFor(kEvents);
  EXPECT_EQ(slow->got(), fast->got());
}

// Records, for each add, whether it ran on `thread` and found the object in the cache already.
class InlineCheckingHandler final : public ResourceEventHandler {
 public:
  explicit InlineCheckingHandler(const SharedInformer* informer) : informer_(informer) {}
  void OnAdd(const api::ObjectPtr& obj, bool) override {
    std::lock_guard lock(mu_);
    threads_.push_back(std::this_thread::get_id());
    cached_.push_back(informer_->indexer().Get(obj->key()) == obj);
    names_.push_back(Name(obj));
  }
  void OnUpdate(const api::ObjectPtr&, const api::ObjectPtr&) override {}
  void OnDelete(const DeletedObject&) override {}
  std::vector<std::thread::id> threads() const {
    std::lock_guard lock(mu_);
    return threads_;
  }
  std::vector<bool> cached() const {
    std::lock_guard lock(mu_);
    return cached_;
  }
  std::vector<std::string> names() const {
    std::lock_guard lock(mu_);
    return names_;
  }

 private:
  const SharedInformer* informer_;
  mutable std::mutex mu_;
  std::vector<std::thread::id> threads_;
  std::vector<bool> cached_;
  std::vector<std::string> names_;
};

// An inline handler is called on the informer's own thread (Run's), in order, each change
// already in the cache; a threaded handler beside it still gets everything.
TEST(SharedInformerTest, AnInlineHandlerRunsOnTheInformersThread) {
  InformerHarness h;
  auto inline_handler = std::make_shared<InlineCheckingHandler>(h.informer.get());
  auto reg = h.informer->AddEventHandler(inline_handler, {.inline_delivery = true});
  ASSERT_TRUE(reg.ok());
  auto threaded = h.Handler();
  h.lw->PushList(MakeList("10", {InformerObj("a", "1")}));
  std::shared_ptr<FakeWatcher> w = h.lw->PushWatch();
  h.Start();
  const std::thread::id informer_thread = h.thread.get_id();
  w->Push(EventType::kAdded, InformerObj("b", "11"));
  w->Push(EventType::kAdded, InformerObj("c", "12"));
  threaded->WaitFor(3);
  while (inline_handler->names().size() < 3) std::this_thread::yield();
  EXPECT_EQ(inline_handler->names(), (std::vector<std::string>{"a@1", "b@11", "c@12"}));
  EXPECT_EQ(inline_handler->cached(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(inline_handler->threads(), std::vector<std::thread::id>(3, informer_thread));
  while (!reg->HasSynced()) std::this_thread::yield();
}

// A late inline handler is handed the cache inside AddEventHandler, on the caller's thread, and
// is synced when that returns; once removed it is called no more.
TEST(SharedInformerTest, ALateInlineHandlerGetsTheCacheBeforeAddEventHandlerReturns) {
  InformerHarness h;
  auto first = h.Handler();
  h.lw->PushList(MakeList("10", {InformerObj("a", "1"), InformerObj("b", "2")}));
  std::shared_ptr<FakeWatcher> w = h.lw->PushWatch();
  h.Start();
  std::stop_source never;
  ASSERT_TRUE(h.informer->WaitForCacheSync(never.get_token()));
  auto late = std::make_shared<InlineCheckingHandler>(h.informer.get());
  auto reg = h.informer->AddEventHandler(late, {.inline_delivery = true});
  ASSERT_TRUE(reg.ok());
  std::vector<std::string> names = late->names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a@1", "b@2"}));
  EXPECT_EQ(late->threads(), std::vector<std::thread::id>(2, std::this_thread::get_id()));
  EXPECT_TRUE(reg->HasSynced());
  h.informer->RemoveEventHandler(*reg);
  w->Push(EventType::kAdded, InformerObj("c", "11"));
  first->WaitFor(3);  // delivered after c was distributed
  EXPECT_EQ(late->names().size(), 2u);
}

// A handler with its own thread can lag a complete cache: its registration is synced only once
// it has been handed the whole initial list (upstream's registration HasSynced).
TEST(SharedInformerTest, AThreadedHandlerIsSyncedOnlyOnceItHasSeenTheInitialList) {
  InformerHarness h;
  auto slow = h.Handler();
  slow->Block();
  h.lw->PushList(MakeList("10", {InformerObj("a", "1"), InformerObj("b", "2")}));
  h.lw->PushWatch();
  h.Start();
  std::stop_source never;
  ASSERT_TRUE(h.informer->WaitForCacheSync(never.get_token()));
  while (!slow->waiting_in_handler()) std::this_thread::yield();
  EXPECT_FALSE(h.registrations[0].HasSynced()) << "the handler is still on the first object";
  slow->Unblock();
  slow->WaitFor(2);
  while (!h.registrations[0].HasSynced()) std::this_thread::yield();
}

TEST(SharedInformerTest, ARelistTurnsMissedDeletionsIntoTombstones) {
  InformerHarness h;
  auto handler = h.Handler();
  h.lw->PushList(
      MakeList("10", {InformerObj("a", "1"), InformerObj("b", "2"), InformerObj("c", "3")}));
  std::shared_ptr<FakeWatcher> w1 = h.lw->PushWatch();
  h.Start();
  handler->WaitFor(3);
  // The watch falls behind compaction; meanwhile b was deleted and c changed on the server.
  h.lw->PushList(MakeList("20", {InformerObj("a", "1"), InformerObj("c", "19")}));
  h.lw->PushWatch();
  w1->PushError(util::OutOfRange("too old resource version").WithReason("Expired"));
  h.clock.BlockUntilWaiters(1);
  h.clock.Step(std::chrono::milliseconds(800));  // the reflector's backoff
  handler->WaitFor(5);
  std::vector<std::string> got = handler->got();
  std::vector<std::string> after(got.begin() + 3, got.end());
  std::sort(after.begin(), after.end());
  // a is unchanged (same resourceVersion): no notification. b: a tombstone with the cached state.
  EXPECT_EQ(after, (std::vector<std::string>{"tombstone ns/b last=b@2", "update c@3->c@19"}));
  EXPECT_EQ(h.informer->indexer().Get({"ns", "b"}), nullptr);
  while (h.informer->LastSyncResourceVersion() != "20") std::this_thread::yield();
}

TEST(SharedInformerTest, ALateHandlerGetsTheCacheAsInitialAdds) {
  InformerHarness h;
  h.lw->PushList(MakeList("10", {InformerObj("a", "1"), InformerObj("b", "2")}));
  std::shared_ptr<FakeWatcher> w = h.lw->PushWatch();
  h.Start();
  std::stop_source never;
  ASSERT_TRUE(h.informer->WaitForCacheSync(never.get_token()));
  auto late = h.Handler();
  w->Push(EventType::kAdded, InformerObj("c", "11"));
  late->WaitFor(3);
  std::vector<std::string> got = late->got();
  std::sort(got.begin(), got.begin() + 2);
  EXPECT_EQ(got, (std::vector<std::string>{"add* a@1", "add* b@2", "add c@11"}));
  while (!h.registrations[0].HasSynced()) std::this_thread::yield();
}

TEST(SharedInformerTest, ResyncGoesOnlyToHandlersThatAskedForIt) {
  InformerHarness h;
  auto resyncing = h.Handler({.resync_period = std::chrono::seconds(30)});
  auto quiet = h.Handler();
  h.lw->PushList(MakeList("10", {InformerObj("a", "1")}));
  std::shared_ptr<FakeWatcher> w = h.lw->PushWatch();
  h.Start();
  resyncing->WaitFor(1);
  h.clock.BlockUntilWaiters(1);  // the resync timer
  h.clock.Step(std::chrono::seconds(30));
  resyncing->WaitFor(2);
  EXPECT_EQ(resyncing->got()[1], "update a@1->a@1 (resync)");
  // Notifications reach a handler in order: had the resync gone to the quiet handler too, it
  // would show up before this add.
  w->Push(EventType::kAdded, InformerObj("z", "11"));
  quiet->WaitFor(2);
  EXPECT_EQ(quiet->got(), (std::vector<std::string>{"add* a@1", "add z@11"}));
}

TEST(SharedInformerTest, AnEmptyFirstListSyncs) {
  InformerHarness h;
  auto handler = h.Handler();
  h.lw->PushList(MakeList("10", {}));
  h.lw->PushWatch();
  h.Start();
  std::stop_source never;
  EXPECT_TRUE(h.informer->WaitForCacheSync(never.get_token()));
  while (!h.registrations[0].HasSynced()) std::this_thread::yield();
}

TEST(SharedInformerTest, StopEndsRunAndRejectsNewHandlers) {
  InformerHarness h;
  auto handler = h.Handler();
  handler->Block();  // a handler stuck in user code must not keep the informer from stopping...
  h.lw->PushList(MakeList("10", {InformerObj("a", "1")}));
  std::shared_ptr<FakeWatcher> w = h.lw->PushWatch();
  h.Start();
  while (!handler->waiting_in_handler()) std::this_thread::yield();
  std::thread unblock([&] {
    // ...except that its thread is joined: release it once Run is waiting for that.
    while (!w->stopped()) std::this_thread::yield();
    handler->Unblock();
  });
  h.Stop();
  unblock.join();
  EXPECT_TRUE(h.informer->IsStopped());
  EXPECT_EQ(h.informer->AddEventHandler(std::make_shared<RecordingHandler>()).status().code(),
            util::Code::kFailedPrecondition);
  std::stop_source never;
  EXPECT_TRUE(h.informer->WaitForCacheSync(never.get_token()));  // returns: it had synced
}

TEST(SharedInformerTest, WaitForCacheSyncReturnsFalseWhenStopped) {
  InformerHarness h;
  h.Start();  // no list is ever answered
  std::stop_source stop;
  std::thread stopper([&] {
    h.lw->WaitForLists(1);
    stop.request_stop();
  });
  EXPECT_FALSE(WaitForCacheSync(stop.get_token(), {h.informer.get()}));
  stopper.join();
}

TEST(SharedInformerFactoryTest, OneInformerPerResourceOverTheRestClient) {
  auto body = std::make_shared<FakeStream>();
  auto fake = std::make_shared<FakeTransport>(
      [](const HttpRequest& r) {
        EXPECT_EQ(r.path, "/api/v1/namespaces/team/configmaps");
        return FakeTransport::Json(
            200,
            R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},)"
            R"("items":[{"metadata":{"name":"a","namespace":"team","resourceVersion":"4"}}]})");
      },
      [&](const HttpRequest&) -> util::StatusOr<FakeTransport::StreamAnswer> {
        return FakeTransport::StreamAnswer{200, body};
      });
  RestClient client({.transport = fake});
  SharedInformerFactory factory({.client = &client, .ns = "team"});
  SharedInformer& a = factory.InformerFor({"", "v1", "configmaps"});
  SharedInformer& b = factory.InformerFor({"", "v1", "configmaps"});
  EXPECT_EQ(&a, &b);
  util::StatusOr<SharedInformer*> by_kind = factory.InformerForKind({"", "v1", "ConfigMap"});
  ASSERT_TRUE(by_kind.ok());
  EXPECT_EQ(*by_kind, &a);
  std::stop_source stop;
  factory.Start(stop.get_token());
  ASSERT_TRUE(factory.WaitForCacheSync(stop.get_token()));
  ASSERT_NE(a.indexer().Get({"team", "a"}), nullptr);
  EXPECT_EQ(a.indexer().Get({"team", "a"})->kind(), "ConfigMap");
  body->Push(R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"b",)"
             R"("namespace":"team","resourceVersion":"6"}}})");
  while (a.indexer().size() < 2) std::this_thread::yield();
  factory.Shutdown();
  EXPECT_TRUE(a.IsStopped());
}

}  // namespace
}  // namespace converge::client
