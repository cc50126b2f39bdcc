#include "client/workqueue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "api/types.h"
#include "client/workqueue_test_util.h"

namespace converge::client {
namespace {

using testing::Eventually;

TEST(WorkQueueTest, DeduplicatesUntilGet) {
  WorkQueue<std::string> q;
  q.Add("a");
  q.Add("b");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2);
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
  EXPECT_EQ(q.Len(), 0);
}

TEST(WorkQueueTest, HandsOutInFifoOrder) {
  WorkQueue<int> q;
  for (int i : {3, 1, 2}) q.Add(i);
  EXPECT_EQ(q.Get(), 3);
  EXPECT_EQ(q.Get(), 1);
  EXPECT_EQ(q.Get(), 2);
}

TEST(WorkQueueTest, AddWhileProcessingRequeuesAfterDone) {
  WorkQueue<std::string> q;
  q.Add("a");
  ASSERT_EQ(q.Get(), "a");
  q.Add("a");
  q.Add("a");
  EXPECT_EQ(q.Len(), 0) << "an item being processed must not be handed out again";
  q.Done("a");
  EXPECT_EQ(q.Len(), 1);
  EXPECT_EQ(q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0) << "both adds were served by one more round";
}

TEST(WorkQueueTest, DoneWithoutNewAddDoesNotRequeue) {
  WorkQueue<std::string> q;
  q.Add("a");
  ASSERT_EQ(q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0);
}

TEST(WorkQueueTest, DoneForAnItemNotBeingProcessedIsIgnored) {
  WorkQueue<std::string> q;
  q.Add("a");
  q.Done("a");  // "a" is queued, not processing: must not be queued a second time
  q.Done("zzz");
  EXPECT_EQ(q.Len(), 1);
  EXPECT_EQ(q.Get(), "a");
  q.Done("a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0);
}

TEST(WorkQueueTest, ObjectKeysAreItems) {
  WorkQueue<api::ObjectKey> q;
  q.Add({"default", "web"});
  q.Add({"kube-system", "web"});
  q.Add({"default", "web"});
  q.Add({"", "node-1"});
  EXPECT_EQ(q.Len(), 3);
  EXPECT_EQ(q.Get(), (api::ObjectKey{"default", "web"}));
}

TEST(WorkQueueTest, GetBlocksUntilAnAdd) {
  WorkQueue<std::string> q;
  std::optional<std::string> got;
  std::thread worker([&] { got = q.Get(); });
  q.Add("a");
  worker.join();
  EXPECT_EQ(got, "a");
}

TEST(WorkQueueTest, ShutDownWakesEveryBlockedGet) {
  WorkQueue<std::string> q;
  std::atomic<int> nullopts{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      if (!q.Get().has_value()) ++nullopts;
    });
  }
  q.ShutDown();
  for (auto& w : workers) w.join();
  EXPECT_EQ(nullopts, 3);
  EXPECT_TRUE(q.ShuttingDown());
}

TEST(WorkQueueTest, ShutDownStillHandsOutQueuedItemsAndRefusesNewOnes) {
  WorkQueue<std::string> q;
  q.Add("a");
  q.Add("b");
  q.ShutDown();
  q.Add("c");
  EXPECT_EQ(q.Len(), 2);
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
  EXPECT_EQ(q.Get(), std::nullopt);
}

TEST(WorkQueueTest, DoneStillRequeuesWhileShuttingDown) {
  WorkQueue<std::string> q;
  q.Add("a");
  ASSERT_EQ(q.Get(), "a");
  q.Add("a");
  q.ShutDown();
  q.Done("a");
  EXPECT_EQ(q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Get(), std::nullopt);
}

TEST(WorkQueueTest, ShutDownWithDrainWaitsForProcessingItems) {
  WorkQueue<std::string> q;
  q.Add("a");
  q.Add("b");
  ASSERT_EQ(q.Get(), "a");
  ASSERT_EQ(q.Get(), "b");
  std::atomic<bool> drained{false};
  std::thread drainer([&] {
    q.ShutDownWithDrain();
    drained = true;
  });
  ASSERT_TRUE(Eventually([&] { return q.ShuttingDown(); }));
  q.Done("a");
  // "b" is still being processed, so the drain cannot have finished, however long we look.
  EXPECT_FALSE(drained);
  q.Done("b");
  drainer.join();
  EXPECT_TRUE(drained);
  EXPECT_EQ(q.Get(), std::nullopt);
}

TEST(WorkQueueTest, ShutDownWithDrainReturnsAtOnceWhenIdle) {
  WorkQueue<std::string> q;
  q.Add("queued-but-not-processing");
  q.ShutDownWithDrain();
  EXPECT_EQ(q.Get(), "queued-but-not-processing");
  EXPECT_EQ(q.Get(), std::nullopt);
}

