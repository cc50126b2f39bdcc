// The watch cache's guarantees (watch_cache.h), driven directly through its dispatcher-side
// mutators: resumption from any revision in the window and 410 beyond it, events encoded once and
// shared by every watcher, selectors turning a change into ADDED/DELETED per watcher, the
// sendInitialEvents bookmark, and a slow watcher terminated without holding anyone up.
#include "apiserver/watch_cache.h"

#include <gtest/gtest.h>

#include <cstdio>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/builtin_resources.h"
#include "store/embedded_store.h"
#include "store/store_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

std::shared_ptr<const api::ResourceInfo> ConfigMapsInfo() {
  for (const api::ResourceInfo& info : api::BuiltinResources()) {
    if (info.gvr.resource == "configmaps") return std::make_shared<api::ResourceInfo>(info);
  }
  return nullptr;
}

std::string Json(const std::string& name, const std::string& app) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","namespace":"default","labels":{"app":")" + app + R"("}}})";
}

// The store's event for a put of `value` at "default/<name>".
store::Event PutValue(const std::string& name, std::string value, store::Revision revision,
                      store::Revision created) {
  store::Event e;
  e.type = store::Event::Type::kPut;
  auto kv = std::make_shared<store::KeyValue>();
  kv->key = "/registry/configmaps/default/" + name;
  kv->value = std::move(value);
  kv->create_revision = created;
  kv->mod_revision = revision;
  kv->version = revision - created + 1;
  e.kv = kv;
  return e;
}

store::Event PutLabelled(const std::string& name, const std::string& app, store::Revision revision,
                         store::Revision created) {
  return PutValue(name, Json(name, app), revision, created);
}

// Everything queued for a watcher now (it never waits).
std::vector<WatchItem> Drain(CacheWatcher& w, bool* ended = nullptr) {
  std::vector<WatchItem> out;
  CacheWatcher::PollResult r = w.Poll(&out, [] {});
  if (ended) *ended = r == CacheWatcher::PollResult::kEnd;
  return out;
}

std::vector<std::string> Types(const std::vector<WatchItem>& items) {
  std::vector<std::string> out;
  for (const WatchItem& i : items) {
    std::string s(i.event ? WatchEventTypeName(i.as) : "BOOKMARK");
    if (i.event)
      s += " " + std::string(i.event->object()->name()) + "@" + std::to_string(i.event->revision());
    out.push_back(s);
  }
  return out;
}

class WatchCacheTest : public ::testing::Test {
 protected:
  WatchCacheTest() : cache_(ConfigMapsInfo(), {.history_capacity = 5, .watcher_buffer = 100}) {}

  // Revisions 1..n: "a" created at 1, then modified once per revision.
  void History(int n) {
    for (int r = 1; r <= n; ++r) cache_.Apply({PutLabelled("a", "web", r, 1)}, r);
  }

  WatchCache cache_;
};

TEST_F(WatchCacheTest, ResumesFromEveryRevisionInTheWindowAndExpiresBeyondIt) {
  History(8);  // history keeps revisions 4..8
  for (store::Revision from = 3; from <= 8; ++from) {
    auto w = cache_.Watch({}, {.from_revision = from}, 100);
    ASSERT_TRUE(w.ok()) << from << ": " << w.status().message();
    std::vector<std::string> want;
    for (store::Revision r = from + 1; r <= 8; ++r)
      want.push_back("MODIFIED a@" + std::to_string(r));
    EXPECT_EQ(Types(Drain(**w)), want) << "from " << from;
  }
  auto old = cache_.Watch({}, {.from_revision = 2}, 100);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), util::Code::kOutOfRange);
}

