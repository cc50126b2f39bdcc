// CacheChangeDetector: whether a watch cache changed since the last look, without a thread or a
// callback — it polls a watch of its own on the cache. Sources that rebuild a snapshot from a
// cache (RBAC policy, webhook configurations) ask it on each use and rebuild only on a change.
//
// Thread-safety: not thread-safe; the owner serialises calls (the sources hold their lock).
#pragma once

#include <cstddef>
#include <memory>

#include "apiserver/watch_cache.h"

namespace converge::apiserver {

class CacheChangeDetector {
 public:
  // `cache` may be null (nothing to watch: never a change). `buffer` bounds the watch's queue;
  // a burst beyond it ends the watch, which the next call reports as a change.
  CacheChangeDetector(WatchCache* cache, size_t buffer) : cache_(cache), buffer_(buffer) {}

  // True on the first call, whenever events arrived since the last call, and after the watch
  // ended (overflow, relist: it is started again from the current state).
  bool Changed();

 private:
  WatchCache* const cache_;
  const size_t buffer_;
  std::shared_ptr<CacheWatcher> watcher_;
};

}  // namespace converge::apiserver
