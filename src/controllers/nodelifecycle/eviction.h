// Taint-based eviction (upstream's taint eviction controller, formerly the NoExecute taint
// manager): a pod on a node with NoExecute taints is deleted
//   - at once when some taint has no matching toleration;
//   - after the smallest tolerationSeconds of the tolerations used (counted from when the taint
//     was added) when all are tolerated;
//   - never when every used toleration has no tolerationSeconds.
//
// The API server's DefaultTolerationSeconds admission gives pods not-ready and unreachable
// tolerations of 300 s. `implicit_toleration_seconds` stands in for it against servers that lack
// it: when set, a pod without a toleration for one of those two taints is treated as tolerating
// it for that long. Unset (the default, as upstream), such a pod is evicted at once.
//
// Pods already being deleted, and pods that finished (Succeeded/Failed), are left alone.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "api/object.h"
#include "controllers/nodelifecycle/taints.h"

namespace converge::controllers::nodelifecycle {

struct EvictionOptions {
  std::optional<int64_t> implicit_toleration_seconds;
};

struct EvictionPlan {
  std::vector<api::ObjectPtr> evict;
  // When the next pod's toleration runs out; nullopt: nothing pending.
  std::optional<std::chrono::nanoseconds> recheck_after;
};

EvictionPlan DecideEvictions(const std::vector<Taint>& node_taints,
                             const std::vector<api::ObjectPtr>& pods,
                             std::chrono::system_clock::time_point now,
                             const EvictionOptions& options);

}  // namespace converge::controllers::nodelifecycle