// The history is sized by the resource's rate: the events of the last history_window, at least
// history_min, at most history_capacity. Watches resume from anything kept and get 410 before it.
TEST(WatchCacheHistoryTest, KeepsTheWindowAtLeastTheMinimumAndAtMostTheCapacity) {
  util::FakeClock clock;
  WatchCache cache(ConfigMapsInfo(), {.history_capacity = 8,
                                      .history_min = 3,
                                      .history_window = std::chrono::seconds(75),
                                      .watcher_buffer = 100,
                                      .clock = &clock});
  auto resumes_from = [&](store::Revision from) {
    auto w = cache.Watch({}, {.from_revision = from}, 100);
    if (!w.ok()) {
      EXPECT_EQ(w.status().code(), util::Code::kOutOfRange) << from;
      return false;
    }
    // Everything after `from` and nothing else, in order.
    std::vector<std::string> want;
    for (store::Revision r = from + 1; r <= cache.revision(); ++r)
      want.push_back("MODIFIED a@" + std::to_string(r));
    EXPECT_EQ(Types(Drain(**w)), want) << "from " << from;
    return true;
  };
  cache.Reset({}, 0);
  cache.Apply({PutLabelled("a", "web", 1, 1)}, 1);
  for (int r = 2; r <= 6; ++r) cache.Apply({PutLabelled("a", "web", r, 1)}, r);
  EXPECT_EQ(cache.history_size(), 6u);  // a burst inside the window is kept whole

  clock.Step(std::chrono::seconds(10));
  for (int r = 7; r <= 12; ++r) cache.Apply({PutLabelled("a", "web", r, 1)}, r);
  EXPECT_EQ(cache.history_size(), 8u);  // ... up to the capacity: revisions 5..12
  EXPECT_FALSE(resumes_from(3));
  EXPECT_TRUE(resumes_from(4));

  clock.Step(std::chrono::seconds(65));  // 5..6 are 75 s old, 7..12 65 s: none past the window
  cache.ExpireHistory();
  EXPECT_EQ(cache.history_size(), 8u);
  EXPECT_TRUE(resumes_from(4));

  clock.Step(std::chrono::seconds(11));  // 5..6 are 86 s old, 7..12 76 s: past the window
  cache.ExpireHistory();
  EXPECT_EQ(cache.history_size(), 3u);  // the minimum, newest first: 10..12
  EXPECT_FALSE(resumes_from(8));
  EXPECT_TRUE(resumes_from(9));
  EXPECT_TRUE(resumes_from(12));

  cache.Apply({PutLabelled("a", "web", 13, 1)}, 13);  // a new event pushes the oldest old one out
  EXPECT_EQ(cache.history_size(), 3u);
  EXPECT_FALSE(resumes_from(9));
  EXPECT_TRUE(resumes_from(10));
}

// The Cacher's ticker expires history as it ages, without waiting for the resource's next event.
TEST(CacherHistoryTest, TheTickerDropsEventsOlderThanTheWindow) {
  store::TempDir dir;
  auto kv = store::OpenEmbeddedStore(store::TestStoreOptions(dir.path()));
  ASSERT_TRUE(kv.ok()) << kv.status().message();
  util::FakeClock clock;  // times the history; the ticker itself runs every real second
  CacherOptions options;
  options.cache.history_min = 2;
  options.clock = &clock;
  Cacher cacher(kv->get(), options);
  WatchCache* cache = cacher.AddResource(ConfigMapsInfo());
  ASSERT_TRUE(cacher.Start().ok());
  store::Revision last = 0;
  for (int i = 0; i < 5; ++i) {
    auto put = (*kv)->Put({.key = "/registry/configmaps/default/a", .value = Json("a", "web")});
    ASSERT_TRUE(put.ok());
    last = put->header_revision;
  }
  ASSERT_TRUE(cacher.WaitForRevision(last, std::chrono::seconds(30)));
  EXPECT_EQ(cache->history_size(), 5u);
  clock.Step(std::chrono::seconds(76));
  // No more events: only the ticker can drop them. Poll until it has (a test deadline, not a
  // timing assertion: the ticker runs every second).
  for (int i = 0; i < 300 && cache->history_size() > 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(cache->history_size(), 2u);
  EXPECT_FALSE(cache->Watch({}, {.from_revision = last - 3}, 100).ok());  // 410: relist
  EXPECT_TRUE(cache->Watch({}, {.from_revision = last - 2}, 100).ok());
  cacher.Stop();
}

// A start-up over more objects than BuildEntries builds on one thread (2,000): every stored object
// becomes its own entry, in key order, whichever thread built it; a damaged one fails the start.
TEST(CacherLoadTest, AStartOverManyObjectsBuildsEveryEntryOnce) {
  constexpr int kObjects = 2500;
  auto name = [](int i) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "cm-%05d", i);
    return std::string(buf);
  };
  // Every tenth one large enough to be held compressed.
  std::string padding(400, 'x');
  auto value = [&](int i) {
    json::object doc = json::parse(Json(name(i), "app-" + std::to_string(i))).as_object();
    if (i % 10 == 0) doc["data"] = json::object{{"text", padding}};
    return json::serialize(doc);
  };
  for (bool damaged : {false, true}) {
    SCOPED_TRACE(damaged ? "one damaged object" : "all sound");
    store::TempDir dir;
    auto kv = store::OpenEmbeddedStore(store::TestStoreOptions(dir.path()));
    ASSERT_TRUE(kv.ok()) << kv.status().message();
    for (int i = 0; i < kObjects; ++i) {
      const bool bad = damaged && i == kObjects - 7;  // in the last thread's slice
      auto put = (*kv)->Put({.key = "/registry/configmaps/default/" + name(i),
                             .value = bad ? std::string("{not json") : value(i)});
      ASSERT_TRUE(put.ok());
    }
    Cacher cacher(kv->get(), CacherOptions{});
    WatchCache* cache = cacher.AddResource(ConfigMapsInfo());
    util::Status started = cacher.Start();
    if (damaged) {
      EXPECT_EQ(started.code(), util::Code::kDataLoss) << started.ToString();
      continue;
    }
    ASSERT_TRUE(started.ok()) << started.ToString();
    WatchCache::ListResult all = cache->List({});
    ASSERT_EQ(all.items.size(), size_t{kObjects});
    for (int i = 0; i < kObjects; ++i) {
      const CachedObject& o = *all.items[i];
      ASSERT_EQ(o.name(), name(i));
      EXPECT_EQ(o.compressed(), i % 10 == 0) << o.name();
      json::value got = json::parse(*o.json());
      EXPECT_EQ(got.at("metadata").at("labels").at("app").as_string(), "app-" + std::to_string(i));
      EXPECT_EQ(got.at("metadata").at("resourceVersion").as_string(), std::to_string(o.revision));
    }
    cacher.Stop();
  }
}

