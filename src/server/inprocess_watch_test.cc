// In-process watches of a real API server (embedded store in a temporary directory): every
// in-process watcher receives the watch cache's one decoded object per change (not a copy of its
// own), read-modify-writes that start from the cache's version stay correct when the cache lags
// the store (its watch held back), and all of it holds under concurrent writers and watchers (this
// suite runs under TSan).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "api/object.h"
#include "apiserver/server.h"
#include "client/watch.h"
#include "server/inprocess_transport.h"
#include "store/embedded_store.h"
#include "store/gated_kv_test_util.h"
#include "store/store_test_util.h"

namespace converge::server {
namespace {

namespace json = boost::json;

constexpr char kConfigMaps[] = "/api/v1/namespaces/default/configmaps";

class InProcessWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    auto kv = store::OpenEmbeddedStore({.dir = dir_.path()});
    ASSERT_TRUE(kv.ok()) << kv.status().message();
    kv_ = std::make_unique<store::GatedKV>(std::move(*kv), &gate_);
    apiserver::APIServerOptions options;
    options.kv = kv_.get();
    options.compaction_interval = std::chrono::milliseconds(0);
    server_ = std::make_unique<apiserver::APIServer>(options);
    ASSERT_TRUE(server_->Start().ok());
    transport_ = std::make_unique<InProcessTransport>(
        [this](apiserver::Request& r) { return server_->Handle(r); });
  }
  void TearDown() override {
    gate_.Open();
    transport_.reset();
    if (server_) server_->Stop();
  }

  // The object the server answered with (null on an error status).
  api::ObjectPtr Write(const std::string& method, const std::string& path, std::string body,
                       const std::string& content_type = "application/json") {
    auto resp = transport_->Do({.method = method,
                                .path = path,
                                .headers = {{"content-type", content_type}},
                                .body = std::move(body)});
    EXPECT_TRUE(resp.ok());
    if (!resp.ok() || resp->status >= 300) {
      ADD_FAILURE() << method << " " << path << ": " << (resp.ok() ? resp->body : "");
      return nullptr;
    }
    auto obj = api::Object::Parse(resp->body);
    EXPECT_TRUE(obj.ok());
    return obj.ok() ? std::make_shared<const api::Object>(std::move(*obj)) : nullptr;
  }
  api::ObjectPtr Create(const std::string& name, const std::string& data) {
    return Write("POST", kConfigMaps,
                 R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                     R"("},"data":{"v":")" + data + R"("}})");
  }

  // A watch of the ConfigMaps from `resource_version` through `through` (default: transport_).
  std::unique_ptr<client::Watcher> Watch(const std::string& resource_version,
                                         InProcessTransport* through = nullptr) {
    if (through == nullptr) through = transport_.get();
    auto resp = through->Stream(
        {.path = kConfigMaps, .query = {{"watch", "true"}, {"resourceVersion", resource_version}}});
    EXPECT_TRUE(resp.ok());
    if (!resp.ok()) return nullptr;
    EXPECT_EQ(resp->status, 200);
    return std::make_unique<client::StreamWatcher>(std::move(resp->body));
  }

  // The object of the watch's next event (null, and a failure, when there is none).
  static api::ObjectPtr NextObject(client::Watcher& w) {
    auto e = w.Next();
    EXPECT_TRUE(e.ok() && e->has_value());
    return e.ok() && e->has_value() ? (*e)->object : nullptr;
  }

  store::TempDir dir_;
  store::WatchGate gate_;
  std::unique_ptr<store::KV> kv_;
  std::unique_ptr<apiserver::APIServer> server_;
  std::unique_ptr<InProcessTransport> transport_;
};

