#include "controllers/replicaset/decide.h"

#include <algorithm>

#include "api/labels.h"
#include "controllers/common/active_pods.h"
#include "controllers/common/pod_util.h"
#include "util/time_format.h"

namespace converge::controllers::replicaset {

namespace json = boost::json;

int64_t SpecReplicas(const api::Object& rs) {
  return api::FindInt(rs.view(), {"spec", "replicas"}, 1);
}

int64_t MinReadySeconds(const api::Object& rs) {
  return api::FindInt(rs.view(), {"spec", "minReadySeconds"}, 0);
}

ReplicaPlan DecideReplicas(const Snapshot& s) {
  ReplicaPlan plan;
  if (!s.expectations_satisfied || s.rs->being_deleted()) return plan;
  int64_t diff = static_cast<int64_t>(s.pods.size()) - SpecReplicas(*s.rs);
  if (diff < 0) {
    plan.creates = static_cast<int>(std::min<int64_t>(-diff, s.burst_replicas));
  } else if (diff > 0) {
    size_t n = static_cast<size_t>(std::min<int64_t>(diff, s.burst_replicas));
    const std::vector<api::ObjectPtr>& related = s.related_pods.empty() ? s.pods : s.related_pods;
    plan.deletes = PodsToDelete(s.pods, related, n, s.now);
  }
  return plan;
}

ReplicaSetStatus ReplicaSetStatus::FromObject(const api::Object& rs) {
  ReplicaSetStatus st;
  api::ObjectView s = api::FindObject(rs.view(), {"status"});
  if (s == nullptr) return st;
  st.replicas = api::FindInt(*s, {"replicas"});
  st.fully_labeled_replicas = api::FindInt(*s, {"fullyLabeledReplicas"});
  st.ready_replicas = api::FindInt(*s, {"readyReplicas"});
  st.available_replicas = api::FindInt(*s, {"availableReplicas"});
  st.observed_generation = api::FindInt(*s, {"observedGeneration"});
  st.conditions = ParseConditions(api::FindArray(*s, {"conditions"}));
  return st;
}

json::object ReplicaSetStatus::ToJson() const {
  json::object o;
  o["replicas"] = replicas;
  if (fully_labeled_replicas != 0) o["fullyLabeledReplicas"] = fully_labeled_replicas;
  if (ready_replicas != 0) o["readyReplicas"] = ready_replicas;
  if (available_replicas != 0) o["availableReplicas"] = available_replicas;
  if (observed_generation != 0) o["observedGeneration"] = observed_generation;
  if (!conditions.empty()) o["conditions"] = ConditionsToJson(conditions);
  return o;
}

ReplicaSetStatus CalculateStatus(const api::Object& rs, const std::vector<api::ObjectPtr>& pods,
                                 const util::Status& manage_error, util::Clock::WallTime now) {
  PodFactsCache cache;  // numbers the label sets, so the selector is asked once per set
  std::vector<const PodFacts*> facts;
  facts.reserve(pods.size());
  for (const api::ObjectPtr& pod : pods) facts.push_back(&cache.Get(pod));
  return CalculateStatus(rs, facts, manage_error, now);
}

ReplicaSetStatus CalculateStatus(const api::Object& rs, std::span<const PodFacts* const> pods,
                                 const util::Status& manage_error, util::Clock::WallTime now) {
  ReplicaSetStatus status = ReplicaSetStatus::FromObject(rs);
  std::map<std::string, std::string> template_labels;
  if (const json::object* l =
          api::FindObject(rs.doc(), {"spec", "template", "metadata", "labels"})) {
    for (const auto& kv : *l) {
      if (kv.value().is_string()) template_labels[kv.key()] = kv.value().as_string().c_str();
    }
  }
  api::LabelSelector fully_labeled = api::LabelSelector::FromMap(template_labels);
  int64_t min_ready = MinReadySeconds(rs);
  int64_t labeled = 0, ready = 0, available = 0;
  LabelMemo is_fully_labeled(fully_labeled);
  for (const PodFacts* pod : pods) {
    if (is_fully_labeled.Matches(*pod)) ++labeled;
    if (pod->ready) {
      ++ready;
      if (IsPodAvailable(*pod, min_ready, now)) ++available;
    }
  }
  const Condition* failure = FindCondition(status.conditions, kReplicaFailure);
  if (!manage_error.ok() && failure == nullptr) {
    int64_t diff = static_cast<int64_t>(pods.size()) - SpecReplicas(rs);
    Condition c;
    c.type = kReplicaFailure;
    c.status = "True";
    c.reason = diff < 0 ? "FailedCreate" : diff > 0 ? "FailedDelete" : "";
    c.message = manage_error.message();
    c.last_transition_time = util::FormatRfc3339(now);
    status.conditions.push_back(std::move(c));
  } else if (manage_error.ok() && failure != nullptr) {
    RemoveCondition(status.conditions, kReplicaFailure);
  }
  status.replicas = static_cast<int64_t>(pods.size());
  status.fully_labeled_replicas = labeled;
  status.ready_replicas = ready;
  status.available_replicas = available;
  return status;
}

bool StatusNeedsUpdate(const api::Object& rs, const ReplicaSetStatus& status) {
  ReplicaSetStatus current = ReplicaSetStatus::FromObject(rs);
  return current.replicas != status.replicas ||
         current.fully_labeled_replicas != status.fully_labeled_replicas ||
         current.ready_replicas != status.ready_replicas ||
         current.available_replicas != status.available_replicas ||
         rs.generation() != current.observed_generation || current.conditions != status.conditions;
}

std::optional<util::Clock::Duration> RequeueAfter(const api::Object& rs,
                                                  const std::vector<api::ObjectPtr>& pods,
                                                  util::Clock::WallTime now) {
  int64_t min_ready = MinReadySeconds(rs);
  if (min_ready <= 0) return std::nullopt;
  std::optional<util::Clock::WallTime> next;
  for (const api::ObjectPtr& pod : pods) {
    if (!IsPodReady(*pod) || IsPodAvailable(*pod, min_ready, now)) continue;
    std::optional<util::Clock::WallTime> at = PodAvailableAt(*pod, min_ready);
    if (at && (!next || *at < *next)) next = at;
  }
  if (!next) return std::nullopt;
  util::Clock::Duration wait =
      std::max<util::Clock::Duration>(*next - now, util::Clock::Duration(0));
  return wait + std::chrono::seconds(1);
}

}  // namespace converge::controllers::replicaset
