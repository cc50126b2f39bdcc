#include "scheduler/scores.h"

#include <algorithm>
#include <cmath>

#include "scheduler/filters.h"

namespace converge::scheduler {

namespace {

int64_t LeastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

bool Always(const PodInfo&) {
  return true;
}

bool HasPreferredAffinity(const PodInfo& pod) {
  return !pod.preferred_affinity.empty();
}

// Best-effort pods would all be drawn to the same nodes by balance alone (upstream issue
// 129138), so BalancedAllocation skips pods that request neither cpu nor memory.
bool RequestsCpuOrMemory(const PodInfo& pod) {
  return pod.requests.milli_cpu != 0 || pod.requests.memory != 0;
}

void NormalizeTaintToleration(std::span<int64_t> scores) {
  DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/true, scores);
}

void NormalizeNodeAffinity(std::span<int64_t> scores) {
  DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/false, scores);
}

}  // namespace

int64_t ScoreTaintToleration(const PodInfo& pod, const NodeInfo& node) {
  int64_t intolerable = 0;
  for (const Taint& taint : node.node->taints) {
    if (taint.effect != kEffectPreferNoSchedule) continue;
    bool tolerated = false;
    for (const Toleration& t : *pod.tolerations) {
      // Only tolerations that can apply to PreferNoSchedule count (empty effect or that one).
      if ((t.effect.empty() || t.effect == kEffectPreferNoSchedule) && t.ToleratesTaint(taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) ++intolerable;
  }
  return intolerable;
}

int64_t ScoreNodeAffinity(const PodInfo& pod, const NodeInfo& node) {
  int64_t score = 0;
  for (const PreferredSchedulingTerm& t : pod.preferred_affinity) {
    if (t.preference.Matches(node.name(), node.node->labels)) score += t.weight;
  }
  return score;
}

int64_t ScoreLeastAllocated(const PodInfo& pod, const NodeInfo& node) {
  // Resources cpu and memory, weight 1 each; a resource the node has none of is left out.
  const Resource& alloc = node.node->allocatable;
  int64_t score = 0;
  int64_t weights = 0;
  if (alloc.milli_cpu != 0) {
    score +=
        LeastRequestedScore(node.non_zero_cpu + pod.non_zero_requests.milli_cpu, alloc.milli_cpu);
    ++weights;
  }
  if (alloc.memory != 0) {
    score += LeastRequestedScore(node.non_zero_memory + pod.non_zero_requests.memory, alloc.memory);
    ++weights;
  }
  return weights == 0 ? 0 : score / weights;
}

int64_t ScoreBalancedAllocation(const PodInfo& pod, const NodeInfo& node) {
  // Actual (not non-zero) requests, as upstream's useRequested.
  const Resource& alloc = node.node->allocatable;
  double fractions[2];
  int n = 0;
  if (alloc.milli_cpu != 0) {
    double f = static_cast<double>(node.requested.milli_cpu + pod.requests.milli_cpu) /
               static_cast<double>(alloc.milli_cpu);
    fractions[n++] = f > 1 ? 1 : f;
  }
  if (alloc.memory != 0) {
    double f = static_cast<double>(node.requested.memory + pod.requests.memory) /
               static_cast<double>(alloc.memory);
    fractions[n++] = f > 1 ? 1 : f;
  }
  double std_dev = n == 2 ? std::abs((fractions[0] - fractions[1]) / 2) : 0;
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<int64_t> scores) {
  int64_t max_count = 0;
  for (int64_t s : scores) max_count = std::max(max_count, s);
  if (max_count == 0) {
    if (reverse) {
      for (int64_t& s : scores) s = max_priority;
    }
    return;
  }
  for (int64_t& s : scores) {
    s = max_priority * s / max_count;
    if (reverse) s = max_priority - s;
  }
}

std::span<const ScorePlugin> DefaultScorers() {
  static const ScorePlugin kScorers[] = {
      {kTaintToleration, 3, &Always, &ScoreTaintToleration, &NormalizeTaintToleration},
      {kNodeAffinity, 2, &HasPreferredAffinity, &ScoreNodeAffinity, &NormalizeNodeAffinity},
      {kNodeResourcesFit, 1, &Always, &ScoreLeastAllocated, nullptr},
      {kNodeResourcesBalancedAllocation, 1, &RequestsCpuOrMemory, &ScoreBalancedAllocation,
       nullptr},
  };
  return kScorers;
}

}  // namespace converge::scheduler
