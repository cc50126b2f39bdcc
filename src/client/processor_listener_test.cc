#include "client/processor_listener.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace converge::client {
namespace {

api::ObjectPtr NumberedObj(int i) {
  api::Object o;
  o.SetGvk({"", "v1", "ConfigMap"});
  o.set_namespace("ns");
  o.set_name("cm-" + std::to_string(i));
  return std::make_shared<const api::Object>(std::move(o));
}

Notification Add(int i, bool initial = false) {
  Notification n;
  n.kind = Notification::Kind::kAdd;
  n.obj = NumberedObj(i);
  n.is_initial_list = initial;
  return n;
}

// Records the names it is given; the first OnAdd waits until `release` is set, so that what
// is added meanwhile queues up.
class GatedHandler final : public ResourceEventHandler {
 public:
  void OnAdd(const api::ObjectPtr& obj, bool) override {
    if (first_.exchange(false)) {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return release_; });
    }
    std::lock_guard lock(mu_);
    names_.emplace_back(obj->name());
  }
  void OnUpdate(const api::ObjectPtr&, const api::ObjectPtr&) override {}
  void OnDelete(const DeletedObject&) override {}

  void Release() {
    std::lock_guard lock(mu_);
    release_ = true;
    cv_.notify_all();
  }
  std::vector<std::string> names() const {
    std::lock_guard lock(mu_);
    return names_;
  }

 private:
  std::atomic<bool> first_{true};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool release_ = false;
  std::vector<std::string> names_;
};

void WaitForDelivered(const ProcessorListener& l, int64_t n) {
  for (int i = 0; i < 5000 && l.delivered() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(l.delivered(), n);
}

// A backlog queued while the handler is busy: every notification is delivered once, in order,
// and the listener is synced only when the whole initial list is.
TEST(ProcessorListenerTest, ABacklogIsDeliveredInOrder) {
  auto handler = std::make_shared<GatedHandler>();
  ProcessorListener l(handler, {}, &util::RealClock());
  std::jthread runner([&](std::stop_token st) { l.Run(st); });
  const int n = 323;
  for (int i = 0; i < n; ++i) l.Add(Add(i, /*initial=*/true));
  l.MarkUpstreamSynced();
  EXPECT_FALSE(l.HasSynced());  // the first is held in the handler
  handler->Release();
  WaitForDelivered(l, n);
  EXPECT_TRUE(l.HasSynced());
  std::vector<std::string> names = handler->names();
  ASSERT_EQ(names.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) EXPECT_EQ(names[i], "cm-" + std::to_string(i));
}

// A bounded listener makes Add wait for room and still delivers everything in order.
TEST(ProcessorListenerTest, ABoundedListenerHoldsTheProducerBackAndLosesNothing) {
  auto handler = std::make_shared<GatedHandler>();
  ProcessorListener l(handler, {.buffer_limit = 2}, &util::RealClock());
  std::jthread runner([&](std::stop_token st) { l.Run(st); });
  const int n = 300;
  std::atomic<int> added{0};
  std::jthread producer([&] {
    for (int i = 0; i < n; ++i) {
      l.Add(Add(i));
      added.fetch_add(1);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // The handler holds the first; the queue holds at most 2 more.
  EXPECT_LE(added.load(), 3);
  handler->Release();
  producer.join();
  WaitForDelivered(l, n);
  std::vector<std::string> names = handler->names();
  ASSERT_EQ(names.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) EXPECT_EQ(names[i], "cm-" + std::to_string(i));
}

// Stopping drops what was not delivered.
TEST(ProcessorListenerTest, StopDropsTheUndelivered) {
  auto handler = std::make_shared<GatedHandler>();
  ProcessorListener l(handler, {}, &util::RealClock());
  std::stop_source stop;
  std::jthread runner([&] { l.Run(stop.get_token()); });
  for (int i = 0; i < 10; ++i) l.Add(Add(i));
  for (int i = 0; i < 500 && handler->names().empty() && l.pending() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  stop.request_stop();
  handler->Release();
  runner.join();
  EXPECT_EQ(handler->names().size(), 1u);  // only the one in the handler when stop came
  l.Add(Add(99));                          // after stop: dropped
  EXPECT_EQ(l.pending(), 0u);
}

// An inline listener has no thread: Add delivers on the caller's thread before it returns, and
// each notification counts towards HasSynced at once. After Stop, Adds are dropped.
TEST(ProcessorListenerTest, AnInlineListenerDeliversBeforeAddReturns) {
  auto handler = std::make_shared<GatedHandler>();
  handler->Release();
  ProcessorListener l(handler, {.inline_delivery = true}, &util::RealClock());
  ASSERT_TRUE(l.is_inline());
  for (int i = 0; i < 3; ++i) {
    l.Add(Add(i, /*initial=*/true));
    EXPECT_EQ(l.delivered(), i + 1);
    EXPECT_EQ(handler->names().back(), "cm-" + std::to_string(i));
  }
  EXPECT_EQ(l.pending(), 0u);
  EXPECT_FALSE(l.HasSynced());  // the informer has not said its list is complete
  l.MarkUpstreamSynced();
  EXPECT_TRUE(l.HasSynced());
  l.Stop();
  l.Add(Add(3));
  EXPECT_EQ(l.delivered(), 3);
  EXPECT_EQ(handler->names().size(), 3u);
}

}  // namespace
}  // namespace converge::client
