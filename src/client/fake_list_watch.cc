#include "client/fake_list_watch.h"

namespace converge::client {

void FakeWatcher::Push(WatchEvent ev) {
  std::lock_guard lock(mu_);
  events_.push_back(std::move(ev));
  cv_.notify_all();
}

void FakeWatcher::PushBookmark(const std::string& resource_version) {
  api::Object o;
  o.set_resource_version(resource_version);
  Push(EventType::kBookmark, std::make_shared<const api::Object>(std::move(o)));
}

void FakeWatcher::PushError(util::Status status) {
  Push(WatchEvent{EventType::kError, nullptr, std::move(status)});
}

void FakeWatcher::End() {
  std::lock_guard lock(mu_);
  ended_ = true;
  cv_.notify_all();
}

void FakeWatcher::Fail(util::Status status) {
  std::lock_guard lock(mu_);
  ended_ = true;
  failure_ = std::move(status);
  cv_.notify_all();
}

bool FakeWatcher::stopped() const {
  std::lock_guard lock(mu_);
  return stop_.stop_requested();
}

void FakeWatcher::set_stop(std::stop_token stop) {
  std::lock_guard lock(mu_);
  stop_ = std::move(stop);
}

util::StatusOr<std::optional<WatchEvent>> FakeWatcher::Next() {
  std::unique_lock lock(mu_);
  std::stop_token stop = stop_;
  bool ready = cv_.wait(lock, stop, [this] { return !events_.empty() || ended_; });
  if (!ready) return util::Cancelled("fake watch: stopped");
  if (!events_.empty()) {
    WatchEvent ev = std::move(events_.front());
    events_.pop_front();
    return std::optional<WatchEvent>(std::move(ev));
  }
  if (!failure_.ok()) return failure_;
  return std::optional<WatchEvent>();
}

void FakeListerWatcher::PushList(util::StatusOr<ObjectList> result) {
  std::lock_guard lock(mu_);
  list_results_.push_back(std::move(result));
  cv_.notify_all();
}

std::shared_ptr<FakeWatcher> FakeListerWatcher::PushWatch() {
  auto w = std::make_shared<FakeWatcher>();
  std::lock_guard lock(mu_);
  watch_results_.push_back(w);
  cv_.notify_all();
  return w;
}

void FakeListerWatcher::PushWatchError(util::Status status) {
  std::lock_guard lock(mu_);
  watch_results_.push_back(std::move(status));
  cv_.notify_all();
}

util::StatusOr<ObjectList> FakeListerWatcher::List(const ListOptions& options) {
  std::unique_lock lock(mu_);
  ListOptions recorded = options;
  recorded.stop = {};
  lists_.push_back(std::move(recorded));
  cv_.notify_all();
  if (!cv_.wait(lock, options.stop, [this] { return !list_results_.empty(); })) {
    return util::Cancelled("fake list: stopped");
  }
  util::StatusOr<ObjectList> r = std::move(list_results_.front());
  list_results_.pop_front();
  return r;
}

util::StatusOr<std::unique_ptr<Watcher>> FakeListerWatcher::Watch(const ListOptions& options) {
  std::unique_lock lock(mu_);
  ListOptions recorded = options;
  recorded.stop = {};
  watches_.push_back(std::move(recorded));
  cv_.notify_all();
  if (!cv_.wait(lock, options.stop, [this] { return !watch_results_.empty(); })) {
    return util::Cancelled("fake watch: stopped");
  }
  auto r = std::move(watch_results_.front());
  watch_results_.pop_front();
  if (std::holds_alternative<util::Status>(r)) return std::get<util::Status>(r);
  std::shared_ptr<FakeWatcher> w = std::get<std::shared_ptr<FakeWatcher>>(r);
  w->set_stop(options.stop);
  // The consumer owns a handle that forwards to the shared watcher the test keeps.
  struct Handle final : Watcher {
    std::shared_ptr<FakeWatcher> w;
    util::StatusOr<std::optional<WatchEvent>> Next() override { return w->Next(); }
  };
  auto h = std::make_unique<Handle>();
  h->w = std::move(w);
  return std::unique_ptr<Watcher>(std::move(h));
}

std::vector<ListOptions> FakeListerWatcher::lists() const {
  std::lock_guard lock(mu_);
  return lists_;
}

std::vector<ListOptions> FakeListerWatcher::watches() const {
  std::lock_guard lock(mu_);
  return watches_;
}

void FakeListerWatcher::WaitForLists(size_t n) const {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return lists_.size() >= n; });
}

void FakeListerWatcher::WaitForWatches(size_t n) const {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return watches_.size() >= n; });
}

ObjectList MakeList(const std::string& resource_version, const std::vector<api::ObjectPtr>& items,
                    const std::string& continue_token) {
  ObjectList l;
  l.resource_version = resource_version;
  l.continue_token = continue_token;
  for (const api::ObjectPtr& o : items) l.items.push_back(*o);
  return l;
}

}  // namespace converge::client
