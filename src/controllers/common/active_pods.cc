#include "controllers/common/active_pods.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "controllers/common/pod_util.h"

namespace converge::controllers {

namespace {

int PhaseOrdinal(std::string_view phase) {
  if (phase == "Unknown") return 1;
  if (phase == "Running") return 2;
  return 0;  // Pending, or unset
}

int64_t DeletionCost(const api::Object& pod) {
  std::optional<std::string_view> v = pod.annotation(kPodDeletionCostAnnotation);
  if (!v) return 0;
  int32_t cost = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), cost);
  if (ec != std::errc() || ptr != v->data() + v->size()) return 0;  // invalid: treated as unset
  return cost;
}

// floor(log2(now - t)) in nanoseconds, -1 for t at or after now (upstream's logarithmicRankDiff).
int64_t LogBucket(util::Clock::WallTime t, util::Clock::WallTime now) {
  auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(now - t).count();
  if (d <= 0) return -1;
  return static_cast<int64_t>(std::log2(static_cast<double>(d)));
}

// Upstream's ordering of two times where "newer goes first" and a missing time goes before
// everything: returns nullopt when both are equal (ties fall through to the next rule).
std::optional<bool> NewerFirst(const std::optional<util::Clock::WallTime>& a,
                               const std::optional<util::Clock::WallTime>& b, const api::Object& pa,
                               const api::Object& pb, util::Clock::WallTime now) {
  if (a == b) return std::nullopt;
  if (!a || !b) return !a.has_value();
  int64_t diff = LogBucket(*a, now) - LogBucket(*b, now);
  if (diff == 0) return pa.uid() < pb.uid();
  return diff < 0;
}

}  // namespace

bool PodDeletesFirst(const RankedPod& ra, const RankedPod& rb, util::Clock::WallTime now) {
  const api::Object& a = *ra.pod;
  const api::Object& b = *rb.pod;
  std::string_view node_a = api::FindString(a.view(), {"spec", "nodeName"});
  std::string_view node_b = api::FindString(b.view(), {"spec", "nodeName"});
  // 1. Unassigned < assigned.
  if (node_a != node_b && (node_a.empty() || node_b.empty())) return node_a.empty();
  // 2. Pending < Unknown < Running.
  int pa = PhaseOrdinal(PodPhase(a));
  int pb = PhaseOrdinal(PodPhase(b));
  if (pa != pb) return pa < pb;
  // 3. Not ready < ready.
  bool ready_a = IsPodReady(a);
  bool ready_b = IsPodReady(b);
  if (ready_a != ready_b) return !ready_a;
  // 4. Lower deletion cost < higher.
  int64_t cost_a = DeletionCost(a);
  int64_t cost_b = DeletionCost(b);
  if (cost_a != cost_b) return cost_a < cost_b;
  // 5. Doubled up < not doubled up.
  if (ra.rank != rb.rank) return ra.rank > rb.rank;
  // 6. Ready for less time < more time.
  if (ready_a && ready_b) {
    if (std::optional<bool> r = NewerFirst(PodReadyTime(a), PodReadyTime(b), a, b, now)) {
      return *r;
    }
  }
  // 7. More restarts < fewer.
  int64_t restarts_a = MaxContainerRestarts(a);
  int64_t restarts_b = MaxContainerRestarts(b);
  if (restarts_a != restarts_b) return restarts_a > restarts_b;
  // 8. Newer < older.
  if (std::optional<bool> r = NewerFirst(CreationTime(a), CreationTime(b), a, b, now)) return *r;
  return false;
}

std::vector<api::ObjectPtr> PodsToDelete(const std::vector<api::ObjectPtr>& pods,
                                         const std::vector<api::ObjectPtr>& related, size_t count,
                                         util::Clock::WallTime now) {
  if (count >= pods.size()) return pods;
  std::map<std::string, int, std::less<>> on_node;
  for (const api::ObjectPtr& p : related) {
    if (p != nullptr && IsPodActive(*p)) {
      ++on_node[std::string(api::FindString(p->view(), {"spec", "nodeName"}))];
    }
  }
  std::vector<std::pair<RankedPod, api::ObjectPtr>> ranked;
  ranked.reserve(pods.size());
  for (const api::ObjectPtr& p : pods) {
    auto it = on_node.find(api::FindString(p->view(), {"spec", "nodeName"}));
    ranked.push_back({RankedPod{p.get(), it == on_node.end() ? 0 : it->second}, p});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [now](const auto& x, const auto& y) {
    return PodDeletesFirst(x.first, y.first, now);
  });
  std::vector<api::ObjectPtr> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) out.push_back(ranked[i].second);
  return out;
}

}  // namespace converge::controllers
