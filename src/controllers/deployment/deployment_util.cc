#include "controllers/deployment/deployment_util.h"

#include <charconv>
#include <limits>

#include "controllers/common/pod_util.h"
#include "controllers/common/template_hash.h"
#include "controllers/deployment/rolling.h"
#include "util/time_format.h"

namespace converge::controllers::deployment {

namespace json = boost::json;

namespace {

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

std::optional<int64_t> ParseInt64(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

DeploymentStatus DeploymentStatus::FromObject(const api::Object& d) {
  DeploymentStatus st;
  const json::object* s = api::FindObject(d.doc(), {"status"});
  if (s == nullptr) return st;
  st.observed_generation = api::FindInt(*s, {"observedGeneration"});
  st.replicas = api::FindInt(*s, {"replicas"});
  st.updated_replicas = api::FindInt(*s, {"updatedReplicas"});
  st.ready_replicas = api::FindInt(*s, {"readyReplicas"});
  st.available_replicas = api::FindInt(*s, {"availableReplicas"});
  st.unavailable_replicas = api::FindInt(*s, {"unavailableReplicas"});
  if (const json::value* c = s->if_contains("collisionCount"); c && c->is_number()) {
    st.collision_count = c->to_number<int64_t>();
  }
  st.conditions = ParseConditions(api::FindArray(*s, {"conditions"}));
  return st;
}

json::object DeploymentStatus::ToJson() const {
  json::object o;
  if (observed_generation != 0) o["observedGeneration"] = observed_generation;
  if (replicas != 0) o["replicas"] = replicas;
  if (updated_replicas != 0) o["updatedReplicas"] = updated_replicas;
  if (ready_replicas != 0) o["readyReplicas"] = ready_replicas;
  if (available_replicas != 0) o["availableReplicas"] = available_replicas;
  if (unavailable_replicas != 0) o["unavailableReplicas"] = unavailable_replicas;
  if (!conditions.empty()) o["conditions"] = ConditionsToJson(conditions);
  if (collision_count) o["collisionCount"] = *collision_count;
  return o;
}

Condition NewCondition(std::string_view type, std::string_view status, std::string_view reason,
                       std::string message, util::Clock::WallTime now) {
  Condition c;
  c.type = type;
  c.status = status;
  c.reason = reason;
  c.message = std::move(message);
  c.last_update_time = util::FormatRfc3339(now);
  c.last_transition_time = c.last_update_time;
  return c;
}

void SetCondition(std::vector<Condition>& conditions, Condition c) {
  const Condition* current = FindCondition(conditions, c.type);
  if (current != nullptr && current->status == c.status && current->reason == c.reason) return;
  if (current != nullptr && current->status == c.status) {
    c.last_transition_time = current->last_transition_time;
  }
  RemoveCondition(conditions, c.type);
  conditions.push_back(std::move(c));
}

std::optional<int64_t> Revision(const api::Object& obj) {
  std::optional<std::string_view> v = obj.annotation(kRevisionAnnotation);
  if (!v) return 0;
  return ParseInt64(*v);
}

int64_t MaxRevision(const std::vector<const api::Object*>& replica_sets) {
  int64_t max = 0;
  for (const api::Object* rs : replica_sets) {
    if (rs == nullptr) continue;
    if (std::optional<int64_t> r = Revision(*rs); r && *r > max) max = *r;
  }
  return max;
}

int64_t Replicas(const api::Object& obj) {
  return api::FindInt(obj.doc(), {"spec", "replicas"}, 1);
}

int64_t MinReadySeconds(const api::Object& obj) {
  return api::FindInt(obj.doc(), {"spec", "minReadySeconds"}, 0);
}

std::string_view StrategyType(const api::Object& d) {
  std::string_view t = api::FindString(d.doc(), {"spec", "strategy", "type"});
  return t.empty() ? "RollingUpdate" : t;
}

bool IsRollingUpdate(const api::Object& d) {
  return StrategyType(d) == "RollingUpdate";
}

bool Paused(const api::Object& d) {
  return api::FindBool(d.doc(), {"spec", "paused"});
}

std::optional<int64_t> ProgressDeadlineSeconds(const api::Object& d) {
  const json::value* v = api::Find(d.doc(), {"spec", "progressDeadlineSeconds"});
  if (v == nullptr || !v->is_number()) return std::nullopt;
  int64_t s = v->to_number<int64_t>();
  if (s == kMaxInt32) return std::nullopt;
  return s;
}

std::optional<int64_t> RevisionHistoryLimit(const api::Object& d) {
  const json::value* v = api::Find(d.doc(), {"spec", "revisionHistoryLimit"});
  if (v == nullptr || !v->is_number()) return std::nullopt;
  int64_t s = v->to_number<int64_t>();
  if (s == kMaxInt32) return std::nullopt;
  return s;
}

const json::object& PodTemplate(const api::Object& obj) {
  static const json::object kEmpty;
  const json::object* t = api::FindObject(obj.doc(), {"spec", "template"});
  return t ? *t : kEmpty;
}

namespace {

Fenceposts Limits(const api::Object& d) {
  if (!IsRollingUpdate(d)) return {};
  static const json::value kNull;
  const json::value* surge = api::Find(d.doc(), {"spec", "strategy", "rollingUpdate", "maxSurge"});
  const json::value* unavailable =
      api::Find(d.doc(), {"spec", "strategy", "rollingUpdate", "maxUnavailable"});
  auto f =
      ResolveFenceposts(surge ? *surge : kNull, unavailable ? *unavailable : kNull, Replicas(d));
  return f.ok() ? *f : Fenceposts{};  // validation rejects anything else
}

}  // namespace

int64_t MaxSurge(const api::Object& d) {
  return Limits(d).max_surge;
}

int64_t MaxUnavailable(const api::Object& d) {
  if (!IsRollingUpdate(d) || Replicas(d) == 0) return 0;
  return std::min(Limits(d).max_unavailable, Replicas(d));
}

bool CreatedBefore(const api::Object& a, const api::Object& b) {
  std::optional<util::Clock::WallTime> ta = CreationTime(a);
  std::optional<util::Clock::WallTime> tb = CreationTime(b);
  if (ta != tb) return ta < tb;  // nullopt (unknown) sorts first
  return a.name() < b.name();
}

bool RevisionBefore(const api::Object& a, const api::Object& b) {
  std::optional<int64_t> ra = Revision(a);
  std::optional<int64_t> rb = Revision(b);
  if (!ra || !rb || *ra == *rb) return CreatedBefore(a, b);
  return *ra < *rb;
}

const api::Object* FindNewReplicaSet(const api::Object& d,
                                     const std::vector<const api::Object*>& replica_sets) {
  const api::Object* found = nullptr;
  for (const api::Object* rs : replica_sets) {
    if (rs == nullptr || !EqualIgnoreHash(PodTemplate(*rs), PodTemplate(d))) continue;
    // Several can match (e.g. after a hash change); the oldest wins, deterministically.
    if (found == nullptr || CreatedBefore(*rs, *found)) found = rs;
  }
  return found;
}

bool SkipCopyAnnotation(std::string_view key) {
  return key == kLastAppliedConfigAnnotation || key == kRevisionAnnotation ||
         key == kRevisionHistoryAnnotation || key == kDesiredReplicasAnnotation ||
         key == kMaxReplicasAnnotation || key == kDeprecatedRollbackTo;
}

}  // namespace converge::controllers::deployment
