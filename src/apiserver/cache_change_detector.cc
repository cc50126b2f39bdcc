#include "apiserver/cache_change_detector.h"

#include <vector>

namespace converge::apiserver {

bool CacheChangeDetector::Changed() {
  if (cache_ == nullptr) return false;
  if (watcher_) {
    std::vector<WatchItem> items;
    switch (watcher_->Poll(&items, [] {})) {
      case CacheWatcher::PollResult::kPending: return false;
      case CacheWatcher::PollResult::kData: return true;
      case CacheWatcher::PollResult::kEnd: break;
    }
    watcher_->Stop();
    watcher_.reset();
  }
  // Started from the current state: its synthetic ADDED events are the change the caller
  // rebuilds from (with a List) on this call; the next call sees only what came since.
  auto started = cache_->Watch(WatchFilter{}, WatchCache::WatchOptions{}, buffer_);
  if (started.ok()) watcher_ = std::move(*started);
  return true;
}

}  // namespace converge::apiserver
