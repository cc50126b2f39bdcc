#include "client/event_recorder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/api_errors.h"

namespace converge::client {
namespace {

// The map keeps the most recently used entries: Find and Put (of a new or a known key) use an
// entry; the least recently used goes when a new key would exceed the capacity; Erase frees a
// slot (the last slot moves into it) without disturbing the order of the others.
TEST(LruMapTest, KeepsTheMostRecentlyUsedEntries) {
  LruMap<int> m(3);
  m.Put(1, 10);
  m.Put(2, 20);
  m.Put(3, 30);
  ASSERT_NE(m.Find(1), nullptr);  // 1 is now the most recent: 2 is the least
  m.Put(4, 40);
  EXPECT_EQ(m.Find(2), nullptr);
  EXPECT_EQ(m.size(), 3u);
  m.Put(3, 31);  // a known key: updated and used
  m.Put(5, 50);  // evicts 1 (the order of use is 1, 4, 3, then 5)
  EXPECT_EQ(m.Find(1), nullptr);
  ASSERT_NE(m.Find(3), nullptr);
  EXPECT_EQ(*m.Find(3), 31);
  ASSERT_NE(m.Find(4), nullptr);
  EXPECT_EQ(*m.Find(4), 40);

  // Order of use now 5, 3, 4 (least recent first). Erasing 3 leaves 5 and 4 in that order.
  m.Find(5);
  m.Find(3);
  m.Find(4);
  m.Erase(3);
  m.Erase(99);  // absent: nothing happens
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.Find(3), nullptr);
  m.Put(6, 60);
  m.Put(7, 70);  // evicts 5, the least recent
  EXPECT_EQ(m.Find(5), nullptr);
  EXPECT_EQ(*m.Find(4), 40);
  EXPECT_EQ(*m.Find(6), 60);
  EXPECT_EQ(*m.Find(7), 70);
}

// Random operations against a model (a list of keys in order of use): the same entries, the
// same values, the same evictions, with erasures that move slots around.
TEST(LruMapTest, MatchesAModelUnderRandomOperations) {
  constexpr size_t kCapacity = 16;
  LruMap<uint64_t> m(kCapacity);
  std::vector<std::pair<uint64_t, uint64_t>> model;  // most recent first
  auto model_find = [&](uint64_t k) {
    return std::find_if(model.begin(), model.end(), [k](const auto& e) { return e.first == k; });
  };
  uint64_t seed = 42;
  auto next = [&seed] {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    return seed >> 33;
  };
  for (int step = 0; step < 20000; ++step) {
    const uint64_t key = next() % 40;
    const uint64_t op = next() % 3;
    auto it = model_find(key);
    if (op == 0) {
      uint64_t* v = m.Find(key);
      ASSERT_EQ(v != nullptr, it != model.end()) << "step " << step;
      if (v == nullptr) continue;
      ASSERT_EQ(*v, it->second) << "step " << step;
      std::rotate(model.begin(), it, it + 1);
    } else if (op == 1) {
      const uint64_t value = next();
      m.Put(key, value);
      if (it != model.end()) model.erase(it);
      model.insert(model.begin(), {key, value});
      if (model.size() > kCapacity) model.pop_back();
    } else {
      m.Erase(key);
      if (it != model.end()) model.erase(it);
    }
    ASSERT_EQ(m.size(), model.size()) << "step " << step;
  }
  for (const auto& [k, v] : model) {
    ASSERT_NE(m.Find(k), nullptr);
    EXPECT_EQ(*m.Find(k), v);
  }
}

// An in-memory sink: remembers Events by name, applies patches to count/lastTimestamp/message.
class RecordingSink final : public EventSink {
 public:
  util::StatusOr<api::Object> Create(const api::Object& event) override {
    calls.push_back("create " + std::string(event.name()));
    if (fail_next) {
      fail_next = false;
      return util::Unavailable("connection refused");
    }
    api::Object stored = event;
    stored.set_resource_version(std::to_string(++rv));
    events[std::string(event.name())] = stored;
    return stored;
  }
  util::StatusOr<api::Object> Patch(const api::Object& event, std::string_view patch) override {
    calls.push_back("patch " + std::string(event.name()) + " " + std::string(patch));
    patched_namespaces.emplace_back(event.namespace_());
    auto it = events.find(std::string(event.name()));
    if (it == events.end()) {
      return util::NotFound("events \"" + std::string(event.name()) + "\" not found")
          .WithReason("NotFound");
    }
    boost::json::object p = boost::json::parse(patch).as_object();
    for (const auto& [k, v] : p) it->second.mutable_doc()[k] = v;
    return it->second;
  }

