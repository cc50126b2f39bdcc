// HandlerRegistrations::HasSynced / WaitForSynced: a controller's workers must not start while a
// handler is still being handed its informer's initial list, even though the informer's cache is
// already complete (the ReplicaSet controller otherwise counted late initial adds as observations
// of its own creates).
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

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;   // guarded by mu_
  bool released_ = false;  // guarded by mu_
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
    ASSERT_TRUE(informer.WaitForCacheSync(never.get_token()));
    handler->WaitEntered();
    EXPECT_TRUE(informer.HasSynced()) << "the cache is complete";
    EXPECT_FALSE(registrations.HasSynced()) << "the handler is still on the first object";
    std::stop_source stopped;
    stopped.request_stop();
    EXPECT_FALSE(registrations.WaitForSynced(stopped.get_token()));

    handler->Release();
    EXPECT_TRUE(registrations.WaitForSynced(never.get_token()));
    EXPECT_TRUE(registrations.HasSynced());
  }
  run.request_stop();
}

}  // namespace
}  // namespace converge::controllers
