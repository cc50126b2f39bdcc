// HandlerRegistrations::HasSynced / WaitForSynced: a controller's workers must not start while a
// handler is still being handed its informer's initial list (the ReplicaSet controller otherwise
// counted late initial adds as observations of its own creates). The handlers are called inline,
// on the informer's thread. (For a handler with a thread of its own, which can lag a complete
// cache, see SharedInformerTest.AThreadedHandlerIsSyncedOnlyOnceItHasSeenTheInitialList.)
#include "controllers/common/handler_registrations.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "client/fake_list_watch.h"
#include "client/resource_event_handler.h"

namespace converge::controllers {
namespace {

api::ObjectPtr ConfigMap(const std::string& name) {
  api::Object o;
  o.SetGvk({"", "v1", "ConfigMap"});
  o.set_namespace("ns");
  o.set_name(name);
  o.set_resource_version("1");
  return std::make_shared<const api::Object>(std::move(o));
}

// Holds its first OnAdd until released.
class HeldHandler final : public client::ResourceEventHandler {
 public:
  void OnAdd(const api::ObjectPtr&, bool) override {
    std::unique_lock lock(mu_);
    if (!entered_) thread_ = std::this_thread::get_id();
    entered_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return released_; });
  }
  void OnUpdate(const api::ObjectPtr&, const api::ObjectPtr&) override {}
  void OnDelete(const client::DeletedObject&) override {}
  void WaitEntered() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return entered_; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  std::thread::id thread() {
    std::lock_guard lock(mu_);
    return thread_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;    // guarded by mu_
  bool released_ = false;   // guarded by mu_
  std::thread::id thread_;  // guarded by mu_: where the first OnAdd ran
};

TEST(HandlerRegistrationsTest, SyncedOnlyOnceTheHandlerHasSeenTheInitialList) {
  auto lw = std::make_unique<client::FakeListerWatcher>();
  lw->PushList(client::MakeList("10", {ConfigMap("a"), ConfigMap("b")}));
  lw->PushWatch();
  client::SharedInformerOptions o;
  o.name = "configmaps";
  o.lister_watcher = std::move(lw);
  o.reflector.on_error = [](const util::Status&) {};
  client::SharedInformer informer(std::move(o));
  auto handler = std::make_shared<HeldHandler>();
  std::jthread run;
  {
    HandlerRegistrations registrations;
    ASSERT_TRUE(registrations.Add(informer, handler).ok());
    run = std::jthread([&informer](std::stop_token st) { informer.Run(st); });
    std::stop_source never;
    handler->WaitEntered();
    EXPECT_EQ(handler->thread(), run.get_id()) << "called inline, on the informer's thread";
    EXPECT_FALSE(registrations.HasSynced()) << "the handler is still on the first object";
    EXPECT_FALSE(informer.HasSynced()) << "and the informer waits for it";
    std::stop_source stopped;
    stopped.request_stop();
    EXPECT_FALSE(registrations.WaitForSynced(stopped.get_token()));

    handler->Release();
    EXPECT_TRUE(registrations.WaitForSynced(never.get_token()));
    EXPECT_TRUE(registrations.HasSynced());
    EXPECT_TRUE(informer.WaitForCacheSync(never.get_token()));
  }
  run.request_stop();
}

}  // namespace
}  // namespace converge::controllers