  std::vector<std::string> calls;
  std::vector<std::string> patched_namespaces;
  std::map<std::string, api::Object> events;
  bool fail_next = false;
  int rv = 0;
};

api::Object Pod() {
  api::Object o;
  o.SetGvk({"", "v1", "Pod"});
  o.set_namespace("team");
  o.set_name("web-1");
  o.set_uid("u-1");
  o.set_resource_version("42");
  return o;
}

TEST(EventRecorderTest, WritesACoreV1EventAsUpstreamDoes) {
  util::FakeClock clock;
  RecordingSink sink;
  EventRecorder rec(
      {.source = {"replicaset-controller", "node-a"}, .sink = &sink, .clock = &clock});
  rec.Event(Pod(), kEventTypeWarning, "FailedCreate", "quota exceeded");
  rec.Flush();
  ASSERT_EQ(sink.events.size(), 1u);
  const api::Object& ev = sink.events.begin()->second;
  EXPECT_EQ(ev.kind(), "Event");
  EXPECT_EQ(ev.api_version(), "v1");
  EXPECT_EQ(ev.namespace_(), "team");
  // "<name>.<unix nanos in hex>": the fake clock starts at 2025-01-01T00:00:00Z.
  EXPECT_EQ(ev.name(), "web-1.1816687ec0570000");
  const boost::json::object& d = ev.doc();
  EXPECT_EQ(api::FindString(d, {"involvedObject", "kind"}), "Pod");
  EXPECT_EQ(api::FindString(d, {"involvedObject", "uid"}), "u-1");
  EXPECT_EQ(api::FindString(d, {"involvedObject", "apiVersion"}), "v1");
  EXPECT_EQ(api::FindString(d, {"involvedObject", "resourceVersion"}), "42");
  EXPECT_EQ(api::FindString(d, {"reason"}), "FailedCreate");
  EXPECT_EQ(api::FindString(d, {"message"}), "quota exceeded");
  EXPECT_EQ(api::FindString(d, {"type"}), "Warning");
  EXPECT_EQ(api::FindString(d, {"source", "component"}), "replicaset-controller");
  EXPECT_EQ(api::FindString(d, {"source", "host"}), "node-a");
  EXPECT_EQ(api::FindString(d, {"reportingComponent"}), "replicaset-controller");
  EXPECT_EQ(api::FindString(d, {"reportingInstance"}), "node-a");
  EXPECT_EQ(api::FindString(d, {"firstTimestamp"}), "2025-01-01T00:00:00Z");
  EXPECT_EQ(api::FindString(d, {"lastTimestamp"}), "2025-01-01T00:00:00Z");
  EXPECT_EQ(api::FindInt(d, {"count"}), 1);
}

TEST(EventRecorderTest, AQueuedEventKeepsEveryFieldAndItsTime) {
  // The queue holds events packed; what comes out must be what went in, the time included.
  util::FakeClock clock;
  RecordingSink sink;
  EventRecorder rec({.source = {"kubelet", "node-a"}, .sink = &sink, .clock = &clock});
  ObjectReference ref = ObjectReference::For(Pod());
  ref.field_path = "spec.containers{web}";
  const std::string message =
      "Failed to pull image \"registry.example/caf\u00e9:" + std::string(200, '1') +
      "\": not found";
  rec.Event(ref, kEventTypeWarning, "Failed", message);
  clock.Step(std::chrono::seconds(90));
  rec.Flush();
  ASSERT_EQ(sink.events.size(), 1u);
  const boost::json::object& d = sink.events.begin()->second.doc();
  EXPECT_EQ(api::FindString(d, {"involvedObject", "kind"}), "Pod");
  EXPECT_EQ(api::FindString(d, {"involvedObject", "namespace"}), "team");
  EXPECT_EQ(api::FindString(d, {"involvedObject", "name"}), "web-1");
  EXPECT_EQ(api::FindString(d, {"involvedObject", "uid"}), "u-1");
  EXPECT_EQ(api::FindString(d, {"involvedObject", "apiVersion"}), "v1");
  EXPECT_EQ(api::FindString(d, {"involvedObject", "resourceVersion"}), "42");
  EXPECT_EQ(api::FindString(d, {"involvedObject", "fieldPath"}), "spec.containers{web}");
  EXPECT_EQ(api::FindString(d, {"type"}), "Warning");
  EXPECT_EQ(api::FindString(d, {"reason"}), "Failed");
  EXPECT_EQ(api::FindString(d, {"message"}), message);
  EXPECT_EQ(api::FindString(d, {"firstTimestamp"}), "2025-01-01T00:00:00Z") << "queued at";
}

TEST(EventRecorderTest, RepeatsAreCountedOnOneEvent) {
  util::FakeClock clock;
  RecordingSink sink;
  EventRecorder rec({.source = {"rs"}, .sink = &sink, .clock = &clock});
  for (int i = 0; i < 3; ++i) {
    rec.Event(Pod(), kEventTypeWarning, "FailedCreate", "quota exceeded");
    clock.Step(std::chrono::seconds(5));
  }
  rec.Event(Pod(), kEventTypeWarning, "FailedCreate", "another message");
  rec.Flush();
  ASSERT_EQ(sink.events.size(), 2u);
  const api::Object& ev = sink.events.at("web-1.1816687ec0570000");
  EXPECT_EQ(api::FindInt(ev.doc(), {"count"}), 3);
  EXPECT_EQ(api::FindString(ev.doc(), {"firstTimestamp"}), "2025-01-01T00:00:00Z");
  EXPECT_EQ(api::FindString(ev.doc(), {"lastTimestamp"}), "2025-01-01T00:00:10Z");
  EXPECT_EQ(sink.calls[1],
            R"(patch web-1.1816687ec0570000 {"count":2,"lastTimestamp":"2025-01-01T00:00:05Z",)"
            R"("message":"quota exceeded"})");
  EXPECT_EQ(sink.calls.size(), 4u);  // create, patch, patch, create (different message)
}

TEST(EventRecorderTest, APatchOfAVanishedEventCreatesAnewOne) {
  util::FakeClock clock;
  RecordingSink sink;
  EventRecorder rec({.source = {"rs"}, .sink = &sink, .clock = &clock});
  rec.Event(Pod(), kEventTypeNormal, "Scaled", "up to 3");
  rec.Flush();
  sink.events.clear();  // the Event's TTL passed on the server
  clock.Step(std::chrono::seconds(1));
  rec.Event(Pod(), kEventTypeNormal, "Scaled", "up to 3");
  rec.Flush();
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(api::FindInt(sink.events.begin()->second.doc(), {"count"}), 1);
  EXPECT_EQ(sink.calls.size(), 3u);  // create, patch (NotFound), create
}

// The aggregation cache keeps the cache_size most recently written keys: a repeat of an evicted
// event is created anew; a repeat of a kept one (refreshed by its last write) is patched.
TEST(EventRecorderTest, TheAggregationCacheForgetsTheLeastRecentlyWritten) {
  util::FakeClock clock;
  RecordingSink sink;
  EventRecorder rec({.source = {"rs"}, .sink = &sink, .clock = &clock, .cache_size = 2});
  auto record = [&](const char* message) {
    rec.Event(Pod(), kEventTypeNormal, "Scaled", message);
    rec.Flush();
    clock.Step(std::chrono::seconds(1));
  };
  record("a");  // create; cache: a
  record("b");  // create; cache: b a
  record("a");  // patch;  cache: a b
  record("c");  // create; cache: c a (b evicted)
  record("b");  // create; cache: b c (a evicted)
  record("c");  // patch;  cache: c b
  record("a");  // create
  ASSERT_EQ(sink.calls.size(), 7u);
  const char* want[] = {"create", "create", "patch", "create", "create", "patch", "create"};
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(sink.calls[i].substr(0, sink.calls[i].find(' ')), want[i]) << "call " << i;
  }
  EXPECT_EQ(sink.events.size(), 5u);
}

