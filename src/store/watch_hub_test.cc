#include "store/watch_hub.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <mutex>
#include <stop_token>
#include <vector>

namespace converge::store {
namespace {

// The revisions a test published, as the store's history would hold them.
class MemoryHistory : public HistorySource {
 public:
  void Add(RevisionEventsPtr rev) {
    std::lock_guard lock(mu_);
    revisions_.push_back(std::move(rev));
  }

  util::StatusOr<Chunk> ReadHistory(std::string_view key, std::string_view end, Revision from,
                                    Revision to, bool /*prev_kv*/, size_t /*max_events*/) override {
    std::lock_guard lock(mu_);
    Chunk chunk;
    for (const RevisionEventsPtr& rev : revisions_) {
      if (rev->revision < from || rev->revision > to) continue;
      for (const Event& e : rev->events) {
        if (e.kv->key >= key && e.kv->key < end) chunk.events.push_back(e);
      }
    }
    chunk.next = to + 1;
    return chunk;
  }

  util::StatusOr<KeyValuePtr> ReadPrevious(RevisionPair /*at*/, Revision /*of*/,
                                           Revision* /*compacted*/) override {
    return util::Unimplemented("these tests publish events without stored previous values");
  }

 private:
  std::mutex mu_;
  std::vector<RevisionEventsPtr> revisions_;
};

RevisionEventsPtr PutAt(Revision rev, std::string key) {
  auto events = std::make_shared<RevisionEvents>();
  events->revision = rev;
  events->events.push_back(Event{
      .type = Event::Type::kPut,
      .kv = std::make_shared<const KeyValue>(KeyValue{.key = std::move(key),
                                                      .value = "v",
                                                      .create_revision = rev,
                                                      .mod_revision = rev,
                                                      .version = 1}),
  });
  return events;
}

// Publish hands each revision to the watchers' groups before it returns, on the publishing
// thread: no other thread stands between a commit and its watchers. After Stop, it delivers
// nothing.
TEST(WatchHubTest, PublishDeliversBeforeItReturnsAndNothingAfterStop) {
  MemoryHistory history;
  auto hub = std::make_shared<WatchHub>(WatchHub::Options{}, &history);
  hub->Start(0);
  auto stream = hub->Watch(WatchRequest{.key = "a", .range_end = "b"}, /*current=*/0,
                           /*compact=*/0);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  // The watcher waits in its group, or (had the revision already been published when it
  // looked) reads it from the history: either way it gets revision 1 once.
  auto next = std::async(std::launch::async, [&] { return (*stream)->Next(std::stop_token{}); });

  RevisionEventsPtr first = PutAt(1, "a1");
  history.Add(first);
  hub->Publish(1, {first});
  EXPECT_EQ(hub->notified_revision(), 1) << "delivered on the publishing thread";

  util::StatusOr<WatchResponse> got = next.get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->events.size(), 1u);
  EXPECT_EQ(got->events[0].kv->key, "a1");
  EXPECT_EQ(got->events[0].kv->mod_revision, 1);

  (*stream)->Cancel();
  hub->Stop();
  hub->Publish(2, {PutAt(2, "a2")});
  EXPECT_EQ(hub->notified_revision(), 1) << "published after Stop";
}

}  // namespace
}  // namespace converge::store
