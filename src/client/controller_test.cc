#include "client/controller.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <thread>

#include "client/fake_list_watch.h"

namespace converge::client {
namespace {

using std::chrono::milliseconds;

// A scripted reconciler: per key, the results to return in order (then Done).
class Script {
 public:
  void Set(const std::string& name, std::vector<std::function<ReconcileResult()>> results) {
    std::lock_guard lock(mu_);
    results_[name] = std::deque<std::function<ReconcileResult()>>(results.begin(), results.end());
  }
  ReconcileResult Reconcile(const api::ObjectKey& key) {
    std::function<ReconcileResult()> next;
    {
      std::lock_guard lock(mu_);
      calls_.push_back(key.name);
      auto& q = results_[key.name];
      if (!q.empty()) {
        next = std::move(q.front());
        q.pop_front();
      }
    }
    return next ? next() : ReconcileResult::Done();
  }
  std::vector<std::string> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::deque<std::function<ReconcileResult()>>> results_;
  std::vector<std::string> calls_;
};

class FakeSink final : public EventSink {
 public:
  util::StatusOr<api::Object> Create(const api::Object& event) override {
    std::lock_guard lock(mu);
    created.push_back(event);
    return event;
  }
  util::StatusOr<api::Object> Patch(const api::Object& e, std::string_view) override { return e; }
  std::mutex mu;
  std::vector<api::Object> created;
};

struct Harness {
  explicit Harness(int workers = 1, std::vector<const SharedInformer*> wait_for = {}) {
    recorder = std::make_unique<EventRecorder>(
        EventRecorderOptions{.source = {"test-controller"}, .sink = &sink, .clock = &clock});
    ctrl = std::make_unique<Controller>(
        ControllerOptions{.name = "",  // no metrics
                          .reconcile = [this](const api::ObjectKey& k,
                                              std::stop_token) { return script.Reconcile(k); },
                          .workers = workers,
                          .clock = &clock,
                          .wait_for_sync = std::move(wait_for),
                          .recorder = recorder.get(),
                          .lookup =
                              [](const api::ObjectKey& k) {
                                api::Object o;
                                o.SetGvk({"apps", "v1", "ReplicaSet"});
                                o.set_namespace(k.ns);
                                o.set_name(k.name);
                                return std::make_shared<const api::Object>(std::move(o));
                              }});
  }
  ~Harness() { Stop(); }
  void Start() {
    thread = std::jthread([this](std::stop_token st) { ctrl->Run(st); });
  }
  void Stop() {
    if (thread.joinable()) {
      thread.request_stop();
      thread.join();
    }
  }
  void WaitForReconciles(int64_t n) {
    while (ctrl->stats().reconciles < n) std::this_thread::yield();
  }
  // The key waits in the delaying queue for exactly d: still waiting 1 ms before, gone at d.
  void ExpectDelay(util::Clock::Duration d, int64_t reconciles_after) {
    while (ctrl->queue().NumWaiting() != 1) std::this_thread::yield();
    clock.Step(d - milliseconds(1));
    EXPECT_EQ(ctrl->queue().NumWaiting(), 1);
    clock.Step(milliseconds(1));
    WaitForReconciles(reconciles_after);
  }