TEST(EventRecorderTest, RetriesTransientFailuresOnTheClock) {
  util::FakeClock clock;
  RecordingSink sink;
  sink.fail_next = true;
  EventRecorder rec({.source = {"rs"}, .sink = &sink, .clock = &clock});
  rec.Event(Pod(), kEventTypeNormal, "Scaled", "up to 3");
  std::jthread flusher([&] { rec.Flush(); });
  clock.BlockUntilWaiters(1);
  clock.Step(std::chrono::seconds(10));
  flusher.join();
  EXPECT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(rec.dropped(), 0);
}

TEST(EventRecorderTest, AFullQueueDropsInsteadOfBlocking) {
  RecordingSink sink;
  EventRecorder rec({.source = {"rs"}, .sink = &sink, .max_queued = 2});
  for (int i = 0; i < 5; ++i) rec.Event(Pod(), kEventTypeNormal, "R", std::to_string(i));
  EXPECT_EQ(rec.dropped(), 3);
  rec.Flush();
  EXPECT_EQ(sink.events.size(), 2u);
}

TEST(EventRecorderTest, ClusterScopedObjectsGetEventsInDefault) {
  RecordingSink sink;
  EventRecorder rec({.source = {"node-controller"}, .sink = &sink});
  api::Object node;
  node.SetGvk({"", "v1", "Node"});
  node.set_name("n1");
  rec.Event(node, kEventTypeNormal, "NodeReady", "ready");
  rec.Flush();
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events.begin()->second.namespace_(), "default");
  // A repeat counts on that Event: the patch names it in default too.
  rec.Event(node, kEventTypeNormal, "NodeReady", "ready");
  rec.Flush();
  ASSERT_EQ(sink.calls.size(), 2u);
  EXPECT_EQ(sink.calls[1].substr(0, sink.calls[1].find(' ', 6)),
            "patch " + sink.events.begin()->first);
  EXPECT_EQ(sink.patched_namespaces, std::vector<std::string>{"default"});
}