TEST_F(InProcessWatchTest, EveryInProcessWatcherSharesTheCachesDecodedObject) {
  api::ObjectPtr first = Create("seed", "0");
  ASSERT_NE(first, nullptr);
  const std::string from(first->resource_version());
  auto w1 = Watch(from);
  auto w2 = Watch(from);
  ASSERT_TRUE(w1 && w2);
  api::ObjectPtr created = Create("a", "1");
  ASSERT_NE(created, nullptr);

  auto e1 = w1->Next();
  auto e2 = w2->Next();
  ASSERT_TRUE(e1.ok() && e2.ok());
  ASSERT_TRUE(e1->has_value() && e2->has_value());
  EXPECT_EQ((*e1)->type, client::EventType::kAdded);
  EXPECT_EQ((*e2)->type, client::EventType::kAdded);
  // One parsed object for both watchers: the informers of the all-in-one server hold one copy.
  EXPECT_EQ((*e1)->object.get(), (*e2)->object.get());
  // It is the object as HTTP clients receive it.
  EXPECT_EQ((*e1)->object->doc(), created->doc());
  EXPECT_EQ((*e1)->object->resource_version(), created->resource_version());

  // A later watcher still gets that object while someone holds it.
  auto w3 = Watch(from);
  ASSERT_TRUE(w3);
  auto e3 = w3->Next();
  ASSERT_TRUE(e3.ok() && e3->has_value());
  EXPECT_EQ((*e3)->object.get(), (*e1)->object.get());

  // DELETED carries the last state at the deletion's revision.
  auto del = transport_->Do({.method = "DELETE", .path = std::string(kConfigMaps) + "/a"});
  ASSERT_TRUE(del.ok());
  ASSERT_EQ(del->status, 200) << del->body;
  auto d1 = w1->Next();
  ASSERT_TRUE(d1.ok() && d1->has_value());
  EXPECT_EQ((*d1)->type, client::EventType::kDeleted);
  EXPECT_EQ((*d1)->object->name(), "a");
  EXPECT_GT(std::stoll(std::string((*d1)->object->resource_version())),
            std::stoll(std::string(created->resource_version())));
}

// The managers named in an object's metadata.managedFields, and whether each owns data.<key>.
std::vector<std::string> Managers(const json::object& doc) {
  std::vector<std::string> out;
  const json::value* mf = api::Find(doc, {"metadata", "managedFields"});
  if (mf == nullptr) return out;
  for (const json::value& e : mf->as_array()) {
    out.push_back(std::string(e.at("manager").as_string()));
  }
  return out;
}
bool Owns(const json::object& doc, const std::string& manager, const std::string& data_key) {
  const json::value* mf = api::Find(doc, {"metadata", "managedFields"});
  if (mf == nullptr) return false;
  for (const json::value& e : mf->as_array()) {
    if (e.at("manager").as_string() != manager) continue;
    const json::value* f = api::Find(e.as_object(), {"fieldsV1", "f:data", "f:" + data_key});
    if (f != nullptr) return true;
  }
  return false;
}

