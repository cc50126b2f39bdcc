// Which pods a controller deletes first when it scales down (upstream's ActivePodsWithRanks with
// the LogarithmicScaleDown and PodDeletionCost behaviour that is on by default since 1.22).
//
// PodDeletesFirst(a, b) is true when `a` should go before `b`. The comparison, in order:
//   1. unassigned (no spec.nodeName) < assigned;
//   2. phase Pending < Unknown < Running (an unset phase counts as Pending);
//   3. not ready < ready;
//   4. lower controller.kubernetes.io/pod-deletion-cost annotation < higher (default 0);
//   5. higher rank < lower rank: the rank is how many related active pods share the pod's node,
//      so pods doubled up on a node go first;
//   6. both ready: the one ready for less time, bucketed by log2(now - readyTime) (pods in the
//      same bucket are ordered by uid, so that the choice is random but stable); a missing ready
//      time goes first;
//   7. more container restarts < fewer;
//   8. newer creationTimestamp < older, bucketed by log2 as in 6; a missing time goes first.
//
// Example: with pods A (Pending), B (Running, not ready) and C (Running, ready for 1 h) and a
// scale-down by 2, A and B are deleted: an unstarted or unready pod costs the least to lose.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>
#include <vector>

#include "api/object.h"
#include "util/clock.h"

namespace converge::controllers {

inline constexpr std::string_view kPodDeletionCostAnnotation =
    "controller.kubernetes.io/pod-deletion-cost";

struct RankedPod {
  const api::Object* pod = nullptr;
  int rank = 0;  // related active pods on the same node
};

bool PodDeletesFirst(const RankedPod& a, const RankedPod& b, util::Clock::WallTime now);

// The `count` pods of `pods` to delete first, ranking each by the active pods of `related` (pods
// of the same owner, including `pods` themselves) on its node. Returns all of them when count >=
// pods.size(), in the given order (no need to rank).
std::vector<api::ObjectPtr> PodsToDelete(const std::vector<api::ObjectPtr>& pods,
                                         const std::vector<api::ObjectPtr>& related, size_t count,
                                         util::Clock::WallTime now);

}  // namespace converge::controllers