api::Object ReplicaSet(const std::string& name = "web-abc") {
  api::Object o;
  o.SetGvk({"apps", "v1", "ReplicaSet"});
  o.set_namespace("team");
  o.set_name(name);
  o.set_uid("u-" + name);
  return o;
}

std::vector<std::string> Verbs(const RecordingSink& sink) {
  std::vector<std::string> verbs;
  for (const std::string& call : sink.calls) verbs.push_back(call.substr(0, call.find(' ')));
  return verbs;
}

// client-go's EventAggregator: the tenth different message of one object, type and reason (in
// ten minutes) starts an Event "(combined from similar events): ..."; later ones count on it.
TEST(EventRecorderTest, SimilarEventsWithManyMessagesAreCombined) {
  util::FakeClock clock;
  RecordingSink sink;
  EventRecorder rec({.source = {"replicaset-controller"}, .sink = &sink, .clock = &clock});
  for (int i = 0; i < 12; ++i) {
    rec.Event(ReplicaSet(), kEventTypeNormal, "SuccessfulCreate",
              "Created pod: web-abc-" + std::to_string(i));
    clock.Step(std::chrono::seconds(1));
  }
  rec.Flush();
  std::vector<std::string> want(10, "create");
  want.insert(want.end(), {"patch", "patch"});
  EXPECT_EQ(Verbs(sink), want);
  ASSERT_EQ(sink.events.size(), 10u);
  // The combined Event is the last one created (named by its first occurrence's time).
  const api::Object& combined = sink.events.at("web-abc.18166880d8c81a00");
  EXPECT_EQ(api::FindString(combined.doc(), {"message"}),
            "(combined from similar events): Created pod: web-abc-11");
  EXPECT_EQ(api::FindInt(combined.doc(), {"count"}), 3);
  EXPECT_EQ(api::FindString(combined.doc(), {"reason"}), "SuccessfulCreate");
  EXPECT_EQ(api::FindString(sink.events.at("web-abc.1816687ec0570000").doc(), {"message"}),
            "Created pod: web-abc-0");

  // Other reasons and other objects are grouped apart.
  rec.Event(ReplicaSet(), kEventTypeNormal, "SuccessfulDelete", "Deleted pod: web-abc-0");
  rec.Event(ReplicaSet("web-def"), kEventTypeNormal, "SuccessfulCreate", "Created pod: web-def-0");
  rec.Flush();
  EXPECT_EQ(sink.events.size(), 12u);

  // Ten minutes without a similar event: the group starts over.
  clock.Step(std::chrono::minutes(11));
  rec.Event(ReplicaSet(), kEventTypeNormal, "SuccessfulCreate", "Created pod: web-abc-99");
  rec.Flush();
  ASSERT_EQ(sink.events.size(), 13u);
  EXPECT_EQ(sink.calls.back().substr(0, 6), "create");
}