  util::FakeClock clock;
  Script script;
  FakeSink sink;
  std::unique_ptr<EventRecorder> recorder;
  std::unique_ptr<Controller> ctrl;
  std::jthread thread;
};

const api::ObjectKey kKey{"ns", "web"};

TEST(ControllerTest, ErrorsRetryWithGrowingBackoffAndSuccessForgets) {
  Harness h;
  h.script.Set("web", {[] { return ReconcileResult::Error(util::Unavailable("flaky")); },
                       [] { return ReconcileResult::Error(util::Unavailable("flaky")); },
                       [] { return ReconcileResult::Done(); }});
  h.Start();
  h.ctrl->Enqueue(kKey);
  h.WaitForReconciles(1);
  EXPECT_EQ(h.ctrl->queue().NumRequeues(kKey), 1);
  h.ExpectDelay(milliseconds(5), 2);                // 5 ms · 2⁰
  h.ExpectDelay(milliseconds(10), 3);               // 5 ms · 2¹
  EXPECT_EQ(h.ctrl->queue().NumRequeues(kKey), 0);  // success forgot the failures
  EXPECT_EQ(h.script.calls(), (std::vector<std::string>{"web", "web", "web"}));
  EXPECT_EQ(h.ctrl->stats().errors, 2);
}

TEST(ControllerTest, RequeueAfterForgetsThenComesBackOnTime) {
  Harness h;
  h.script.Set("web", {[] { return ReconcileResult::Error(util::Unavailable("x")); },
                       [] { return ReconcileResult::RequeueAfter(std::chrono::seconds(30)); }});
  h.Start();
  h.ctrl->Enqueue(kKey);
  h.WaitForReconciles(1);
  h.ExpectDelay(milliseconds(5), 2);
  EXPECT_EQ(h.ctrl->queue().NumRequeues(kKey), 0);  // forgotten: a timed re-check, not a failure
  h.ExpectDelay(std::chrono::seconds(30), 3);
  EXPECT_EQ(h.ctrl->stats().requeue_after, 1);
}

TEST(ControllerTest, RequeueIsRateLimited) {
  Harness h;
  h.script.Set("web", {[] { return ReconcileResult::Requeue(); }});
  h.Start();
  h.ctrl->Enqueue(kKey);
  h.WaitForReconciles(1);
  h.ExpectDelay(milliseconds(5), 2);
}

TEST(ControllerTest, TerminalErrorsAreNotRetriedAndLeaveAnEvent) {
  Harness h;
  h.script.Set("web", {[] {
                 return ReconcileResult::Terminal(
                     util::InvalidArgument("spec.replicas: must be non-negative"));
               }});
  h.Start();
  h.ctrl->Enqueue(kKey);
  h.WaitForReconciles(1);
  EXPECT_EQ(h.ctrl->queue().NumWaiting(), 0);
  EXPECT_EQ(h.ctrl->queue().Len(), 0);
  EXPECT_EQ(h.ctrl->queue().NumRequeues(kKey), 0);
  EXPECT_EQ(h.ctrl->stats().terminal_errors, 1);
  h.recorder->Flush();
  ASSERT_EQ(h.sink.created.size(), 1u);
  const api::Object& ev = h.sink.created[0];
  EXPECT_EQ(api::FindString(ev.doc(), {"type"}), "Warning");
  EXPECT_EQ(api::FindString(ev.doc(), {"reason"}), "ReconcileError");
  EXPECT_EQ(api::FindString(ev.doc(), {"message"}), "spec.replicas: must be non-negative");
  EXPECT_EQ(api::FindString(ev.doc(), {"involvedObject", "kind"}), "ReplicaSet");
  EXPECT_EQ(api::FindString(ev.doc(), {"involvedObject", "name"}), "web");
  EXPECT_EQ(h.script.calls().size(), 1u);
}

TEST(ControllerTest, AThrowingReconcilerIsAnErrorNotACrash) {
  Harness h;
  h.script.Set("web", {[]() -> ReconcileResult { throw std::runtime_error("nil map"); }});
  h.Start();
  h.ctrl->Enqueue(kKey);
  h.WaitForReconciles(1);
  EXPECT_EQ(h.ctrl->stats().panics, 1);
  h.ExpectDelay(milliseconds(5), 2);  // retried like any error
}

TEST(ControllerTest, ShutdownFinishesTheReconcileInFlightAndStartsNoOther) {
  util::FakeClock clock;
  std::mutex mu;
  std::vector<std::string> calls;
  std::atomic<bool> in_flight{false};
  Controller ctrl({.name = "",
                   .reconcile =
                       [&](const api::ObjectKey& k, std::stop_token stop) {
                         {
                           std::lock_guard lock(mu);
                           calls.push_back(k.name);
                         }
                         in_flight = true;
                         // A long reconcile that honours stop.
                         std::mutex m;
                         std::condition_variable_any cv;
                         std::unique_lock l(m);
                         cv.wait(l, stop, [] { return false; });
                         return ReconcileResult::Error(util::Cancelled("stopping"));
                       },
                   .workers = 1,
                   .clock = &clock});
  ctrl.Enqueue({"ns", "first"});
  ctrl.Enqueue({"ns", "second"});
  std::jthread run([&](std::stop_token st) { ctrl.Run(st); });
  while (!in_flight) std::this_thread::yield();
  run.request_stop();
  run.join();  // returns: the reconcile saw stop, "second" was never started
  EXPECT_EQ(calls, (std::vector<std::string>{"first"}));
  EXPECT_EQ(ctrl.queue().NumRequeues({"ns", "first"}), 0);  // a stop is not a failure to retry
  EXPECT_TRUE(ctrl.queue().ShuttingDown());
}

TEST(ControllerTest, WorkersStartOnlyAfterTheCachesSync) {
  auto lw_owned = std::make_unique<FakeListerWatcher>();
  FakeListerWatcher* lw = lw_owned.get();
  SharedInformer informer({.lister_watcher = std::move(lw_owned)});
  std::jthread informer_thread([&](std::stop_token st) { informer.Run(st); });
  util::FakeClock clock;
  std::atomic<int> calls{0};
  std::atomic<bool> synced_at_call{true};
  Controller ctrl({.name = "",
                   .reconcile =
                       [&](const api::ObjectKey&, std::stop_token) {
                         if (!informer.HasSynced()) synced_at_call = false;
                         ++calls;
                         return ReconcileResult::Done();
                       },
                   .clock = &clock,
                   .wait_for_sync = {&informer}});
  ctrl.Enqueue({"ns", "a"});
  std::jthread run([&](std::stop_token st) { ctrl.Run(st); });
  lw->WaitForLists(1);
  lw->PushWatch();
  lw->PushList(MakeList("1", {}));
  while (calls == 0) std::this_thread::yield();
  EXPECT_TRUE(synced_at_call);
}

TEST(ControllerTest, OwnerHandlerEnqueuesTheControllingOwner) {
  util::FakeClock clock;
  Controller ctrl(
      {.name = "",
       .reconcile = [](const api::ObjectKey&, std::stop_token) { return ReconcileResult::Done(); },
       .clock = &clock});
  auto handler = ctrl.EnqueueOwnerHandler("apps", "ReplicaSet");
  api::Object pod;
  pod.set_namespace("ns");
  pod.set_name("web-abcde");
  pod.mutable_metadata()["ownerReferences"] = boost::json::array{
      boost::json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "n1"}},
      boost::json::object{{"apiVersion", "apps/v1"},
                          {"kind", "ReplicaSet"},
                          {"name", "web"},
                          {"controller", true}}};
  handler->OnAdd(std::make_shared<const api::Object>(pod), false);
  api::Object orphan;
  orphan.set_namespace("ns");
  orphan.set_name("lonely");
  handler->OnDelete({{"ns", "lonely"}, std::make_shared<const api::Object>(orphan), true});
  EXPECT_EQ(ctrl.queue().Len(), 1);
  std::optional<api::ObjectKey> key = ctrl.queue().Get();
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(*key, (api::ObjectKey{"ns", "web"}));
}

}  // namespace
}  // namespace converge::client
