// FakeListerWatcher: a scripted ListerWatcher for testing reflectors, informers and controllers
// without a server. The test queues list results and watches; the code under test blocks in List
// or Watch until the next one is queued (or its stop token fires), and every call's options are
// recorded, so tests can assert the exact resourceVersion sequence.
//
//   FakeListerWatcher lw;
//   lw.PushList(MakeList("10", {pod_a}));
//   std::shared_ptr<FakeWatcher> w = lw.PushWatch();
//   ... start the informer ...
//   w->Push(EventType::kAdded, pod_b);   // delivered to the reflector
//   w->End();                            // the server closed the watch
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <variant>
#include <vector>

#include "client/list_watch.h"

namespace converge::client {

// A watch the test drives.
class FakeWatcher final : public Watcher {
 public:
  void Push(WatchEvent ev);
  void Push(EventType type, api::ObjectPtr obj) { Push(WatchEvent{type, std::move(obj), {}}); }
  // A BOOKMARK at `resource_version`.
  void PushBookmark(const std::string& resource_version);
  // An ERROR event carrying `status` (e.g. a 410 Expired).
  void PushError(util::Status status);
  void End();                      // the server closes the watch cleanly
  void Fail(util::Status status);  // the connection fails (Next returns the status)
  bool stopped() const;            // the consumer's stop token fired

  util::StatusOr<std::optional<WatchEvent>> Next() override;

  void set_stop(std::stop_token stop);

 private:
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<WatchEvent> events_;  // guarded by mu_
  bool ended_ = false;             // guarded by mu_
  util::Status failure_;           // guarded by mu_
  std::stop_token stop_;           // guarded by mu_
};

class FakeListerWatcher final : public ListerWatcher {
 public:
  // Queues the answer to the next List call.
  void PushList(util::StatusOr<ObjectList> result);
  // Queues a successful Watch and returns the watcher to drive.
  std::shared_ptr<FakeWatcher> PushWatch();
  // Queues a failed Watch request.
  void PushWatchError(util::Status status);

  util::StatusOr<ObjectList> List(const ListOptions& options) override;
  util::StatusOr<std::unique_ptr<Watcher>> Watch(const ListOptions& options) override;

  // Options of every call so far (stop tokens cleared).
  std::vector<ListOptions> lists() const;
  std::vector<ListOptions> watches() const;
  // Blocks until at least n List / Watch calls have been made (answered or waiting).
  void WaitForLists(size_t n) const;
  void WaitForWatches(size_t n) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable_any cv_;
  std::deque<util::StatusOr<ObjectList>> list_results_;  // guarded by mu_
  std::deque<std::variant<std::shared_ptr<FakeWatcher>, util::Status>> watch_results_;  // mu_
  std::vector<ListOptions> lists_;    // guarded by mu_
  std::vector<ListOptions> watches_;  // guarded by mu_
};

// A list result at `resource_version` holding copies of `items`.
ObjectList MakeList(const std::string& resource_version, const std::vector<api::ObjectPtr>& items,
                    const std::string& continue_token = {});

}  // namespace converge::client
