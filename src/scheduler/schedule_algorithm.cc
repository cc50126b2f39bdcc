#include "scheduler/schedule_algorithm.h"

#include <algorithm>
#include <map>

namespace converge::scheduler {

namespace {

// Upstream minFeasibleNodesToFind / minFeasibleNodesPercentageToFind.
constexpr int kMinFeasibleNodesToFind = 100;
constexpr int kMinFeasibleNodesPercentageToFind = 5;

}  // namespace

std::string FitErrorMessage(size_t num_all_nodes, const Diagnosis& diagnosis) {
  std::string msg = "0/" + std::to_string(num_all_nodes) + " nodes are available:";
  std::map<std::string_view, int> reasons;
  for (const auto& [node, status] : diagnosis.node_statuses) {
    for (const std::string& r : status.reasons) ++reasons[r];
  }
  std::vector<std::string> histogram;
  histogram.reserve(reasons.size());
  for (const auto& [reason, count] : reasons) {
    histogram.push_back(std::to_string(count) + " " + std::string(reason));
  }
  // Go's sort.Strings on "count reason": the count is compared as text, as upstream does.
  std::sort(histogram.begin(), histogram.end());
  if (!histogram.empty()) {
    msg += " ";
    for (size_t i = 0; i < histogram.size(); ++i) {
      if (i > 0) msg += ", ";
      msg += histogram[i];
    }
    msg += ".";
  }
  if (!diagnosis.post_filter_message.empty()) {
    msg += " " + diagnosis.post_filter_message + ".";
  }
  return msg;
}

ScheduleAlgorithm::ScheduleAlgorithm(ScheduleAlgorithmOptions options)
    : options_(std::move(options)),
      rng_(options_.seed != 0 ? options_.seed : std::random_device{}()) {}

int ScheduleAlgorithm::NumFeasibleNodesToFind(int percentage, int num_all_nodes) {
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  if (percentage <= 0) {
    percentage = 50 - num_all_nodes / 125;
    if (percentage < kMinFeasibleNodesPercentageToFind) {
      percentage = kMinFeasibleNodesPercentageToFind;
    }
  }
  if (percentage >= 100) return num_all_nodes;
  int num = static_cast<int>(static_cast<int64_t>(num_all_nodes) * percentage / 100);
  return std::max(num, kMinFeasibleNodesToFind);
}

void ScheduleAlgorithm::FindFeasible(const PodInfo& pod, const Snapshot& snapshot,
                                     ScheduleResult* result) {
  const std::vector<NodeInfo*>& nodes = snapshot.nodes();
  const size_t n = nodes.size();
  const size_t to_find = static_cast<size_t>(
      NumFeasibleNodesToFind(options_.percentage_of_nodes_to_score, static_cast<int>(n)));
  feasible_.clear();
  if (next_start_node_index_ >= n) next_start_node_index_ = 0;
  size_t processed = 0;
  for (; processed < n && feasible_.size() < to_find; ++processed) {
    const NodeInfo* node = nodes[(next_start_node_index_ + processed) % n];
    FilterStatus status = RunFilters(options_.filters, pod, *node);
    if (status.ok()) {
      feasible_.push_back(node);
      continue;
    }
    auto& plugins = result->diagnosis.unschedulable_plugins;
    if (std::find(plugins.begin(), plugins.end(), status.plugin) == plugins.end()) {
      plugins.push_back(status.plugin);
    }
    result->diagnosis.node_statuses.emplace_back(node, std::move(status));
  }
  next_start_node_index_ = (next_start_node_index_ + processed) % n;
  result->evaluated_nodes = static_cast<int>(processed);
  result->feasible_nodes = static_cast<int>(feasible_.size());
}

std::string ScheduleAlgorithm::Prioritize(const PodInfo& pod) {
  const size_t n = feasible_.size();
  totals_.assign(n, 0);
  plugin_scores_.resize(n);
  for (const ScorePlugin& p : options_.scorers) {
    if (!p.applies(pod)) continue;
    for (size_t i = 0; i < n; ++i) plugin_scores_[i] = p.score(pod, *feasible_[i]);
    if (p.normalize) p.normalize(std::span<int64_t>(plugin_scores_.data(), n));
    for (size_t i = 0; i < n; ++i) totals_[i] += plugin_scores_[i] * p.weight;
  }
  // Reservoir sampling among the nodes with the highest total.
  size_t selected = 0;
  int64_t best = totals_[0];
  uint64_t ties = 1;
  for (size_t i = 1; i < n; ++i) {
    if (totals_[i] > best) {
      best = totals_[i];
      selected = i;
      ties = 1;
    } else if (totals_[i] == best) {
      ++ties;
      if (std::uniform_int_distribution<uint64_t>(0, ties - 1)(rng_) == 0) selected = i;
    }
  }
  return feasible_[selected]->name();
}

ScheduleResult ScheduleAlgorithm::Schedule(const PodInfo& pod, const Snapshot& snapshot) {
  ScheduleResult result;
  if (snapshot.NumNodes() == 0) return result;
  FindFeasible(pod, snapshot, &result);
  if (feasible_.empty()) return result;
  result.diagnosis = {};
  if (feasible_.size() == 1) {
    result.suggested_host = feasible_[0]->name();
  } else {
    result.suggested_host = Prioritize(pod);
  }
  return result;
}

}  // namespace converge::scheduler