TEST_F(InProcessWatchTest, LeanWatchesShareObjectsWithoutManagedFieldsAndUpdatesKeepTheStoredOnes) {
  InProcessTransport lean([this](apiserver::Request& r) { return server_->Handle(r); },
                          {.watch_without_managed_fields = true});
  api::ObjectPtr seed = Create("seed", "0");
  ASSERT_NE(seed, nullptr);
  const std::string from(seed->resource_version());
  auto lean1 = Watch(from, &lean);
  auto lean2 = Watch(from, &lean);
  auto full = Watch(from);

  auto created = transport_->Do(
      {.method = "POST",
       .path = kConfigMaps,
       .query = {{"fieldManager", "alice"}},
       .headers = {{"content-type", "application/json"}},
       .body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned"},)"
               R"("data":{"v":"1"}})"});
  ASSERT_TRUE(created.ok());
  ASSERT_EQ(created->status, 201) << created->body;

  api::ObjectPtr l1 = NextObject(*lean1);
  api::ObjectPtr l2 = NextObject(*lean2);
  api::ObjectPtr f = NextObject(*full);
  ASSERT_TRUE(l1 && l2 && f);
  // Lean watchers share one object without managedFields; a plain watcher gets them.
  EXPECT_EQ(l1.get(), l2.get());
  EXPECT_EQ(api::Find(l1->doc(), {"metadata", "managedFields"}), nullptr);
  EXPECT_EQ(Managers(f->doc()), std::vector<std::string>{"alice"});
  // Apart from managedFields it is the same object.
  json::object stripped = f->doc();
  stripped["metadata"].as_object().erase("managedFields");
  EXPECT_EQ(l1->doc(), stripped);

  // A GET, even through the lean transport, answers the whole object.
  const std::string path = std::string(kConfigMaps) + "/owned";
  auto got = lean.Do({.path = path});
  ASSERT_TRUE(got.ok());
  auto got_obj = api::Object::Parse(got->body);
  ASSERT_TRUE(got_obj.ok());
  EXPECT_EQ(Managers(got_obj->doc()), std::vector<std::string>{"alice"});

  // A controller updating the object its informer holds (no managedFields) keeps alice's
  // ownership: an update without managedFields starts from the stored ones (as upstream).
  api::Object changed = *l1;
  changed.mutable_doc()["data"].as_object()["w"] = "2";
  auto put = lean.Do({.method = "PUT",
                      .path = path,
                      .query = {{"fieldManager", "bob"}},
                      .headers = {{"content-type", "application/json"}},
                      .body = json::serialize(changed.doc())});
  ASSERT_TRUE(put.ok());
  ASSERT_EQ(put->status, 200) << put->body;
  got = transport_->Do({.path = path});
  ASSERT_TRUE(got.ok());
  got_obj = api::Object::Parse(got->body);
  ASSERT_TRUE(got_obj.ok());
  EXPECT_EQ(Managers(got_obj->doc()), (std::vector<std::string>{"alice", "bob"}));
  EXPECT_TRUE(Owns(got_obj->doc(), "alice", "v"));
  EXPECT_TRUE(Owns(got_obj->doc(), "bob", "w"));
  EXPECT_FALSE(Owns(got_obj->doc(), "bob", "v"));

  // The update's event: lean again for the lean watcher, whole for the plain one.
  api::ObjectPtr l_mod = NextObject(*lean1);
  api::ObjectPtr f_mod = NextObject(*full);
  ASSERT_TRUE(l_mod && f_mod);
  EXPECT_EQ(api::Find(l_mod->doc(), {"metadata", "managedFields"}), nullptr);
  EXPECT_EQ(Managers(f_mod->doc()), (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(api::FindString(l_mod->doc(), {"data", "w"}), "2");
}

// The value of one series of the server's /metrics (0 when it is not there yet).
double MetricValue(InProcessTransport& transport, const std::string& series) {
  auto resp = transport.Do({.path = "/metrics"});
  EXPECT_TRUE(resp.ok() && resp->status == 200);
  if (!resp.ok()) return -1;
  const std::string& text = resp->body;
  for (size_t at = text.find(series + " "); at != std::string::npos;
       at = text.find(series + " ", at + 1)) {
    if (at == 0 || text[at - 1] == '\n') return std::stod(text.substr(at + series.size() + 1));
  }
  return 0;
}

constexpr char kFromWriter[] = R"(apiserver_watch_cache_decoded_objects_total{source="writer"})";
constexpr char kParsed[] = R"(apiserver_watch_cache_decoded_objects_total{source="parsed"})";

TEST_F(InProcessWatchTest, LeanWatchersGetTheWritersObjectInsteadOfParsingTheBytes) {
  InProcessTransport lean([this](apiserver::Request& r) { return server_->Handle(r); },
                          {.watch_without_managed_fields = true});
  api::ObjectPtr first = Create("first", "0");
  ASSERT_NE(first, nullptr);
  const std::string from(first->resource_version());
  auto leaner = Watch(from, &lean);
  auto full = Watch(from);
  const double writer_before = MetricValue(*transport_, kFromWriter);
  const double parsed_before = MetricValue(*transport_, kParsed);

  // What parsing the bytes would have given: the whole object without managedFields, at its own
  // resourceVersion. Each write is answered before the watchers read its event.
  auto check_next_event = [&](const std::string& what) {
    api::ObjectPtr l = NextObject(*leaner);
    api::ObjectPtr f = NextObject(*full);
    ASSERT_TRUE(l && f) << what;
    json::object stripped = f->doc();
    stripped["metadata"].as_object().erase("managedFields");
    EXPECT_EQ(l->doc(), stripped) << what;
    EXPECT_EQ(l->resource_version(), f->resource_version()) << what;
  };
  ASSERT_NE(Create("a", "1"), nullptr);
  check_next_event("create");
  ASSERT_NE(Write("PATCH", std::string(kConfigMaps) + "/a", R"({"data":{"w":"2"}})",
                  "application/merge-patch+json"),
            nullptr);
  check_next_event("merge patch");
  api::ObjectPtr current = Write("GET", std::string(kConfigMaps) + "/a", "");
  ASSERT_NE(current, nullptr);
  api::Object replaced = *current;
  replaced.mutable_doc()["data"].as_object()["v"] = "3";
  ASSERT_NE(Write("PUT", std::string(kConfigMaps) + "/a", json::serialize(replaced.doc())),
            nullptr);
  check_next_event("update");
  EXPECT_EQ(MetricValue(*transport_, kFromWriter) - writer_before, 3);
  EXPECT_EQ(MetricValue(*transport_, kParsed) - parsed_before, 0);

  // With no lean watcher, writers leave nothing behind: a lean watcher that starts later parses.
  leaner.reset();
  full.reset();
  api::ObjectPtr late = Create("late", "4");
  ASSERT_NE(late, nullptr);
  auto again = Watch(std::string(first->resource_version()), &lean);
  api::ObjectPtr seen;
  for (int i = 0; i < 4; ++i) seen = NextObject(*again);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->name(), "late");
  EXPECT_EQ(MetricValue(*transport_, kFromWriter) - writer_before, 3);
  EXPECT_GE(MetricValue(*transport_, kParsed) - parsed_before, 1);
}

TEST_F(InProcessWatchTest, EventsAreReadFromTheStoreAndWatchedFromTheCachesHistory) {
  constexpr char kEvents[] = "/api/v1/namespaces/default/events";
  auto create_event = [&](const std::string& name, const std::string& pod) {
    return Write("POST", kEvents,
                 R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")" + name +
                     R"("},"involvedObject":{"kind":"Pod","namespace":"default","name":")" + pod +
                     R"("},"reason":"Test","message":"m","type":"Normal","count":1})");
  };
  auto watch = [&](std::vector<std::pair<std::string, std::string>> query) {
    query.emplace_back("watch", "true");
    query.emplace_back("fieldSelector", "involvedObject.name=pod-a");
    auto resp = transport_->Stream({.path = kEvents, .query = std::move(query)});
    EXPECT_TRUE(resp.ok() && resp->status == 200);
    return std::make_unique<client::StreamWatcher>(std::move(resp->body));
  };
  auto next = [](client::Watcher& w) -> std::string {
    auto e = w.Next();
    if (!e.ok() || !e->has_value()) return "end";
    const client::WatchEvent& ev = **e;
    std::string type = ev.type == client::EventType::kAdded      ? "ADDED"
                       : ev.type == client::EventType::kModified ? "MODIFIED"
                       : ev.type == client::EventType::kDeleted  ? "DELETED"
                                                                 : "OTHER";
    return type + " " + std::string(ev.object->name()) +
           " count=" + json::serialize(ev.object->doc().at("count"));
  };
  ASSERT_NE(create_event("ev1", "pod-a"), nullptr);
  ASSERT_NE(create_event("ev2", "pod-b"), nullptr);
  // The watch cache keeps no Events (upstream's default): lists and gets read the store.
  apiserver::WatchCache* cache = server_->cacher()->ForPrefix("/registry/events");
  ASSERT_NE(cache, nullptr);
  EXPECT_FALSE(cache->keeps_objects());
  EXPECT_EQ(cache->size(), 0u);
  for (const std::string rv : {"", "0"}) {
    auto list = transport_->Do(
        {.path = kEvents,
         .query = {{"fieldSelector", "involvedObject.name=pod-a"}, {"resourceVersion", rv}}});
    ASSERT_TRUE(list.ok());
    ASSERT_EQ(list->status, 200) << list->body;
    json::value doc = json::parse(list->body);
    ASSERT_EQ(doc.at("items").as_array().size(), 1u) << "resourceVersion=" << rv;
    EXPECT_EQ(doc.at("items").at(0).at("metadata").at("name"), "ev1");
    EXPECT_NE(doc.at("metadata").at("resourceVersion").as_string(), "0");
    auto got =
        transport_->Do({.path = std::string(kEvents) + "/ev2", .query = {{"resourceVersion", rv}}});
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->status, 200) << "resourceVersion=" << rv << ": " << got->body;
  }
  auto all = transport_->Do({.path = kEvents});
  ASSERT_TRUE(all.ok());
  json::value listed = json::parse(all->body);
  EXPECT_EQ(listed.at("items").as_array().size(), 2u);
  const std::string list_rv(listed.at("metadata").at("resourceVersion").as_string());

  // A watch without a resourceVersion starts with the current state; one from the list's
  // resourceVersion (kubectl get -w) with what follows it.
  auto from_now = watch({});
  auto from_list = watch({{"resourceVersion", list_rv}});
  EXPECT_EQ(next(*from_now), "ADDED ev1 count=1");
  ASSERT_NE(Write("PATCH", std::string(kEvents) + "/ev1", R"({"count":2})",
                  "application/merge-patch+json"),
            nullptr);
  ASSERT_NE(create_event("ev3", "pod-b"), nullptr);  // not selected
  ASSERT_NE(create_event("ev4", "pod-a"), nullptr);
  auto del = transport_->Do({.method = "DELETE", .path = std::string(kEvents) + "/ev1"});
  ASSERT_TRUE(del.ok());
  ASSERT_EQ(del->status, 200) << del->body;
  for (auto* w : {from_now.get(), from_list.get()}) {
    EXPECT_EQ(next(*w), "MODIFIED ev1 count=2");
    EXPECT_EQ(next(*w), "ADDED ev4 count=1");
    EXPECT_EQ(next(*w), "DELETED ev1 count=2");  // the last state
  }
  EXPECT_EQ(cache->size(), 0u);
}