TEST_F(WatchCacheTest, EveryWatcherGetsTheSameEncodedBytes) {
  History(1);
  auto w1 = cache_.Watch({}, {.from_revision = 1}, 100);
  auto w2 = cache_.Watch({}, {.from_revision = 1}, 100);
  ASSERT_TRUE(w1.ok() && w2.ok());
  cache_.Apply({PutLabelled("a", "web", 2, 1)}, 2);
  std::vector<WatchItem> a = Drain(**w1), b = Drain(**w2);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].event.get(), b[0].event.get());
  // The frame's object chunk is the cache's one string, not a copy, for every watcher.
  std::vector<std::shared_ptr<const std::string>> fa, fb;
  a[0].event->AppendFrame(a[0].as, &fa);
  b[0].event->AppendFrame(b[0].as, &fb);
  ASSERT_EQ(fa.size(), 3u);
  ASSERT_EQ(fb.size(), 3u);
  for (size_t i = 0; i < fa.size(); ++i) EXPECT_EQ(fa[i].get(), fb[i].get());
  EXPECT_EQ(fa[1].get(), a[0].event->object()->json().get());
  EXPECT_EQ(
      *fa[0] + *fa[1] + *fa[2],
      R"({"type":"MODIFIED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","labels":{"app":"web"},"resourceVersion":"2"}}})"
      "\n");
}

// The write whose bytes the store's event carries: the cache takes the writer's entry (no parse,
// no second encoding), so the writer's response and every watcher share one CachedObject.
void Offer(WatchCache& cache, std::shared_ptr<PendingWrite>* holder, const std::string& name,
           const std::string& app) {
  auto obj = api::Object::Parse(Json(name, app));
  EXPECT_TRUE(obj.ok());
  *holder = std::make_shared<PendingWrite>(ConfigMapsInfo(), "/registry/configmaps/default/" + name,
                                           *obj, EncodeObject(obj->doc()));
  cache.Offer(*holder);
}

TEST_F(WatchCacheTest, AnOfferedWriteBecomesTheCacheEntryItself) {
  History(1);
  auto w = cache_.Watch({}, {.from_revision = 1}, 100);
  ASSERT_TRUE(w.ok());
  std::shared_ptr<PendingWrite> write;
  Offer(cache_, &write, "a", "db");
  // The store keeps the object without resourceVersion: exactly the offered bytes.
  cache_.Apply({PutValue("a", write->json(), 2, 1)}, 2);
  cache_.Withdraw(write);
  CachedObjectPtr entry = write->Entry(2);
  EXPECT_EQ(cache_.Get("/registry/configmaps/default/a").get(), entry.get());
  std::vector<WatchItem> items = Drain(**w);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].event->object().get(), entry.get());
  EXPECT_EQ(*entry->json(),
            R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a",)"
            R"("namespace":"default","labels":{"app":"db"},"resourceVersion":"2"}})");
  EXPECT_EQ(json::serialize(entry->LabelsObject()), R"({"app":"db"})");
}

// The JSON of the newest writes stays at hand after their writers are gone (the writes that
// follow read it without decompressing), for as many versions as recent_json says.
TEST(WatchCacheRecentJsonTest, TheNewestWritesKeepTheirJsonAtHand) {
  WatchCache cache(ConfigMapsInfo(), {.watcher_buffer = 100, .recent_json = 2});
  std::string data;
  for (int i = 0; i < 40; ++i) data += "line " + std::to_string(i) + " of a compressible value\n";
  auto write = [&](const std::string& name, store::Revision rev) -> CachedObjectPtr {
    json::object doc = json::parse(Json(name, "db")).as_object();
    doc["data"] = json::object{{"text", data}};
    api::Object obj(doc);
    auto w = std::make_shared<PendingWrite>(
        ConfigMapsInfo(), "/registry/configmaps/default/" + name, obj, EncodeObject(obj.doc()));
    cache.Offer(w);
    cache.Apply({PutValue(name, w->json(), rev, rev)}, rev);
    CachedObjectPtr entry = w->Entry(rev);
    EXPECT_TRUE(entry->compressed());
    return entry;  // the write is gone
  };
  CachedObjectPtr a = write("a", 2);
  CachedObjectPtr b = write("b", 3);
  ASSERT_NE(a->JsonIfAtHand(), nullptr);
  ASSERT_NE(b->JsonIfAtHand(), nullptr);
  EXPECT_EQ(*a->JsonIfAtHand(), *a->json());
  CachedObjectPtr c = write("c", 4);  // the ring holds two: a's JSON is let go
  EXPECT_EQ(a->JsonIfAtHand(), nullptr);
  EXPECT_NE(b->JsonIfAtHand(), nullptr);
  EXPECT_NE(c->JsonIfAtHand(), nullptr);
  // Decompressed on demand, then no longer held.
  EXPECT_EQ(json::parse(*a->json()).at("metadata").at("resourceVersion"), "2");
  EXPECT_EQ(a->JsonIfAtHand(), nullptr);
}

