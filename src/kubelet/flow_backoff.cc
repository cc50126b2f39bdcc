#include "kubelet/flow_backoff.h"

#include <algorithm>

namespace converge::kubelet {

Duration FlowBackoff::Next(const std::string& key, WallTime t) {
  auto it = entries_.find(key);
  if (it == entries_.end() || Expired(it->second, t)) {
    Entry& e = entries_[key];
    e.delay = initial_;
    e.last_update = t;
    return e.delay;
  }
  Entry& e = it->second;
  e.delay = std::min(e.delay * 2, max_);
  e.last_update = t;
  return e.delay;
}

Duration FlowBackoff::Get(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? Duration{0} : it->second.delay;
}

bool FlowBackoff::IsInBackOffSince(const std::string& key, WallTime event_time,
                                   WallTime now) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  if (Expired(it->second, event_time)) return false;
  return now - event_time < it->second.delay;
}

bool FlowBackoff::IsInBackOffSinceUpdate(const std::string& key, WallTime now) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  if (Expired(it->second, now)) return false;
  return now - it->second.last_update < it->second.delay;
}

bool FlowBackoff::EndOfBackOff(const std::string& key, WallTime* end) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  *end = it->second.last_update + it->second.delay;
  return true;
}

void FlowBackoff::GC(WallTime now) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (Expired(it->second, now)) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace converge::kubelet