TEST_F(InProcessWatchTest, WritesStartingFromALaggingCacheStillApplyToTheStoredObject) {
  api::ObjectPtr created = Create("lag", "0");
  ASSERT_NE(created, nullptr);
  const std::string path = std::string(kConfigMaps) + "/lag";
  // A get at the create's resourceVersion is served once the cache holds it.
  auto cached = transport_->Do(
      {.path = path, .query = {{"resourceVersion", std::string(created->resource_version())}}});
  ASSERT_TRUE(cached.ok());
  ASSERT_EQ(cached->status, 200) << cached->body;
  gate_.Close();  // from here on the cache holds "0" while the store moves on
  api::ObjectPtr first =
      Write("PATCH", path, R"({"data":{"a":"1"}})", "application/merge-patch+json");
  ASSERT_NE(first, nullptr);
  // Starts from the cache's stale version: the store's compare refutes it, the retry reads the
  // store, and the patch lands on the first one.
  api::ObjectPtr second =
      Write("PATCH", path, R"({"data":{"b":"2"}})", "application/merge-patch+json");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(json::serialize(second->doc().at("data")), R"({"v":"0","a":"1","b":"2"})");
  // A precondition the stale version fails but the store's passes: decided again from the store.
  auto del = transport_->Do({.method = "DELETE",
                             .path = path,
                             .headers = {{"content-type", "application/json"}},
                             .body = R"({"preconditions":{"resourceVersion":")" +
                                     std::string(second->resource_version()) + R"("}})"});
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->status, 200) << del->body;
  auto gone = transport_->Do({.method = "GET", .path = path});
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->status, 404) << gone->body;
  gate_.Open();
}