TEST(WorkQueueTest, ShutDownReleasesAWaitingDrain) {
  WorkQueue<std::string> q;
  q.Add("stuck");
  ASSERT_EQ(q.Get(), "stuck");
  std::thread drainer([&] { q.ShutDownWithDrain(); });
  ASSERT_TRUE(Eventually([&] { return q.ShuttingDown(); }));
  q.ShutDown();
  drainer.join();  // would hang if ShutDown did not cancel the drain
  q.Done("stuck");
}

// Model-based: random Add/Get/Done sequences against a reference model that tracks each key's
// state explicitly (idle, queued, processing, processing+dirty) and the hand-out order.
TEST(WorkQueueTest, MatchesReferenceModelOnRandomOperations) {
  enum class State { kIdle, kQueued, kProcessing, kProcessingDirty };
  constexpr int kKeys = 12;
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    WorkQueue<int> q;
    std::vector<State> state(kKeys, State::kIdle);
    std::deque<int> order;
    for (int step = 0; step < 5000; ++step) {
      const int op = rng() % 3;
      if (op == 0) {
        const int k = rng() % kKeys;
        q.Add(k);
        if (state[k] == State::kIdle) {
          state[k] = State::kQueued;
          order.push_back(k);
        } else if (state[k] == State::kProcessing) {
          state[k] = State::kProcessingDirty;
        }
      } else if (op == 1 && !order.empty()) {
        const int k = order.front();
        order.pop_front();
        ASSERT_EQ(q.Get(), k);
        state[k] = State::kProcessing;
      } else if (op == 2) {
        std::vector<int> held;
        for (int k = 0; k < kKeys; ++k) {
          if (state[k] == State::kProcessing || state[k] == State::kProcessingDirty) {
            held.push_back(k);
          }
        }
        if (held.empty()) continue;
        const int k = held[rng() % held.size()];
        q.Done(k);
        if (state[k] == State::kProcessingDirty) {
          state[k] = State::kQueued;
          order.push_back(k);
        } else {
          state[k] = State::kIdle;
        }
      }
      ASSERT_EQ(q.Len(), static_cast<int>(order.size()));
    }
  }
}

// 50 producers add random keys while 10 workers process them. A checker proves that no key is
// ever held by two workers at once, and that every key is processed after its last add: each add
// bumps the key's version first, each worker records the version it saw after Get, and at the end
// every key's processed version must equal its final version.
TEST(WorkQueueStressTest, OneWorkerPerKeyAndEveryAddIsServed) {
  constexpr int kProducers = 50;
  constexpr int kConsumers = 10;
  constexpr int kKeys = 300;
  constexpr int kAddsPerProducer = 400;

  WorkQueue<api::ObjectKey> q;
  std::vector<std::atomic<int>> holders(kKeys);
  std::vector<std::atomic<int64_t>> added(kKeys);
  std::vector<std::atomic<int64_t>> processed(kKeys);
  std::atomic<int> overlaps{0};
  std::atomic<int64_t> rounds{0};

  auto key = [](int k) {
    return api::ObjectKey{"ns-" + std::to_string(k % 3), "obj-" + std::to_string(k)};
  };
  auto index = [](const api::ObjectKey& key) { return std::stoi(key.name.substr(4)); };

  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c) {
    consumers.emplace_back([&, c] {
      std::mt19937 rng(1000 + c);
      while (std::optional<api::ObjectKey> item = q.Get()) {
        const int k = index(*item);
        if (holders[k].fetch_add(1) != 0) ++overlaps;
        const int64_t seen = added[k].load();
        if (seen > processed[k].load()) processed[k].store(seen);
        if (rng() % 4 == 0) std::this_thread::yield();  // widen the window for overlaps
        holders[k].fetch_sub(1);
        ++rounds;
        q.Done(*item);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 rng(p + 1);
      for (int i = 0; i < kAddsPerProducer; ++i) {
        const int k = rng() % kKeys;
        added[k].fetch_add(1);
        q.Add(key(k));
        if (rng() % 16 == 0) std::this_thread::yield();
      }
    });
  }
  for (auto& p : producers) p.join();
  q.ShutDownWithDrain();
  for (auto& c : consumers) c.join();

  EXPECT_EQ(overlaps, 0);
  EXPECT_EQ(q.Len(), 0);
  int64_t total_added = 0;
  for (int k = 0; k < kKeys; ++k) {
    total_added += added[k].load();
    EXPECT_EQ(processed[k].load(), added[k].load()) << "key " << k << " lost its last add";
  }
  EXPECT_EQ(total_added, int64_t{kProducers} * kAddsPerProducer);
  EXPECT_LE(rounds.load(), total_added) << "deduplication hands each add out at most once";
}

}  // namespace
}  // namespace converge::client