// A writer that has its answer and lets go of its write before the cache applies the store's
// event: the entry's JSON, held by the write until then, is still what the cache keeps.
TEST(WatchCacheRecentJsonTest, JsonIsKeptWhenTheWriterIsGoneFirst) {
  WatchCache cache(ConfigMapsInfo(), {.watcher_buffer = 100, .recent_json = 2});
  std::string data;
  for (int i = 0; i < 40; ++i) data += "line " + std::to_string(i) + " of a compressible value\n";
  json::object doc = json::parse(Json("a", "db")).as_object();
  doc["data"] = json::object{{"text", data}};
  api::Object obj(doc);
  auto w = std::make_shared<PendingWrite>(ConfigMapsInfo(), "/registry/configmaps/default/a", obj,
                                          EncodeObject(obj.doc()));
  cache.Offer(w);
  const std::string value = w->json();
  CachedObjectPtr answer = w->Entry(2);  // the writer's response
  ASSERT_TRUE(answer->compressed());
  cache.Committed(w, 2);
  w.reset();
  answer.reset();
  cache.Apply({PutValue("a", value, 2, 2)}, 2);
  CachedObjectPtr cached = cache.Get("/registry/configmaps/default/a");
  ASSERT_NE(cached, nullptr);
  ASSERT_NE(cached->JsonIfAtHand(), nullptr) << "the cache let the write take its JSON away";
  EXPECT_EQ(json::parse(*cached->JsonIfAtHand()).at("metadata").at("resourceVersion"), "2");
}

// The newest versions' parsed objects stay alive (recent_objects of them) for in-process
// watchers that read them later than others: a reader that dropped it does not make the next
// one parse it again.
TEST(WatchCacheRecentObjectsTest, TheNewestVersionsKeepTheirParsedObjects) {
  WatchCache cache(ConfigMapsInfo(), {.watcher_buffer = 100, .recent_objects = 3});
  auto write = [&](const std::string& name, store::Revision rev) -> CachedObjectPtr {
    api::Object obj(json::parse(Json(name, "db")).as_object());
    auto w = std::make_shared<PendingWrite>(
        ConfigMapsInfo(), "/registry/configmaps/default/" + name, obj, EncodeObject(obj.doc()));
    w->KeepObjectForReaders(obj);  // the writer's object, handed over
    cache.Offer(w);
    cache.Apply({PutValue(name, w->json(), rev, rev)}, rev);
    return w->Entry(rev);
  };
  auto read = [](const CachedObjectPtr& c) {
    auto got = c->DecodedWithoutManagedFields();
    EXPECT_TRUE(got.ok());
    return std::weak_ptr<const api::Object>(got.ok() ? *got : nullptr);
  };
  CachedObjectPtr a = write("a", 2);
  std::weak_ptr<const api::Object> first = read(a);  // a reader that looks and lets go
  EXPECT_FALSE(first.expired());
  EXPECT_EQ(read(a).lock(), first.lock()) << "the next reader gets the same object";
  CachedObjectPtr b = write("b", 3);
  write("a", 4);  // supersedes a2: its seed is released, the ring still holds it
  EXPECT_FALSE(first.expired());
  write("c", 5);  // the ring holds three: a2 leaves it
  EXPECT_TRUE(first.expired());
  EXPECT_FALSE(read(b).expired()) << "b3 is still in the ring";

  // Without the ring, an object a reader let go is gone.
  WatchCache none(ConfigMapsInfo(), {.watcher_buffer = 100, .recent_objects = 0});
  api::Object obj(json::parse(Json("c", "db")).as_object());
  auto w = std::make_shared<PendingWrite>(ConfigMapsInfo(), "/registry/configmaps/default/c", obj,
                                          EncodeObject(obj.doc()));
  w->KeepObjectForReaders(obj);
  none.Offer(w);
  none.Apply({PutValue("c", w->json(), 2, 2)}, 2);
  EXPECT_TRUE(read(w->Entry(2)).expired());
}

