// Score plugins: how much a pod would like each feasible node (upstream's Score and
// NormalizeScore extension points with the default profile's weights).
//
//   plugin                             weight  score (0..100 after normalization)
//   TaintToleration                    3       fewer intolerable PreferNoSchedule taints is
//                                              better (counts, normalized in reverse)
//   NodeAffinity                       2       sum of the weights of matching preferred terms
//                                              (normalized to the best node); skipped for pods
//                                              without preferred terms
//   NodeResourcesFit (LeastAllocated)  1       free fraction of cpu and memory after placing the
//                                              pod, counting non-zero requests
//   NodeResourcesBalancedAllocation    1       1 - std deviation of the cpu and memory fractions;
//                                              skipped for pods that request nothing
//
// A node's total is the weighted sum; the highest total wins, ties broken at random.
//
// Pure functions; safe to call from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "scheduler/node_info.h"
#include "scheduler/pod_info.h"

namespace converge::scheduler {

inline constexpr int64_t kMaxNodeScore = 100;

// Raw scores.
int64_t ScoreTaintToleration(const PodInfo& pod, const NodeInfo& node);
int64_t ScoreNodeAffinity(const PodInfo& pod, const NodeInfo& node);
int64_t ScoreLeastAllocated(const PodInfo& pod, const NodeInfo& node);
int64_t ScoreBalancedAllocation(const PodInfo& pod, const NodeInfo& node);

// Upstream helper.DefaultNormalizeScore: scales to [0, max_priority] by the largest score;
// `reverse` turns it into max_priority - score. All zero: all 0 (or all max_priority reversed).
void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<int64_t> scores);

struct ScorePlugin {
  std::string_view name;
  int64_t weight;
  // PreScore: false skips the plugin for this pod (it would score every node alike).
  bool (*applies)(const PodInfo& pod);
  int64_t (*score)(const PodInfo& pod, const NodeInfo& node);
  // Null when raw scores are already in [0, kMaxNodeScore].
  void (*normalize)(std::span<int64_t> scores);
};

// The score plugins of upstream's default profile that Converge implements.
std::span<const ScorePlugin> DefaultScorers();

}  // namespace converge::scheduler
