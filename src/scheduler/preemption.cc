#include "scheduler/preemption.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace converge::scheduler {

namespace {

struct Candidate {
  const NodeInfo* node = nullptr;
  std::vector<PodInfoPtr> victims;
};

// Upstream MoreImportantPod: higher priority first (start time is not tracked here).
bool MoreImportant(const PodInfoPtr& a, const PodInfoPtr& b) {
  return a->priority > b->priority;
}

// SelectVictimsOnNode: an ok status with the victims, or the node's failure.
FilterStatus SelectVictims(const PodInfo& pod, const NodeInfo& node,
                           std::span<const FilterPlugin> filters,
                           std::vector<PodInfoPtr>* victims) {
  NodeInfo trial = node;
  std::vector<PodInfoPtr> potential;
  for (const PodInfoPtr& p : node.pods) {
    if (p->priority < pod.priority) {
      potential.push_back(p);
      trial.RemovePod(p->key);
    }
  }
  if (potential.empty()) {
    FilterStatus s;
    s.code = Code::kUnschedulableAndUnresolvable;
    s.plugin = "DefaultPreemption";
    s.reasons.emplace_back(kNoVictimsMessage);
    return s;
  }
  if (FilterStatus s = RunFilters(filters, pod, trial); !s.ok()) return s;
  // Reprieve as many as possible, most important first.
  std::sort(potential.begin(), potential.end(), MoreImportant);
  for (const PodInfoPtr& p : potential) {
    trial.AddPod(p);
    if (!RunFilters(filters, pod, trial).ok()) {
      trial.RemovePod(p->key);
      victims->push_back(p);
    }
  }
  return {};
}

// pickOneNodeForPreemption without PDBs and start times.
const Candidate* PickCandidate(const std::vector<Candidate>& candidates) {
  const Candidate* best = nullptr;
  auto key = [](const Candidate& c) {
    int64_t highest = std::numeric_limits<int64_t>::min();
    int64_t sum = 0;
    for (const PodInfoPtr& v : c.victims) {
      highest = std::max<int64_t>(highest, v->priority);
      // Shifted so that negative priorities still sum in order, as upstream does.
      sum += static_cast<int64_t>(v->priority) + std::numeric_limits<int32_t>::max() + 1;
    }
    return std::make_tuple(highest, sum, c.victims.size());
  };
  for (const Candidate& c : candidates) {
    if (!best || key(c) < key(*best)) best = &c;
  }
  return best;
}

}  // namespace

PreemptionResult Preempt(const PodInfo& pod, const Snapshot& snapshot, const Diagnosis& diagnosis,
                         std::span<const FilterPlugin> filters) {
  PreemptionResult result;
  if (pod.preempt_never) {
    result.message = "preemption: not eligible due to preemptionPolicy=Never.";
    return result;
  }
  // Victims chosen by an earlier attempt are still terminating on the nominated node: wait for
  // them instead of preempting more (unless that node cannot take the pod at all any more).
  if (!pod.nominated_node_name.empty()) {
    const FilterStatus* nominated_status = nullptr;
    for (const auto& [node, status] : diagnosis.node_statuses) {
      if (node->name() == pod.nominated_node_name) nominated_status = &status;
    }
    const NodeInfo* nominated = snapshot.Get(pod.nominated_node_name);
    if (nominated &&
        !(nominated_status && nominated_status->code == Code::kUnschedulableAndUnresolvable)) {
      for (const PodInfoPtr& p : nominated->pods) {
        if (p->priority < pod.priority && p->pod->being_deleted()) {
          result.message =
              "preemption: not eligible due to a terminating pod on the nominated node.";
          return result;
        }
      }
    }
  }
  Diagnosis dry_run;
  std::vector<Candidate> candidates;
  for (const auto& [node, status] : diagnosis.node_statuses) {
    if (status.code == Code::kUnschedulableAndUnresolvable) {
      FilterStatus s;
      s.code = Code::kUnschedulableAndUnresolvable;
      s.reasons.emplace_back(kPreemptionNotHelpful);
      dry_run.node_statuses.emplace_back(node, std::move(s));
      continue;
    }
    Candidate c;
    FilterStatus s = SelectVictims(pod, *node, filters, &c.victims);
    if (s.ok()) {
      c.node = node;
      candidates.push_back(std::move(c));
    } else {
      dry_run.node_statuses.emplace_back(node, std::move(s));
    }
  }
  if (candidates.empty()) {
    result.message = "preemption: " + FitErrorMessage(snapshot.NumNodes(), dry_run);
    return result;
  }
  const Candidate* best = PickCandidate(candidates);
  result.nominated_node = best->node->name();
  result.victims = best->victims;
  return result;
}

}  // namespace converge::scheduler