TEST_F(WatchCacheTest, OffersOfOtherBytesOrWithdrawnAreNotTaken) {
  History(1);
  std::shared_ptr<PendingWrite> lost, withdrawn;
  Offer(cache_, &lost, "a", "lost");  // a racing writer whose compare failed
  Offer(cache_, &withdrawn, "a", "db");
  cache_.Withdraw(withdrawn);
  cache_.Apply({PutValue("a", withdrawn->json(), 2, 1)}, 2);
  CachedObjectPtr got = cache_.Get("/registry/configmaps/default/a");
  ASSERT_NE(got, nullptr);
  EXPECT_NE(got.get(), withdrawn->Entry(2).get());  // parsed from the store's bytes instead
  EXPECT_NE(got.get(), lost->Entry(2).get());
  EXPECT_EQ(got->revision, 2);
  EXPECT_EQ(json::serialize(got->LabelsObject()), R"({"app":"db"})");
  cache_.Withdraw(lost);
}

// The writer learns its outcome when the store publishes it, which can be before the cache has
// the event: a committed offer waits for it.
TEST_F(WatchCacheTest, ACommittedOfferIsTakenByTheEventThatArrivesAfterTheWriterIsAnswered) {
  History(1);
  std::shared_ptr<PendingWrite> write;
  Offer(cache_, &write, "a", "db");
  cache_.Committed(write, 2);
  EXPECT_EQ(cache_.offers(), 1u);
  cache_.Apply({PutValue("a", write->json(), 2, 1)}, 2);
  EXPECT_EQ(cache_.Get("/registry/configmaps/default/a").get(), write->Entry(2).get());
  EXPECT_EQ(cache_.offers(), 0u);
}

TEST_F(WatchCacheTest, ACommittedOfferNothingTakesIsDroppedOnceItsRevisionIsApplied) {
  History(1);
  std::shared_ptr<PendingWrite> early, late, reset;
  Offer(cache_, &early, "a", "db");
  Offer(cache_, &late, "b", "db");
  cache_.Committed(early, 2);
  // The store's event carries other bytes (as if another value had been put): not taken.
  cache_.Apply({PutValue("a", Json("a", "other"), 2, 1)}, 2);
  EXPECT_EQ(cache_.offers(), 1u);  // `late` is still in flight
  // Settled after the cache has passed its revision: dropped at once.
  cache_.Committed(late, 2);
  EXPECT_EQ(cache_.offers(), 0u);
  // A relist past the revision drops it too.
  Offer(cache_, &reset, "c", "db");
  cache_.Committed(reset, 5);
  cache_.Reset({}, 6);
  EXPECT_EQ(cache_.offers(), 0u);
}

TEST_F(WatchCacheTest, AnUncommittedOfferStaysUntilItsWriterWithdrawsIt) {
  History(1);
  std::shared_ptr<PendingWrite> write;
  Offer(cache_, &write, "a", "db");
  cache_.Apply({PutValue("b", Json("b", "x"), 2, 1)}, 2);
  EXPECT_EQ(cache_.offers(), 1u);  // its transaction may still commit at a later revision
  cache_.Withdraw(write);
  EXPECT_EQ(cache_.offers(), 0u);
}

TEST_F(WatchCacheTest, DeletedCarriesTheLastStateAtTheDeletionsRevision) {
  History(2);
  auto w = cache_.Watch({}, {.from_revision = 2}, 100);
  ASSERT_TRUE(w.ok());
  store::Event del;
  del.type = store::Event::Type::kDelete;
  auto kv = std::make_shared<store::KeyValue>();
  kv->key = "/registry/configmaps/default/a";
  kv->mod_revision = 3;
  del.kv = kv;
  cache_.Apply({del}, 3);
  std::vector<WatchItem> items = Drain(**w);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].as, WatchEventType::kDeleted);
  EXPECT_EQ(*items[0].event->object()->json(),
            R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a",)"
            R"("namespace":"default","labels":{"app":"web"},"resourceVersion":"3"}})");
  EXPECT_EQ(items[0].event->prev()->revision, 2);
  EXPECT_EQ(cache_.Get("/registry/configmaps/default/a"), nullptr);
}

