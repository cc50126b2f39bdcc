#include "client/reflector.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "client/api_errors.h"
#include "client/wait.h"

namespace converge::client {

namespace {

// A watch that ends this fast without a single event is suspicious (client-go): something
// rejects it, so the reflector relists after a backoff instead of re-watching in a tight loop.
constexpr util::Clock::Duration kVeryShortWatch = std::chrono::seconds(1);

BackoffOptions WithClock(BackoffOptions b, util::Clock* clock) {
  if (b.clock == nullptr) b.clock = clock;
  return b;
}

}  // namespace

Reflector::Reflector(ReflectorOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()),
      backoff_(WithClock(options_.backoff, clock_)),
      rng_(std::random_device{}()) {}

std::string Reflector::LastSyncResourceVersion() const {
  std::lock_guard lock(mu_);
  return last_sync_resource_version_;
}

void Reflector::SetLastSync(std::string rv) {
  std::lock_guard lock(mu_);
  last_sync_resource_version_ = std::move(rv);
}

void Reflector::SetUnavailable(bool v) {
  std::lock_guard lock(mu_);
  last_sync_resource_version_unavailable_ = v;
}

std::string Reflector::RelistResourceVersion() const {
  std::lock_guard lock(mu_);
  // The version we had is gone (or not there yet): read the latest state consistently.
  if (last_sync_resource_version_unavailable_) return "";
  // First list: any state the server's watch cache has is good enough, and cheap.
  if (last_sync_resource_version_.empty()) return "0";
  // Relist: at least as new as what we have seen, so the cache never goes back in time.
  return last_sync_resource_version_;
}

int64_t Reflector::WatchTimeoutSeconds() {
  double r =
      options_.random ? options_.random() : std::uniform_real_distribution<double>(0, 1)(rng_);
  return static_cast<int64_t>(static_cast<double>(options_.min_watch_timeout.count()) * (r + 1.0));
}

void Reflector::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    util::Status s = ListAndWatch(stop);
    if (stop.stop_requested()) return;
    if (!s.ok()) {
      if (options_.on_error) {
        options_.on_error(s);
      } else {
        spdlog::warn("{}: list and watch failed: {}", options_.name, s.ToString());
      }
    }
    // As client-go's BackoffUntil(sliding): the wait starts after the round ended; a round that
    // ran healthy for longer than reset_after is followed by the initial, short delay.
    if (!SleepFor(*clock_, backoff_.Next(), stop)) return;
  }
}

util::Status Reflector::ListAndWatch(std::stop_token stop) {
  CONVERGE_RETURN_IF_ERROR(List(stop));
  if (options_.resync_period.count() == 0) return Watch(stop);
  std::jthread resync([this, stop](std::stop_token own) {
    std::stop_source both;
    std::stop_callback a(stop, [&] { both.request_stop(); });
    std::stop_callback b(own, [&] { both.request_stop(); });
    RunResync(both.get_token());
  });
  return Watch(stop);  // the resync thread stops when this round ends (jthread destructor)
}

void Reflector::RunResync(std::stop_token stop) {
  while (SleepFor(*clock_, options_.resync_period, stop)) {
    if (!options_.should_resync || options_.should_resync()) options_.store->Resync();
  }
}

util::StatusOr<ObjectList> Reflector::ListPaged(ListOptions options, int64_t page_size,
                                                bool* paginated, std::stop_token stop) {
  *paginated = false;
  options.stop = stop;
  if (options.limit == 0) options.limit = page_size;
  ObjectList all;
  bool first = true;
  for (;;) {
    util::StatusOr<ObjectList> page = options_.lister_watcher->List(options);
    if (!page.ok()) {
      // A continuation that expired (compaction passed the first page's snapshot) falls back to
      // one full list; the first page failing is the caller's to handle.
      if (!(page.status().reason() == "Expired") || options.continue_token.empty()) {
        return page.status();
      }
      options.limit = 0;
      options.continue_token.clear();
      return options_.lister_watcher->List(options);
    }
    if (first && page->continue_token.empty()) return page;  // one page: nothing to merge
    if (first) {
      all.api_version = page->api_version;
      all.kind = page->kind;
      all.resource_version = page->resource_version;
      first = false;
    }
    for (api::Object& item : page->items) all.items.push_back(std::move(item));
    if (page->continue_token.empty()) return all;
    options.continue_token = page->continue_token;
    // "specifying resource version is not allowed when using continue".
    options.resource_version.clear();
    options.resource_version_match.clear();
    *paginated = true;
  }
}

