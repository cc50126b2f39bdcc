#include "controllers/nodelifecycle/eviction.h"

#include <algorithm>

#include "util/time_format.h"

namespace converge::controllers::nodelifecycle {

EvictionPlan DecideEvictions(const std::vector<Taint>& node_taints,
                             const std::vector<api::ObjectPtr>& pods,
                             std::chrono::system_clock::time_point now,
                             const EvictionOptions& options) {
  EvictionPlan plan;
  std::vector<Taint> no_execute;
  std::optional<std::chrono::system_clock::time_point> since;
  for (const Taint& t : node_taints) {
    if (t.effect != kNoExecute) continue;
    no_execute.push_back(t);
    auto added = util::ParseRfc3339(t.time_added).value_or(now);
    if (!since || added < *since) since = added;
  }
  if (no_execute.empty()) return plan;
  for (const api::ObjectPtr& pod : pods) {
    if (pod->being_deleted()) continue;
    std::string_view phase = api::FindString(pod->view(), {"status", "phase"});
    if (phase == "Succeeded" || phase == "Failed") continue;
    std::vector<Toleration> tolerations = PodTolerations(*pod);
    if (options.implicit_toleration_seconds) {
      for (std::string_view key : {kNotReadyTaint, kUnreachableTaint}) {
        Taint probe{std::string(key), "", std::string(kNoExecute), ""};
        bool has = std::any_of(tolerations.begin(), tolerations.end(),
                               [&](const Toleration& t) { return t.Tolerates(probe); });
        if (!has) {
          tolerations.push_back({std::string(key), "Exists", "", std::string(kNoExecute),
                                 *options.implicit_toleration_seconds});
        }
      }
    }
    bool all_tolerated = true;
    std::optional<int64_t> min_seconds;  // nullopt: infinite
    for (const Taint& taint : no_execute) {
      bool tolerated = false;
      for (const Toleration& t : tolerations) {
        if (!t.Tolerates(taint)) continue;
        tolerated = true;
        if (t.toleration_seconds) {
          int64_t s = std::max<int64_t>(0, *t.toleration_seconds);
          if (!min_seconds || s < *min_seconds) min_seconds = s;
        }
      }
      if (!tolerated) all_tolerated = false;
    }
    if (!all_tolerated) {
      plan.evict.push_back(pod);
      continue;
    }
    if (!min_seconds) continue;
    auto trigger = *since + std::chrono::seconds(*min_seconds);
    if (trigger <= now) {
      plan.evict.push_back(pod);
    } else {
      auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(trigger - now);
      if (!plan.recheck_after || wait < *plan.recheck_after) plan.recheck_after = wait;
    }
  }
  return plan;
}

}  // namespace converge::controllers::nodelifecycle