TEST_F(WatchCacheTest, APageCountsWhatFollowsItInItsNamespaceOrInAll) {
  // ConfigMaps in two namespaces: "a" holds a0..a4, "b" holds b0..b2; then a1 and b0..b2 are
  // deleted (the counts follow deletions, and an emptied namespace counts 0).
  auto put = [](const std::string& ns, const std::string& name, store::Revision rev) {
    store::Event e;
    e.type = store::Event::Type::kPut;
    auto kv = std::make_shared<store::KeyValue>();
    kv->key = "/registry/configmaps/" + ns + "/" + name;
    kv->value = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                R"(","namespace":")" + ns + R"("}})";
    kv->create_revision = kv->mod_revision = rev;
    kv->version = 1;
    e.kv = kv;
    return e;
  };
  auto del = [](const std::string& ns, const std::string& name, store::Revision rev) {
    store::Event e;
    e.type = store::Event::Type::kDelete;
    auto kv = std::make_shared<store::KeyValue>();
    kv->key = "/registry/configmaps/" + ns + "/" + name;
    kv->mod_revision = rev;
    e.kv = kv;
    return e;
  };
  store::Revision rev = 0;
  for (int i = 0; i < 5; ++i) cache_.Apply({put("a", "a" + std::to_string(i), ++rev)}, rev);
  for (int i = 0; i < 3; ++i) cache_.Apply({put("b", "b" + std::to_string(i), ++rev)}, rev);
  cache_.Apply({put("a", "a0", ++rev)}, rev);  // a modification counts nothing new

  auto remaining = [&](const std::string& ns, size_t limit) -> std::optional<int64_t> {
    WatchFilter f;
    f.ns = ns;
    bool more = false;
    WatchCache::ListResult r = cache_.List(f, {}, limit, &more);
    EXPECT_EQ(r.items.size(), more ? limit : r.items.size());
    return r.remaining;
  };
  EXPECT_EQ(remaining("a", 2), 3);
  EXPECT_EQ(remaining("b", 1), 2);
  EXPECT_EQ(remaining("", 3), 5);
  EXPECT_EQ(remaining("a", 5), std::nullopt);  // nothing follows the page
  // A page that starts after the prefix's first object still counts exactly what follows it.
  {
    WatchFilter f;
    f.ns = "a";
    bool more = false;
    WatchCache::ListResult r = cache_.List(f, "/registry/configmaps/a/a1", 2, &more);
    EXPECT_TRUE(more);
    EXPECT_EQ(r.remaining, 2);  // a3, a4
  }

  cache_.Apply({del("a", "a1", ++rev)}, rev);
  for (int i = 0; i < 3; ++i) cache_.Apply({del("b", "b" + std::to_string(i), ++rev)}, rev);
  EXPECT_EQ(remaining("a", 2), 2);
  EXPECT_EQ(remaining("", 1), 3);
  WatchFilter in_b;
  in_b.ns = "b";
  EXPECT_EQ(cache_.List(in_b).items.size(), 0u);
  cache_.Apply({put("b", "b9", ++rev), put("b", "b8", ++rev)}, rev);
  EXPECT_EQ(remaining("b", 1), 1);
  // A reset recounts from what it is given.
  cache_.Reset({}, rev);
  cache_.Apply({put("a", "x", ++rev), put("a", "y", ++rev)}, rev);
  EXPECT_EQ(remaining("a", 1), 1);
  EXPECT_EQ(remaining("", 1), 1);
}

TEST_F(WatchCacheTest, AVersionReplacesItsOwnKeyAndKeysStayInOrder) {
  // Keys that are prefixes of one another, created out of order, then modified and deleted: the
  // cache finds each key exactly (not its neighbour) and lists them in key order.
  store::Revision rev = 0;
  for (const char* name : {"a10", "a1", "a", "a2", "a100"}) {
    ++rev;
    cache_.Apply({PutLabelled(name, "v1", rev, rev)}, rev);
  }
  ++rev;
  cache_.Apply({PutLabelled("a1", "v2", rev, 2)}, rev);
  auto names = [&] {
    std::vector<std::string> out;
    for (const CachedObjectPtr& o : cache_.List({}).items) {
      out.push_back(std::string(o->name()) + ":" +
                    std::string(*PackedLabelValue(o->labels, "app")));
    }
    return out;
  };
  EXPECT_EQ(names(), (std::vector<std::string>{"a:v1", "a1:v2", "a10:v1", "a100:v1", "a2:v1"}));
  EXPECT_EQ(cache_.Get("/registry/configmaps/default/a1")->revision, rev);
  store::Event del;
  del.type = store::Event::Type::kDelete;
  auto kv = std::make_shared<store::KeyValue>();
  kv->key = "/registry/configmaps/default/a10";
  kv->mod_revision = ++rev;
  del.kv = kv;
  cache_.Apply({del}, rev);
  EXPECT_EQ(names(), (std::vector<std::string>{"a:v1", "a1:v2", "a100:v1", "a2:v1"}));
}