TEST_F(InProcessWatchTest, ConcurrentWritersAndWatchersSeeEveryChangeInOrder) {
  constexpr int kWriters = 3;
  constexpr int kUpdates = 40;
  constexpr int kWatchers = 3;
  api::ObjectPtr seed = Create("seed", "0");
  ASSERT_NE(seed, nullptr);
  for (int w = 0; w < kWriters; ++w) ASSERT_NE(Create("c" + std::to_string(w), "0"), nullptr);
  const std::string from(seed->resource_version());

  std::vector<std::unique_ptr<client::Watcher>> watchers;
  for (int i = 0; i < kWatchers; ++i) {
    watchers.push_back(Watch(from));
    ASSERT_NE(watchers.back(), nullptr);
  }
  // Each watcher reads every event and reads the shared objects while others do too.
  constexpr int kExpected = kWriters + kWriters * kUpdates;  // creates, then updates
  std::vector<std::vector<std::string>> seen(kWatchers);
  std::vector<std::thread> readers;
  for (int i = 0; i < kWatchers; ++i) {
    readers.emplace_back([&, i] {
      long long last = 0;
      while (static_cast<int>(seen[i].size()) < kExpected) {
        auto e = watchers[i]->Next();
        if (!e.ok() || !e->has_value()) return;
        const api::Object& obj = *(*e)->object;
        long long rv = std::stoll(std::string(obj.resource_version()));
        if (rv <= last) return;  // out of order: the size check below fails
        last = rv;
        seen[i].push_back(std::string(obj.name()) + "=" +
                          std::string(api::FindString(obj.doc(), {"data", "v"})));
      }
    });
  }
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      // Appended, not `std::string(kConfigMaps) + "/c" + ...`: on that, in a unity batch of the
      // TSan build, GCC 12 reports a false -Warray-bounds (docs/PERFORMANCE.md, "Build and CI
      // time").
      std::string path(kConfigMaps);
      path.append("/c").append(std::to_string(w));
      for (int u = 1; u <= kUpdates; ++u) {
        // Merge patches (read-modify-write from the cache's shared version) and plain updates.
        if (u % 2 == 0) {
          Write("PATCH", path, R"({"data":{"v":")" + std::to_string(u) + R"("}})",
                "application/merge-patch+json");
        } else {
          Write("PUT", path,
                R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c)" +
                    std::to_string(w) + R"("},"data":{"v":")" + std::to_string(u) + R"("}})");
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  for (auto& t : readers) t.join();
  for (int i = 0; i < kWatchers; ++i) {
    ASSERT_EQ(seen[i].size(), static_cast<size_t>(kExpected)) << "watcher " << i;
    EXPECT_EQ(seen[i], seen[0]) << "watcher " << i;
    for (int w = 0; w < kWriters; ++w) {  // each object's changes in the order they were made
      std::vector<std::string> mine;
      const std::string prefix = "c" + std::to_string(w) + "=";
      for (const std::string& s : seen[i]) {
        if (s.starts_with(prefix)) mine.push_back(s.substr(prefix.size()));
      }
      ASSERT_EQ(mine.size(), static_cast<size_t>(kUpdates + 1));
      for (int u = 0; u <= kUpdates; ++u) EXPECT_EQ(mine[u], std::to_string(u));
    }
  }
}

}  // namespace
}  // namespace converge::server