util::Status Reflector::List(std::stop_token stop) {
  ListOptions options;
  options.resource_version = RelistResourceVersion();
  int64_t page_size = options_.page_size;
  if (!paginated_result_ && !options.resource_version.empty() && options.resource_version != "0") {
    // A relist at a known resourceVersion is served from the watch cache only without a limit;
    // paging it would send it to the store (and risk 410 for a compacted snapshot).
    page_size = 0;
  }
  bool paginated = false;
  util::StatusOr<ObjectList> list = ListPaged(options, page_size, &paginated, stop);
  if (!list.ok() && (IsExpired(list.status()) || IsTooLargeResourceVersion(list.status()))) {
    SetUnavailable(true);
    // The version we asked for is unavailable: retry at once with a consistent read.
    ListOptions fresh;
    fresh.resource_version = RelistResourceVersion();
    list = ListPaged(fresh, page_size, &paginated, stop);
  }
  if (!list.ok()) return list.status().WithContext(options_.name + ": list");
  if (options.resource_version == "0" && paginated) paginated_result_ = true;
  SetUnavailable(false);

  std::vector<api::ObjectPtr> items;
  items.reserve(list->items.size());
  for (api::Object& item : list->items) {
    items.push_back(ForStore(std::make_shared<const api::Object>(std::move(item))));
  }
  options_.store->Replace(std::move(items), list->resource_version);
  SetLastSync(list->resource_version);
  return util::Status();
}

api::ObjectPtr Reflector::ForStore(api::ObjectPtr obj) const {
  if (obj == nullptr) return obj;
  const bool strip =
      options_.drop_managed_fields && api::Find(obj->view(), {"metadata", "managedFields"});
  // Objects the in-process watch hands over have neither to do: they are shared as they are.
  if (!strip && (!options_.compact_objects || obj->is_compact())) return obj;
  api::Object copy = *obj;
  if (strip) copy.mutable_metadata().stable_erase("managedFields");
  if (options_.compact_objects && !copy.is_compact()) {
    return std::make_shared<const api::Object>(api::Object::Compact(copy.doc()));
  }
  return std::make_shared<const api::Object>(std::move(copy));
}

util::Status Reflector::Watch(std::stop_token stop) {
  while (!stop.stop_requested()) {
    // Started before the request: some proxies hold the headers until the first event.
    util::Clock::TimePoint start = clock_->Now();
    ListOptions options;
    options.resource_version = LastSyncResourceVersion();
    options.timeout_seconds = WatchTimeoutSeconds();
    options.allow_watch_bookmarks = true;
    options.stop = stop;
    util::StatusOr<std::unique_ptr<Watcher>> w = options_.lister_watcher->Watch(options);
    if (!w.ok()) {
      if (stop.stop_requested()) return util::Status();
      if (IsRetriableWatchError(w.status())) {
        // The server is away or shedding load; it will most likely take the watch back from
        // where we are, so wait and re-watch rather than relist.
        if (!SleepFor(*clock_, backoff_.Next(), stop)) return util::Status();
        continue;
      }
      return w.status().WithContext(options_.name + ": watch");
    }
    util::Status s = HandleWatch(start, **w, stop);
    if (stop.stop_requested()) return util::Status();
    if (s.ok()) continue;  // closed cleanly: resume from the last resourceVersion
    if (IsExpired(s)) {
      // Not marked unavailable: a list at the last resourceVersion returns data at least that
      // fresh, from the watch cache; only if that list fails too do we read consistently.
      spdlog::info("{}: watch closed: {}", options_.name, s.ToString());
    } else if (IsTooManyRequests(s)) {
      if (!SleepFor(*clock_, backoff_.Next(), stop)) return util::Status();
      continue;
    } else {
      spdlog::warn("{}: watch ended: {}", options_.name, s.ToString());
    }
    return util::Status();  // Run backs off and relists
  }
  return util::Status();
}

util::Status Reflector::HandleWatch(util::Clock::TimePoint start, Watcher& w,
                                    std::stop_token stop) {
  int64_t events = 0;
  for (;;) {
    util::StatusOr<std::optional<WatchEvent>> next = w.Next();
    if (!next.ok()) {
      if (stop.stop_requested()) return util::Status();
      util::Code code = next.status().code();
      // A lost connection or our own deadline ends a watch like the server closing it does.
      if (code == util::Code::kUnavailable || code == util::Code::kDeadlineExceeded) break;
      return next.status();
    }
    if (!next->has_value()) break;
    WatchEvent& ev = **next;
    if (ev.type == EventType::kError) return ev.error;
    std::string rv(ev.object->resource_version());
    if (ev.type != EventType::kBookmark) ev.object = ForStore(std::move(ev.object));
    switch (ev.type) {
      case EventType::kAdded: options_.store->Add(std::move(ev.object)); break;
      case EventType::kModified: options_.store->Update(std::move(ev.object)); break;
      case EventType::kDeleted: options_.store->Delete(std::move(ev.object)); break;
      case EventType::kBookmark: break;  // progress only: the resourceVersion below
      case EventType::kError: break;
    }
    SetLastSync(std::move(rv));
    ++events;
  }
  if (events == 0 && clock_->Now() - start < kVeryShortWatch) {
    return util::Unavailable(
        "very short watch: unexpected watch close - watch lasted less than a second and no "
        "items received");
  }
  return util::Status();
}

}  // namespace converge::client