// A get finds each key's newest version, and nothing for a key deleted or reset away, through
// creates, modifies, deletes, re-creates and resets (gets are answered from a hash index beside
// the ordered set; both must agree).
TEST_F(WatchCacheTest, GetsFollowEveryChangeOfTheirKey) {
  const std::string prefix = "/registry/configmaps/default/";
  auto del = [&](const std::string& name, store::Revision rev) {
    store::Event e;
    e.type = store::Event::Type::kDelete;
    auto kv = std::make_shared<store::KeyValue>();
    kv->key = prefix + name;
    kv->mod_revision = rev;
    e.kv = kv;
    return e;
  };
  auto revision_of = [&](const std::string& name) -> store::Revision {
    CachedObjectPtr o = cache_.Get(prefix + name);
    return o ? o->revision : 0;
  };
  store::Revision rev = 0;
  for (int i = 0; i < 50; ++i) {
    ++rev;
    cache_.Apply({PutLabelled("k" + std::to_string(i), "v1", rev, rev)}, rev);
  }
  for (int i = 0; i < 50; i += 2) {
    ++rev;
    cache_.Apply({PutLabelled("k" + std::to_string(i), "v2", rev, i + 1)}, rev);
  }
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(revision_of("k" + std::to_string(i)), i % 2 == 0 ? 51 + i / 2 : i + 1) << i;
  }
  ++rev;
  cache_.Apply({del("k7", rev), del("k8", rev)}, rev);
  EXPECT_EQ(revision_of("k7"), 0);
  EXPECT_EQ(revision_of("k8"), 0);
  EXPECT_EQ(revision_of("k9"), 10);
  ++rev;
  cache_.Apply({PutLabelled("k7", "again", rev, rev)}, rev);
  EXPECT_EQ(revision_of("k7"), rev);
  EXPECT_EQ(cache_.size(), 49u);
  // A reset replaces everything: what it does not bring is gone, what it brings is found.
  CachedObjectPtr kept = cache_.Get(prefix + "k9");
  cache_.Reset({kept}, rev);
  EXPECT_EQ(revision_of("k7"), 0);
  EXPECT_EQ(revision_of("k9"), 10);
  ++rev;
  cache_.Apply({PutLabelled("k9", "v3", rev, 10)}, rev);
  EXPECT_EQ(revision_of("k9"), rev);
  // A key the reset dropped comes back as a new entry, listed beside the other.
  ++rev;
  cache_.Apply({PutLabelled("k7", "v4", rev, rev)}, rev);
  EXPECT_EQ(revision_of("k7"), rev);
  EXPECT_EQ(cache_.List({}).items.size(), 2u);
  EXPECT_EQ(cache_.size(), 2u);
}

TEST_F(WatchCacheTest, SelectorsTurnChangesIntoAddedAndDeleted) {
  WatchFilter web;
  ASSERT_TRUE(api::LabelSelector::Parse("app=web").ok());
  web.labels = *api::LabelSelector::Parse("app=web");
  auto w = cache_.Watch(web, {.from_revision = 0}, 100);
  ASSERT_TRUE(w.ok());
  cache_.Apply({PutLabelled("a", "db", 1, 1)}, 1);   // never matched: nothing
  cache_.Apply({PutLabelled("a", "web", 2, 1)}, 2);  // starts matching
  cache_.Apply({PutLabelled("a", "web", 3, 1)}, 3);  // still matching
  cache_.Apply({PutLabelled("a", "db", 4, 1)}, 4);   // stops matching
  EXPECT_EQ(Types(Drain(**w)),
            (std::vector<std::string>{"ADDED a@2", "MODIFIED a@3", "DELETED a@4"}));
}

TEST_F(WatchCacheTest, InitialEventsThenTheirEndBookmark) {
  cache_.Apply({PutLabelled("a", "web", 1, 1)}, 1);
  cache_.Apply({PutLabelled("b", "web", 2, 2)}, 2);
  auto w = cache_.Watch({}, {.bookmarks = true, .initial_events_end_bookmark = true}, 100);
  ASSERT_TRUE(w.ok());
  std::vector<WatchItem> items = Drain(**w);
  EXPECT_EQ(Types(items), (std::vector<std::string>{"ADDED a@1", "ADDED b@2", "BOOKMARK"}));
  ASSERT_EQ(items.size(), 3u);
  EXPECT_TRUE(items[2].initial_events_end);
  EXPECT_EQ(items[2].bookmark_revision, 2);
}

// `e` as the store's watch reports it with prev_kv: carrying the value `prev` put.
store::Event WithPrev(store::Event e, const store::Event& prev) {
  e.prev_kv = prev.kv;
  return e;
}

store::Event Delete(const std::string& name, store::Revision revision) {
  store::Event del;
  del.type = store::Event::Type::kDelete;
  auto kv = std::make_shared<store::KeyValue>();
  kv->key = "/registry/configmaps/default/" + name;
  kv->mod_revision = revision;
  del.kv = kv;
  return del;
}

