// FlowBackoff: per-key exponential backoff over explicit times (upstream's
// k8s.io/client-go/util/flowcontrol.Backoff), as the kubelet uses it for image pulls and for
// restarting crashed containers.
//
// Each key has a current delay and the time of its last update. Next(key, t) records a failure at
// t: the delay starts at `initial` and doubles on every later failure, capped at `max`. An entry
// whose last update is more than 2·max before t has expired: the next failure starts over at
// `initial` (a container that ran fine for ten minutes restarts quickly again).
//
// Worked example with upstream's kubelet constants (10 s initial, 300 s max):
//   Next(k, 0s)   → delay 10s     IsInBackOffSince(k, 0s) at 5s  → true  (5 < 10)
//   Next(k, 20s)  → delay 20s     IsInBackOffSince(k, 20s) at 30s → true (10 < 20)
//   Next(k, 50s)  → delay 40s ... 80s, 160s, 300s, 300s
//   Next(k, 50s + 700s) → expired (700 > 600) → delay 10s again
//
// Thread-safety: a value; not safe for concurrent mutation.
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace converge::kubelet {

using WallTime = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;

class FlowBackoff {
 public:
  FlowBackoff(Duration initial, Duration max) : initial_(initial), max_(max) {}

  // Records a failure of `key` at `t` and returns the delay now in force.
  Duration Next(const std::string& key, WallTime t);
  // The delay in force for `key` (zero when none).
  Duration Get(const std::string& key) const;
  // Whether `now` is still inside the delay that started at `event_time` (upstream
  // IsInBackOffSince: the crash-loop check, measured from the container's finishedAt).
  bool IsInBackOffSince(const std::string& key, WallTime event_time, WallTime now) const;
  // Whether `now` is still inside the delay that started at the last update (upstream
  // IsInBackOffSinceUpdate: the image-pull check).
  bool IsInBackOffSinceUpdate(const std::string& key, WallTime now) const;
  // Sets *end to when the delay that started at the last update ends (the earliest retry);
  // false when `key` has no entry.
  bool EndOfBackOff(const std::string& key, WallTime* end) const;
  void Reset(const std::string& key) { entries_.erase(key); }
  // Drops entries that have expired at `now` (upstream GC).
  void GC(WallTime now);
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    Duration delay{0};
    WallTime last_update;
  };
  bool Expired(const Entry& e, WallTime t) const { return t - e.last_update > 2 * max_; }

  Duration initial_;
  Duration max_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace converge::kubelet