// client-go's EventSourceObjectSpamFilter: 25 writes per object, then one per 5 minutes; the
// events it holds back still count on the Event they belong to.
TEST(EventRecorderTest, TheSpamFilterLimitsWritesPerObject) {
  util::FakeClock clock;
  RecordingSink sink;
  EventRecorder rec({.source = {"kubelet", "node-a"}, .sink = &sink, .clock = &clock});
  for (int i = 0; i < 30; ++i) {
    rec.Event(Pod(), kEventTypeWarning, "BackOff", "Back-off restarting failed container");
    clock.Step(std::chrono::seconds(1));
  }
  rec.Flush();
  EXPECT_EQ(sink.calls.size(), 25u);  // 1 create, 24 patches
  EXPECT_EQ(rec.filtered(), 5);
  EXPECT_EQ(rec.dropped(), 0);
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(api::FindInt(sink.events.begin()->second.doc(), {"count"}), 25);

  // Another object has its own bucket.
  api::Object other = Pod();
  other.set_name("web-2");
  other.set_uid("u-2");
  rec.Event(other, kEventTypeWarning, "BackOff", "Back-off restarting failed container");
  rec.Flush();
  EXPECT_EQ(sink.calls.size(), 26u);

  // A token comes back every 5 minutes; the patch counts the five held back.
  clock.Step(std::chrono::minutes(5));
  rec.Event(Pod(), kEventTypeWarning, "BackOff", "Back-off restarting failed container");
  rec.Event(Pod(), kEventTypeWarning, "BackOff", "Back-off restarting failed container");
  rec.Flush();
  EXPECT_EQ(sink.calls.size(), 27u);
  EXPECT_EQ(rec.filtered(), 6);
  EXPECT_EQ(api::FindInt(sink.events.at("web-1.1816687ec0570000").doc(), {"count"}), 31);
}

// A sink several threads may write to; counts the Events created per involved object.
class CountingSink final : public EventSink {
 public:
  util::StatusOr<api::Object> Create(const api::Object& event) override {
    std::lock_guard lock(mu_);
    ++created_[std::string(api::FindString(event.doc(), {"involvedObject", "name"}))];
    return event;
  }
  util::StatusOr<api::Object> Patch(const api::Object& event, std::string_view) override {
    return event;
  }
  std::map<std::string, int> created() const {
    std::lock_guard lock(mu_);
    return created_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, int> created_;
};

// A last Flush while Run still writes (as a component's shutdown may do): the two take turns,
// and every queued Event is written exactly once. (Under TSan, without the turns, their shared
// caches race.)
TEST(EventRecorderTest, FlushWhileRunWritesTakesTurns) {
  CountingSink sink;
  EventRecorder rec({.source = {"scheduler"}, .sink = &sink, .max_queued = 10000});
  constexpr int kEvents = 2000;
  for (int i = 0; i < kEvents; ++i) {
    api::Object pod = Pod();
    pod.set_name("web-" + std::to_string(i));
    pod.set_uid("u-" + std::to_string(i));
    rec.Event(pod, kEventTypeNormal, "Scheduled", "assigned");
  }
  std::jthread run([&](std::stop_token st) { rec.Run(st); });
  rec.Flush();
  run.request_stop();
  run.join();
  rec.Flush();  // nothing is left: Run wrote what it took before it stopped
  std::map<std::string, int> created = sink.created();
  EXPECT_EQ(created.size(), static_cast<size_t>(kEvents));
  for (const auto& [name, n] : created) EXPECT_EQ(n, 1) << name;
}

}  // namespace
}  // namespace converge::client