TEST(HistoryOnlyWatchCacheTest, KeepsNoObjectsAndTakesThePreviousStateFromTheStoresEvent) {
  WatchCache cache(ConfigMapsInfo(),
                   {.history_capacity = 5, .watcher_buffer = 100, .keep_objects = false});
  auto loaded = CachedObject::FromKeyValue(*ConfigMapsInfo(), *PutLabelled("z", "web", 1, 1).kv);
  ASSERT_TRUE(loaded.ok());
  cache.Reset({*loaded}, 1);
  WatchFilter web;
  web.labels = *api::LabelSelector::Parse("app=web");
  auto w = cache.Watch(web, {.from_revision = 1}, 100);
  ASSERT_TRUE(w.ok());
  cache.Apply({PutLabelled("a", "web", 2, 2)}, 2);
  cache.Apply({WithPrev(PutLabelled("a", "web", 3, 2), PutLabelled("a", "web", 2, 2))}, 3);
  cache.Apply({WithPrev(PutLabelled("a", "db", 4, 2), PutLabelled("a", "web", 3, 2))},
              4);  // leaves the selector
  cache.Apply({WithPrev(PutLabelled("a", "web", 5, 2), PutLabelled("a", "db", 4, 2))},
              5);  // comes back
  cache.Apply({WithPrev(Delete("a", 6), PutLabelled("a", "web", 5, 2))}, 6);
  cache.Apply({Delete("never-seen", 7)}, 7);  // no previous state: nothing to say
  std::vector<WatchItem> items = Drain(**w);
  EXPECT_EQ(Types(items), (std::vector<std::string>{"ADDED a@2", "MODIFIED a@3", "DELETED a@4",
                                                    "ADDED a@5", "DELETED a@6"}));
  ASSERT_EQ(items.size(), 5u);
  EXPECT_EQ(items[1].event->prev()->revision, 2);
  EXPECT_EQ(items[4].event->prev()->revision, 5);
  // Neither the loaded object nor any written one is kept.
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(cache.List({}).items.empty());
  EXPECT_EQ(cache.Get("/registry/configmaps/default/z"), nullptr);
  EXPECT_EQ(cache.revision(), 7);

  // A watch that starts with the current state is handed it (read from the store at 7), then
  // gets the changes after 7.
  auto b = CachedObject::FromKeyValue(*ConfigMapsInfo(), *PutLabelled("b", "web", 7, 7).kv);
  auto c = CachedObject::FromKeyValue(*ConfigMapsInfo(), *PutLabelled("c", "db", 7, 7).kv);
  ASSERT_TRUE(b.ok() && c.ok());
  auto w2 = cache.Watch(web,
                        {.from_revision = 7,
                         .bookmarks = true,
                         .initial_events_end_bookmark = true,
                         .initial_objects = std::vector<CachedObjectPtr>{*b, *c}},
                        100);
  ASSERT_TRUE(w2.ok());
  cache.Apply({PutLabelled("d", "web", 8, 8)}, 8);
  items = Drain(**w2);
  EXPECT_EQ(Types(items), (std::vector<std::string>{"ADDED b@7", "BOOKMARK", "ADDED d@8"}));
  ASSERT_EQ(items.size(), 3u);
  EXPECT_TRUE(items[1].initial_events_end);
  EXPECT_EQ(items[1].bookmark_revision, 7);
}

TEST_F(WatchCacheTest, PeriodicBookmarksOnlyForWatchersThatAskAndOnlyWhenDue) {
  History(3);
  auto with = cache_.Watch({}, {.from_revision = 3, .bookmarks = true}, 100);
  auto without = cache_.Watch({}, {.from_revision = 3}, 100);
  ASSERT_TRUE(with.ok() && without.ok());
  const auto t0 = (*with)->last_bookmark;
  const std::chrono::milliseconds interval(60000);
  cache_.Tick(t0 + std::chrono::seconds(59), interval);  // not due yet
  EXPECT_TRUE(Drain(**with).empty());
  cache_.Tick(t0 + std::chrono::seconds(60), interval);
  std::vector<WatchItem> items = Drain(**with);
  ASSERT_EQ(Types(items), std::vector<std::string>{"BOOKMARK"});
  EXPECT_EQ(items[0].bookmark_revision, 3);
  EXPECT_FALSE(items[0].initial_events_end);
  EXPECT_TRUE(Drain(**without).empty());
  cache_.Tick(t0 + std::chrono::seconds(61), interval);  // the next one is an interval later
  EXPECT_TRUE(Drain(**with).empty());
}

TEST_F(WatchCacheTest, ASlowWatcherIsEndedWithoutHoldingUpTheOthers) {
  WatchCache cache(ConfigMapsInfo(), {.history_capacity = 100, .watcher_buffer = 3});
  auto slow = cache.Watch({}, {.from_revision = 0}, 3);
  auto fast = cache.Watch({}, {.from_revision = 0}, 3);
  ASSERT_TRUE(slow.ok() && fast.ok());
  std::vector<std::string> seen;
  // The dispatcher applies 10 revisions; only one watcher keeps up. Apply never waits.
  for (int r = 1; r <= 10; ++r) {
    cache.Apply({PutLabelled("a", "web", r, 1)}, r);
    for (const std::string& t : Types(Drain(**fast))) seen.push_back(t);
  }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_FALSE((*fast)->terminated());
  EXPECT_TRUE((*slow)->terminated());
  // The slow one gets what fit in its buffer, then its stream ends (clients resume from there).
  bool ended = false;
  std::vector<WatchItem> rest = Drain(**slow, &ended);
  EXPECT_LE(rest.size(), 3u);
  EXPECT_TRUE(ended || Drain(**slow, &ended).empty());
  EXPECT_TRUE(ended);
}

}  // namespace
}  // namespace converge::apiserver
