#include "controllers/deployment/decide.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "controllers/common/owner_refs.h"
#include "controllers/common/pod_util.h"
#include "controllers/common/template_hash.h"
#include "controllers/deployment/rolling.h"
#include "util/time_format.h"

namespace converge::controllers::deployment {

namespace json = boost::json;

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

namespace {

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> IntAnnotation(const api::Object& obj, std::string_view key) {
  std::optional<std::string_view> v = obj.annotation(key);
  if (!v) return std::nullopt;
  return ParseInt(*v);
}

json::object& Annotations(api::Object& obj) {
  return api::EnsureObject(obj.mutable_metadata(), "annotations");
}

// A ReplicaSet as this sync sees it and plans to leave it.
struct Rs {
  api::ObjectPtr original;  // null when this plan creates it
  api::Object obj;          // working copy
  bool create = false;
  bool changed = false;
  bool remove = false;
  int first_change = -1;
  std::vector<PlannedEvent> events;

  int64_t spec() const { return Replicas(obj); }
  int64_t status_replicas() const { return api::FindInt(obj.view(), {"status", "replicas"}); }
  int64_t available() const { return api::FindInt(obj.view(), {"status", "availableReplicas"}); }
  int64_t ready() const { return api::FindInt(obj.view(), {"status", "readyReplicas"}); }
  RsCounts counts() const { return {spec(), status_replicas(), available()}; }
};

class Sync {
 public:
  explicit Sync(const Snapshot& s)
      : s_(s),
        d_(*s.deployment),
        stored_(DeploymentStatus::FromObject(*s.deployment)),
        status_(stored_) {
    for (const api::ObjectPtr& rs : s.replica_sets) rss_.push_back(Rs{rs, *rs});
  }

  Plan Run();

 private:
  // --- helpers over the working set ---
  std::vector<const api::Object*> Objects(const std::vector<int>& idx) const {
    std::vector<const api::Object*> out;
    for (int i : idx) out.push_back(&rss_[i].obj);
    return out;
  }
  std::vector<int> AllIndices() const {
    std::vector<int> out;
    for (size_t i = 0; i < rss_.size(); ++i) {
      if (!rss_[i].remove) out.push_back(static_cast<int>(i));
    }
    return out;
  }
  std::vector<int> Active(const std::vector<int>& idx) const {
    std::vector<int> out;
    for (int i : idx) {
      if (rss_[i].spec() > 0) out.push_back(i);
    }
    return out;
  }
  void Touch(Rs& rs) {
    if (!rs.changed && !rs.create) rs.first_change = ++changes_;
    rs.changed = true;
  }
  void SortByCreation(std::vector<int>& idx) const {
    std::stable_sort(idx.begin(), idx.end(),
                     [&](int a, int b) { return CreatedBefore(rss_[a].obj, rss_[b].obj); });
  }

  // --- upstream's steps ---
  struct NewAndOld {
    int new_rs = -1;       // index, -1 when there is none
    std::vector<int> old;  // every other owned ReplicaSet
  };
  NewAndOld GetAllReplicaSetsAndSyncRevision(bool create);
  bool SetNewReplicaSetAnnotations(api::Object& rs, const std::string& new_revision, bool exists);
  int CreateNewReplicaSet(const std::vector<int>& old, const std::string& new_revision);
  bool ScaleReplicaSet(int i, int64_t new_scale, std::string_view operation);
  bool ScaleReplicaSetAndRecordEvent(int i, int64_t new_scale);
  void ScaleForSync(const NewAndOld& rs);
  void CleanupDeployment(const std::vector<int>& old);
  bool IsScalingEvent();
  void CheckPausedConditions();
  void SyncOnly();  // sync(): scaling events and paused deployments
  void RolloutRolling();
  void RolloutRecreate();
  bool OldPodsRunning(const NewAndOld& rs) const;
  DeploymentStatus CalculateStatus(const std::vector<int>& all, int new_rs) const;
  void SyncRolloutStatus(const std::vector<int>& all, int new_rs);
  void SyncDeploymentStatus(const std::vector<int>& all, int new_rs);
  bool DeploymentComplete(const DeploymentStatus& st) const;
  void RequeueStuckDeployment(const DeploymentStatus& new_status);
  void FinishStatus(DeploymentStatus new_status);
  Plan Assemble();

