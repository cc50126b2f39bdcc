// The scheduling algorithm for one pod over a snapshot (upstream schedulePod): filter the nodes,
// score the feasible ones, pick the best — or explain why none fits.
//
//   1. Filter nodes in round-robin order, starting where the previous cycle stopped, until
//      NumFeasibleNodesToFind nodes pass (or every node was tried). Upstream's
//      percentageOfNodesToScore: all nodes below 100; otherwise a percentage that falls from 50%
//      by one point per 125 nodes down to 5% (10% at 5,000 nodes), and never fewer than 100.
//   2. One feasible node: take it. Several: run the score plugins, normalize, weight, sum; the
//      highest total wins, ties broken uniformly at random (reservoir sampling).
//   3. None: a FitError whose message is upstream's, e.g.
//      "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."
//
// Thread-safety: a ScheduleAlgorithm is used by the scheduling thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "scheduler/filters.h"
#include "scheduler/scores.h"
#include "scheduler/snapshot.h"

namespace converge::scheduler {

// Why a pod fits no node: every node's rejecting status (upstream framework.Diagnosis).
struct Diagnosis {
  std::vector<std::pair<const NodeInfo*, FilterStatus>> node_statuses;
  // Plugins that rejected at least one node (upstream UnschedulablePlugins): what the queue
  // watches for cluster events that may help.
  std::vector<std::string_view> unschedulable_plugins;
  // The preemption (PostFilter) outcome, already worded: "preemption: 0/3 nodes are available:
  // 3 No preemption victims found for incoming pod." Empty when preemption did not run.
  std::string post_filter_message;
};

// Upstream FitError.Error(): "0/N nodes are available: <sorted "count reason" list>." then the
// PostFilter message as " <msg>.".
std::string FitErrorMessage(size_t num_all_nodes, const Diagnosis& diagnosis);

// Upstream ErrNoNodesAvailable.
inline constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";

struct ScheduleResult {
  std::string suggested_host;  // empty: the pod fits nowhere (see diagnosis)
  int evaluated_nodes = 0;     // nodes filtered
  int feasible_nodes = 0;      // nodes that passed
  Diagnosis diagnosis;         // when suggested_host is empty
};

struct ScheduleAlgorithmOptions {
  // 0: adaptive, as upstream (see above); otherwise 1..100.
  int percentage_of_nodes_to_score = 0;
  std::span<const FilterPlugin> filters = DefaultFilters();
  std::span<const ScorePlugin> scorers = DefaultScorers();
  uint64_t seed = 0;  // the tie-break's random source; 0: random_device
};

class ScheduleAlgorithm {
 public:
  explicit ScheduleAlgorithm(ScheduleAlgorithmOptions options);

  // Schedules one pod on `snapshot` (at least one node; callers report kNoNodesAvailable
  // otherwise).
  ScheduleResult Schedule(const PodInfo& pod, const Snapshot& snapshot);

  // How many feasible nodes to look for among `num_all_nodes` (upstream numFeasibleNodesToFind).
  static int NumFeasibleNodesToFind(int percentage, int num_all_nodes);

  const ScheduleAlgorithmOptions& options() const { return options_; }

 private:
  // Fills feasible_ (and the diagnosis for rejected nodes).
  void FindFeasible(const PodInfo& pod, const Snapshot& snapshot, ScheduleResult* result);
  std::string Prioritize(const PodInfo& pod);

  const ScheduleAlgorithmOptions options_;
  std::mt19937_64 rng_;
  size_t next_start_node_index_ = 0;
  // Scratch space reused across cycles.
  std::vector<const NodeInfo*> feasible_;
  std::vector<int64_t> totals_;
  std::vector<int64_t> plugin_scores_;
};

}  // namespace converge::scheduler