  const Snapshot& s_;
  api::Object d_;                  // working Deployment (annotations)
  const DeploymentStatus stored_;  // as read
  DeploymentStatus status_;        // upstream's d.Status: stored counts, conditions as edited
  std::optional<DeploymentStatus> final_status_;
  std::vector<Rs> rss_;
  int changes_ = 0;
  Plan plan_;
};

bool Sync::SetNewReplicaSetAnnotations(api::Object& rs, const std::string& new_revision,
                                       bool exists) {
  api::Object copy = rs;
  json::object& ann = Annotations(copy);
  bool changed = false;
  for (const api::Member kv : d_.annotations()) {
    if (SkipCopyAnnotation(kv.key())) continue;
    if (kv.value() == api::View(ann.if_contains(kv.key()))) continue;
    ann[kv.key()] = api::ToJson(kv.value());
    changed = true;
  }
  std::string old_revision;
  bool had_revision = false;
  if (const json::value* v = ann.if_contains(kRevisionAnnotation); v && v->is_string()) {
    old_revision = v->as_string().c_str();
    had_revision = true;
  }
  std::optional<int64_t> old_int =
      old_revision.empty() ? std::optional<int64_t>(0) : ParseInt(old_revision);
  std::optional<int64_t> new_int = ParseInt(new_revision);
  if (!old_int || !new_int) return false;  // not a number: leave the ReplicaSet alone
  if (*old_int < *new_int) {
    ann[kRevisionAnnotation] = new_revision;
    changed = true;
    if (had_revision) {
      // Rolling back to this ReplicaSet: remember the revision it had.
      std::string history;
      if (const json::value* h = ann.if_contains(kRevisionHistoryAnnotation); h && h->is_string()) {
        history = h->as_string().c_str();
      }
      if (history.empty()) {
        ann[kRevisionHistoryAnnotation] = old_revision;
      } else {
        std::vector<std::string> parts;
        size_t start = 0;
        while (true) {
          size_t comma = history.find(',', start);
          parts.push_back(history.substr(start, comma - start));
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
        size_t total = history.size() + old_revision.size() + 1;
        size_t first = 0;
        while (total > kMaxRevisionHistoryLength && first < parts.size()) {
          total -= parts[first].size() + 1;
          ++first;
        }
        if (total <= kMaxRevisionHistoryLength) {
          std::string joined;
          for (size_t i = first; i < parts.size(); ++i) joined += parts[i] + ",";
          ann[kRevisionHistoryAnnotation] = joined + old_revision;
        }
      }
    }
  }
  if (!exists) {
    int64_t replicas = Replicas(d_);
    ann[kDesiredReplicasAnnotation] = std::to_string(replicas);
    ann[kMaxReplicasAnnotation] = std::to_string(replicas + MaxSurge(d_));
    changed = true;
  }
  if (changed) rs = std::move(copy);
  return changed;
}

int Sync::CreateNewReplicaSet(const std::vector<int>& old, const std::string& new_revision) {
  json::object tmpl = PodTemplate(d_);
  std::optional<int32_t> collisions;
  if (stored_.collision_count) collisions = static_cast<int32_t>(*stored_.collision_count);
  std::string hash = ComputeHash(tmpl, collisions);
  json::object& tmeta = api::EnsureObject(tmpl, "metadata");
  json::object& tlabels = api::EnsureObject(tmeta, "labels");
  tlabels[kPodTemplateHashLabel] = hash;
  json::object selector;
  if (api::ObjectView sel = api::FindObject(d_.view(), {"spec", "selector"}))
    selector = api::ToJson(sel);
  api::EnsureObject(selector, "matchLabels")[kPodTemplateHashLabel] = hash;

  api::Object rs;
  rs.SetGvk({"apps", "v1", "ReplicaSet"});
  rs.set_name(std::string(d_.name()) + "-" + hash);
  rs.set_namespace(d_.namespace_());
  rs.mutable_metadata()["labels"] = tlabels;
  rs.mutable_metadata()["ownerReferences"] =
      json::array{NewControllerRef(d_, kDeploymentKind).ToJson()};
  json::object spec;
  spec["replicas"] = 0;
  spec["minReadySeconds"] = MinReadySeconds(d_);
  spec["selector"] = std::move(selector);
  spec["template"] = std::move(tmpl);
  rs.mutable_doc()["spec"] = std::move(spec);

  // Sized against every ReplicaSet, this one included (at 0).
  int64_t replicas = Replicas(d_);
  if (IsRollingUpdate(d_)) {
    std::vector<RsCounts> all;
    for (int i : old) all.push_back(rss_[i].counts());
    RsCounts mine{0, 0, 0};
    all.push_back(mine);
    replicas = NewReplicaSetReplicas(Replicas(d_), MaxSurge(d_), all, mine);
  }
  rs.mutable_doc()["spec"].as_object()["replicas"] = replicas;
  SetNewReplicaSetAnnotations(rs, new_revision, /*exists=*/false);

  Rs created{nullptr, std::move(rs)};
  created.create = true;
  if (replicas > 0) {
    created.events.push_back({"Normal", "ScalingReplicaSet",
                              "Scaled up replica set " + std::string(created.obj.name()) +
                                  " from 0 to " + std::to_string(replicas)});
  }
  rss_.push_back(std::move(created));
  int index = static_cast<int>(rss_.size()) - 1;

  Annotations(d_)[kRevisionAnnotation] = new_revision;
  if (ProgressDeadlineSeconds(d_)) {
    SetCondition(status_.conditions,
                 NewCondition(kProgressing, "True", kNewReplicaSetReason,
                              "Created new replica set " + Quote(rss_[index].obj.name()), s_.now));
  }
  return index;
}

Sync::NewAndOld Sync::GetAllReplicaSetsAndSyncRevision(bool create) {
  NewAndOld out;
  std::vector<int> all = AllIndices();
  const api::Object* found = FindNewReplicaSet(d_, Objects(all));
  for (int i : all) {
    if (&rss_[i].obj == found) {
      out.new_rs = i;
    } else {
      out.old.push_back(i);
    }
  }
  std::string new_revision = std::to_string(MaxRevision(Objects(out.old)) + 1);
  if (out.new_rs >= 0) {
    Rs& rs = rss_[out.new_rs];
    bool changed = SetNewReplicaSetAnnotations(rs.obj, new_revision, /*exists=*/true);
    if (MinReadySeconds(rs.obj) != MinReadySeconds(d_)) {
      rs.obj.mutable_doc()["spec"].as_object()["minReadySeconds"] = MinReadySeconds(d_);
      changed = true;
    }
    if (changed) Touch(rs);
    // The Deployment's revision is its new ReplicaSet's.
    if (std::optional<std::string_view> rev = rs.obj.annotation(kRevisionAnnotation)) {
      if (d_.annotation(kRevisionAnnotation) != rev) Annotations(d_)[kRevisionAnnotation] = *rev;
    }
    if (ProgressDeadlineSeconds(d_) && FindCondition(status_.conditions, kProgressing) == nullptr) {
      SetCondition(status_.conditions,
                   NewCondition(kProgressing, "True", kFoundNewRSReason,
                                "Found new replica set " + Quote(rs.obj.name()), s_.now));
    }
    return out;
  }
  if (create) out.new_rs = CreateNewReplicaSet(out.old, new_revision);
  return out;
}

bool Sync::ScaleReplicaSet(int i, int64_t new_scale, std::string_view operation) {
  Rs& rs = rss_[i];
  int64_t old_scale = rs.spec();
  bool size_changes = old_scale != new_scale;
  std::string desired = std::to_string(Replicas(d_));
  std::string max = std::to_string(Replicas(d_) + MaxSurge(d_));
  bool annotations_change = rs.obj.annotation(kDesiredReplicasAnnotation) != desired ||
                            rs.obj.annotation(kMaxReplicasAnnotation) != max;
  if (!size_changes && !annotations_change) return false;
  rs.obj.mutable_doc()["spec"].as_object()["replicas"] = new_scale;
  json::object& ann = Annotations(rs.obj);
  ann[kDesiredReplicasAnnotation] = desired;
  ann[kMaxReplicasAnnotation] = max;
  Touch(rs);
  if (size_changes) {
    rs.events.push_back({"Normal", "ScalingReplicaSet",
                         "Scaled " + std::string(operation) + " replica set " +
                             std::string(rs.obj.name()) + " from " + std::to_string(old_scale) +
                             " to " + std::to_string(new_scale)});
  }
  return size_changes;
}

bool Sync::ScaleReplicaSetAndRecordEvent(int i, int64_t new_scale) {
  int64_t current = rss_[i].spec();
  if (current == new_scale) return false;
  return ScaleReplicaSet(i, new_scale, current < new_scale ? "up" : "down");
}

void Sync::ScaleForSync(const NewAndOld& n) {
  // FindActiveOrLatest: the only active ReplicaSet, or the newest when none is active.
  std::vector<int> old = n.old;
  std::stable_sort(old.begin(), old.end(),
                   [&](int a, int b) { return CreatedBefore(rss_[b].obj, rss_[a].obj); });
  std::vector<int> candidates = old;
  if (n.new_rs >= 0) candidates.push_back(n.new_rs);
  std::vector<int> active = Active(candidates);
  int active_or_latest = -1;
  if (active.size() == 1) {
    active_or_latest = active[0];
  } else if (active.empty() && (n.new_rs >= 0 || !old.empty())) {
    active_or_latest = n.new_rs >= 0 ? n.new_rs : old[0];
  }
  int64_t replicas = Replicas(d_);
  if (active_or_latest >= 0) {
    if (rss_[active_or_latest].spec() != replicas) {
      ScaleReplicaSetAndRecordEvent(active_or_latest, replicas);
    }
    return;
  }
  // A saturated new ReplicaSet: old ones go to zero.
  if (n.new_rs >= 0) {
    const Rs& nrs = rss_[n.new_rs];
    std::optional<int64_t> desired = IntAnnotation(nrs.obj, kDesiredReplicasAnnotation);
    if (desired && nrs.spec() == replicas && *desired == replicas && nrs.available() == replicas) {
      for (int i : Active(n.old)) ScaleReplicaSetAndRecordEvent(i, 0);
      return;
    }
  }
  if (!IsRollingUpdate(d_)) return;
  std::vector<int> all = Active(candidates);
  std::vector<ProportionalRs> input;
  for (int i : all) {
    input.push_back({std::string(rss_[i].obj.name()), rss_[i].spec(),
                     IntAnnotation(rss_[i].obj, kMaxReplicasAnnotation),
                     CreationTime(rss_[i].obj).value_or(util::Clock::WallTime())});
  }
  std::vector<int64_t> sizes = ScaleProportionally(input, replicas, MaxSurge(d_), stored_.replicas);
  int64_t before = 0, after = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    before += input[k].replicas;
    after += sizes[k];
  }
  std::string_view operation = after > before ? "up" : after < before ? "down" : "";
  for (size_t k = 0; k < all.size(); ++k) ScaleReplicaSet(all[k], sizes[k], operation);
}

void Sync::CleanupDeployment(const std::vector<int>& old) {
  std::optional<int64_t> limit = RevisionHistoryLimit(d_);
  if (!limit) return;
  std::vector<int> cleanable;
  for (int i : old) {
    if (!rss_[i].obj.being_deleted()) cleanable.push_back(i);
  }
  int64_t diff = static_cast<int64_t>(cleanable.size()) - *limit;
  if (diff <= 0) return;
  std::stable_sort(cleanable.begin(), cleanable.end(),
                   [&](int a, int b) { return RevisionBefore(rss_[a].obj, rss_[b].obj); });
  for (int64_t k = 0; k < diff; ++k) {
    Rs& rs = rss_[cleanable[k]];
    // Only ReplicaSets that are empty, settled and not being changed by this very plan.
    if (rs.status_replicas() != 0 || rs.spec() != 0 || rs.changed || rs.create ||
        rs.obj.generation() > api::FindInt(rs.obj.view(), {"status", "observedGeneration"}) ||
        rs.obj.being_deleted()) {
      continue;
    }
    rs.remove = true;
  }
}

bool Sync::IsScalingEvent() {
  NewAndOld n = GetAllReplicaSetsAndSyncRevision(false);
  std::vector<int> all = n.old;
  if (n.new_rs >= 0) all.push_back(n.new_rs);
  for (int i : Active(all)) {
    std::optional<int64_t> desired = IntAnnotation(rss_[i].obj, kDesiredReplicasAnnotation);
    if (desired && *desired != Replicas(d_)) return true;
  }
  return false;
}

void Sync::CheckPausedConditions() {
  if (!ProgressDeadlineSeconds(d_)) return;
  const Condition* cond = FindCondition(status_.conditions, kProgressing);
  if (cond != nullptr && cond->reason == kTimedOutReason) return;
  bool paused_exists = cond != nullptr && cond->reason == kPausedDeployReason;
  if (Paused(d_) && !paused_exists) {
    SetCondition(status_.conditions, NewCondition(kProgressing, "Unknown", kPausedDeployReason,
                                                  "Deployment is paused", s_.now));
  } else if (!Paused(d_) && paused_exists) {
    SetCondition(status_.conditions, NewCondition(kProgressing, "Unknown", kResumedDeployReason,
                                                  "Deployment is resumed", s_.now));
  }
}

DeploymentStatus Sync::CalculateStatus(const std::vector<int>& all, int new_rs) const {
  int64_t available = 0, total = 0, actual = 0, ready = 0;
  for (int i : all) {
    available += rss_[i].available();
    total += rss_[i].spec();
    actual += rss_[i].status_replicas();
    ready += rss_[i].ready();
  }
  DeploymentStatus st;
  st.observed_generation = d_.generation();
  st.replicas = actual;
  st.updated_replicas = new_rs >= 0 ? rss_[new_rs].status_replicas() : 0;
  st.ready_replicas = ready;
  st.available_replicas = available;
  st.unavailable_replicas = std::max<int64_t>(total - available, 0);
  st.collision_count = stored_.collision_count;
  st.conditions = status_.conditions;
  if (available >= Replicas(d_) - MaxUnavailable(d_)) {
    SetCondition(st.conditions, NewCondition(kAvailable, "True", kMinimumReplicasAvailable,
                                             "Deployment has minimum availability.", s_.now));
  } else {
    SetCondition(st.conditions,
                 NewCondition(kAvailable, "False", kMinimumReplicasUnavailable,
                              "Deployment does not have minimum availability.", s_.now));
  }
  return st;
}

bool Sync::DeploymentComplete(const DeploymentStatus& st) const {
  int64_t replicas = Replicas(d_);
  return st.updated_replicas == replicas && st.replicas == replicas &&
         st.available_replicas == replicas && st.observed_generation >= d_.generation();
}

void Sync::SyncDeploymentStatus(const std::vector<int>& all, int new_rs) {
  FinishStatus(CalculateStatus(all, new_rs));
}

void Sync::SyncRolloutStatus(const std::vector<int>& all, int new_rs) {
  DeploymentStatus st = CalculateStatus(all, new_rs);
  std::optional<int64_t> deadline = ProgressDeadlineSeconds(d_);
  if (!deadline) RemoveCondition(st.conditions, kProgressing);
  const Condition* current = FindCondition(status_.conditions, kProgressing);
  bool complete_before = st.replicas == st.updated_replicas && current != nullptr &&
                         current->reason == kNewRSAvailableReason;
  std::string new_name = new_rs >= 0 ? std::string(rss_[new_rs].obj.name()) : "";
  if (deadline && !complete_before) {
    bool progressing =
        st.updated_replicas > stored_.updated_replicas ||
        (st.replicas - st.updated_replicas) < (stored_.replicas - stored_.updated_replicas) ||
        st.ready_replicas > stored_.ready_replicas ||
        st.available_replicas > stored_.available_replicas;
    if (DeploymentComplete(st)) {
      std::string msg = new_rs >= 0
                            ? "ReplicaSet " + Quote(new_name) + " has successfully progressed."
                            : "Deployment " + Quote(d_.name()) + " has successfully progressed.";
      SetCondition(st.conditions,
                   NewCondition(kProgressing, "True", kNewRSAvailableReason, msg, s_.now));
    } else if (progressing) {
      std::string msg = new_rs >= 0 ? "ReplicaSet " + Quote(new_name) + " is progressing."
                                    : "Deployment " + Quote(d_.name()) + " is progressing.";
      Condition c = NewCondition(kProgressing, "True", kReplicaSetUpdatedReason, msg, s_.now);
      // Progress moves lastUpdateTime even when the reason stays the same.
      if (current != nullptr) {
        if (current->status == "True") c.last_transition_time = current->last_transition_time;
        RemoveCondition(st.conditions, kProgressing);
      }
      SetCondition(st.conditions, std::move(c));
    } else {
      // Timed out?
      const Condition* cond = FindCondition(st.conditions, kProgressing);
      bool timed_out = false;
      if (cond != nullptr && cond->reason != kNewRSAvailableReason) {
        if (cond->reason == kTimedOutReason) {
          timed_out = true;
        } else if (auto from = util::ParseRfc3339(cond->last_update_time)) {
          timed_out = *from + std::chrono::seconds(*deadline) < s_.now;
        }
      }
      if (timed_out) {
        std::string msg = new_rs >= 0
                              ? "ReplicaSet " + Quote(new_name) + " has timed out progressing."
                              : "Deployment " + Quote(d_.name()) + " has timed out progressing.";
        SetCondition(st.conditions,
                     NewCondition(kProgressing, "False", kTimedOutReason, msg, s_.now));
      }
    }
  }
  // ReplicaFailure: the new ReplicaSet's, else any old one's.
  std::optional<Condition> failure;
  auto failure_of = [&](int i) -> std::optional<Condition> {
    for (const Condition& c :
         ParseConditions(api::FindArray(rss_[i].obj.doc(), {"status", "conditions"}))) {
      if (c.type != kReplicaFailure) continue;
      Condition dc = c;
      dc.last_update_time = c.last_transition_time;
      return dc;
    }
    return std::nullopt;
  };
  if (new_rs >= 0) failure = failure_of(new_rs);
  for (size_t k = 0; !failure && k < all.size(); ++k) failure = failure_of(all[k]);
  if (failure) {
    SetCondition(st.conditions, *failure);
  } else {
    RemoveCondition(st.conditions, kReplicaFailure);
  }
  if (st == stored_) RequeueStuckDeployment(st);
  FinishStatus(std::move(st));
}

void Sync::RequeueStuckDeployment(const DeploymentStatus& new_status) {
  std::optional<int64_t> deadline = ProgressDeadlineSeconds(d_);
  const Condition* current = FindCondition(status_.conditions, kProgressing);
  if (!deadline || current == nullptr) return;
  if (DeploymentComplete(new_status) || current->reason == kTimedOutReason) return;
  std::optional<util::Clock::WallTime> last = util::ParseRfc3339(current->last_update_time);
  if (!last) return;
  util::Clock::Duration after = *last + std::chrono::seconds(*deadline) - s_.now;
  if (after < std::chrono::seconds(1)) {
    plan_.requeue = true;
  } else {
    // A second more so that the check lands after the deadline, not just before it.
    plan_.requeue_after = after + std::chrono::seconds(1);
  }
}

void Sync::FinishStatus(DeploymentStatus st) {
  final_status_ = std::move(st);
}

bool Sync::OldPodsRunning(const NewAndOld& n) const {
  for (int i : n.old) {
    if (rss_[i].status_replicas() > 0) return true;
  }
  std::string new_uid = n.new_rs >= 0 ? std::string(rss_[n.new_rs].obj.uid()) : "";
  for (const auto& [uid, pods] : s_.pods_by_replica_set) {
    if (!new_uid.empty() && uid == new_uid) continue;
    for (const api::ObjectPtr& pod : pods) {
      std::string_view phase = api::FindString(pod->view(), {"status", "phase"});
      if (phase == "Failed" || phase == "Succeeded") continue;
      return true;  // Pending, Running and Unknown all may still run
    }
  }
  return false;
}

void Sync::SyncOnly() {
  NewAndOld n = GetAllReplicaSetsAndSyncRevision(false);
  ScaleForSync(n);
  if (Paused(d_)) CleanupDeployment(n.old);
  std::vector<int> all = n.old;
  if (n.new_rs >= 0) all.push_back(n.new_rs);
  SyncDeploymentStatus(all, n.new_rs);
}

void Sync::RolloutRolling() {
  NewAndOld n = GetAllReplicaSetsAndSyncRevision(true);
  std::vector<int> all = n.old;
  all.push_back(n.new_rs);
  int64_t replicas = Replicas(d_);
  Rs& nrs = rss_[n.new_rs];

  // Scale up, if we can.
  bool scaled_up = false;
  if (nrs.spec() > replicas) {
    scaled_up = ScaleReplicaSetAndRecordEvent(n.new_rs, replicas);
  } else if (nrs.spec() < replicas) {
    std::vector<RsCounts> counts;
    for (int i : all) counts.push_back(rss_[i].counts());
    scaled_up = ScaleReplicaSetAndRecordEvent(
        n.new_rs, NewReplicaSetReplicas(replicas, MaxSurge(d_), counts, nrs.counts()));
  }
  if (scaled_up) return SyncRolloutStatus(all, n.new_rs);

  // Scale down, if we can.
  std::vector<int> old_active = Active(n.old);
  bool scaled_down = false;
  if (!old_active.empty()) {
    std::vector<RsCounts> counts;
    for (int i : all) counts.push_back(rss_[i].counts());
    int64_t max_scaled_down = MaxScaledDown(replicas, MaxUnavailable(d_), counts, nrs.counts());
    if (max_scaled_down > 0) {
      SortByCreation(old_active);
      // Unhealthy replicas first: removing them costs no availability.
      std::vector<RsCounts> old_counts;
      for (int i : old_active) old_counts.push_back(rss_[i].counts());
      std::vector<int64_t> cleaned = CleanupUnhealthy(old_counts, max_scaled_down);
      for (size_t k = 0; k < old_active.size(); ++k) {
        if (cleaned[k] != old_counts[k].spec) {
          ScaleReplicaSetAndRecordEvent(old_active[k], cleaned[k]);
          scaled_down = true;
        }
      }
      // Then healthy ones, as far as maxUnavailable allows.
      std::vector<RsCounts> now_all;
      for (int i : all) now_all.push_back(rss_[i].counts());
      std::vector<RsCounts> now_old;
      for (int i : old_active) now_old.push_back(rss_[i].counts());
      std::vector<int64_t> down = ScaleDownOld(replicas, MaxUnavailable(d_), now_all, now_old);
      for (size_t k = 0; k < old_active.size(); ++k) {
        if (down[k] != now_old[k].spec) {
          ScaleReplicaSetAndRecordEvent(old_active[k], down[k]);
          scaled_down = true;
        }
      }
    }
  }
  if (scaled_down) return SyncRolloutStatus(all, n.new_rs);

  if (DeploymentComplete(status_)) CleanupDeployment(n.old);
  SyncRolloutStatus(all, n.new_rs);
}

void Sync::RolloutRecreate() {
  NewAndOld n = GetAllReplicaSetsAndSyncRevision(false);
  std::vector<int> all = n.old;
  if (n.new_rs >= 0) all.push_back(n.new_rs);
  bool scaled_down = false;
  for (int i : Active(n.old)) scaled_down |= ScaleReplicaSetAndRecordEvent(i, 0);
  if (scaled_down) return SyncRolloutStatus(all, n.new_rs);
  if (OldPodsRunning(n)) return SyncRolloutStatus(all, n.new_rs);
  if (n.new_rs < 0) {
    n = GetAllReplicaSetsAndSyncRevision(true);
    all = n.old;
    all.push_back(n.new_rs);
  }
  ScaleReplicaSetAndRecordEvent(n.new_rs, Replicas(d_));
  if (DeploymentComplete(status_)) CleanupDeployment(n.old);
  SyncRolloutStatus(all, n.new_rs);
}

Plan Sync::Assemble() {
  // Creates first; then updates, shrinking ones before growing ones (never more pods than
  // needed in flight), otherwise in the order this sync changed them; then deletes.
  std::vector<int> updates;
  for (size_t i = 0; i < rss_.size(); ++i) {
    const Rs& rs = rss_[i];
    if (rs.create) {
      plan_.actions.push_back({ReplicaSetAction::Kind::kCreate, rs.obj, rs.events});
    } else if (rs.changed && !rs.remove) {
      updates.push_back(static_cast<int>(i));
    }
  }
  auto shrinks = [&](int i) { return rss_[i].spec() < Replicas(*rss_[i].original); };
  std::stable_sort(updates.begin(), updates.end(), [&](int a, int b) {
    if (shrinks(a) != shrinks(b)) return shrinks(a);
    return rss_[a].first_change < rss_[b].first_change;
  });
  for (int i : updates) {
    plan_.actions.push_back({ReplicaSetAction::Kind::kUpdate, rss_[i].obj, rss_[i].events});
  }
  for (const Rs& rs : rss_) {
    if (rs.remove && rs.original) {
      plan_.actions.push_back({ReplicaSetAction::Kind::kDelete, *rs.original, {}});
    }
  }
  bool annotations_changed = [&] {
    const api::ObjectView a = d_.annotations();
    const api::ObjectView b = s_.deployment->annotations();
    return !(a.empty() && b.empty()) && !(a == b);
  }();
  DeploymentStatus st = final_status_.value_or(status_);
  if (st != stored_ || annotations_changed) {
    api::Object update = d_;
    update.mutable_doc()["status"] = st.ToJson();
    plan_.status_update = std::move(update);
  }
  return std::move(plan_);
}

Plan Sync::Run() {
  api::ObjectView selector = api::FindObject(d_.view(), {"spec", "selector"});
  bool selects_all =
      selector == nullptr || ((api::FindObject(*selector, {"matchLabels"}) == nullptr ||
                               api::FindObject(*selector, {"matchLabels"})->empty()) &&
                              (api::FindArray(*selector, {"matchExpressions"}) == nullptr ||
                               api::FindArray(*selector, {"matchExpressions"})->empty()));
  if (selects_all) {
    plan_.events.push_back({"Warning", "SelectingAll",
                            "This deployment is selecting all pods. A non-empty selector is "
                            "required."});
    if (status_.observed_generation < d_.generation()) {
      DeploymentStatus st = status_;
      st.observed_generation = d_.generation();
      FinishStatus(st);
    }
    return Assemble();
  }
  if (d_.being_deleted()) {
    NewAndOld n = GetAllReplicaSetsAndSyncRevision(false);
    std::vector<int> all = n.old;
    if (n.new_rs >= 0) all.push_back(n.new_rs);
    SyncDeploymentStatus(all, n.new_rs);
    return Assemble();
  }
  CheckPausedConditions();
  if (Paused(d_)) {
    SyncOnly();
    return Assemble();
  }
  if (IsScalingEvent()) {
    SyncOnly();
    return Assemble();
  }
  if (IsRollingUpdate(d_)) {
    RolloutRolling();
  } else {
    RolloutRecreate();
  }
  return Assemble();
}

}  // namespace

Plan Decide(const Snapshot& snapshot) {
  return Sync(snapshot).Run();
}

std::optional<api::Object> StatusAfterCreateFailure(const api::Object& deployment,
                                                    const std::string& message,
                                                    util::Clock::WallTime now) {
  if (!ProgressDeadlineSeconds(deployment)) return std::nullopt;
  DeploymentStatus st = DeploymentStatus::FromObject(deployment);
  SetCondition(st.conditions,
               NewCondition(kProgressing, "False", kFailedRSCreateReason, message, now));
  api::Object copy = deployment;
  copy.mutable_doc()["status"] = st.ToJson();
  return copy;
}

api::Object WithCollisionCountBumped(const api::Object& deployment) {
  DeploymentStatus st = DeploymentStatus::FromObject(deployment);
  st.collision_count = st.collision_count.value_or(0) + 1;
  api::Object copy = deployment;
  copy.mutable_doc()["status"] = st.ToJson();
  return copy;
}

}  // namespace converge::controllers::deployment
