#include "controllers/job/decide.h"

#include <algorithm>
#include <map>

#include "util/time_format.h"

namespace converge::controllers::job {

namespace json = boost::json;

namespace {

std::set<std::string> UidSet(const json::object& status, std::string_view which) {
  std::set<std::string> out;
  if (const json::array* a = api::FindArray(status, {"uncountedTerminatedPods", which})) {
    for (const json::value& v : *a) {
      if (v.is_string()) out.insert(std::string(v.get_string()));
    }
  }
  return out;
}

const json::object& StatusOf(const api::Object& job) {
  static const json::object kEmpty;
  const json::object* s = api::FindObject(job.doc(), {"status"});
  return s != nullptr ? *s : kEmpty;
}

int32_t Int32At(const json::object& o, std::string_view key) {
  return static_cast<int32_t>(api::FindInt(o, {key}));
}

const json::object* FindCondition(const json::object& status, std::string_view type) {
  const json::array* conds = api::FindArray(status, {"conditions"});
  if (conds == nullptr) return nullptr;
  for (const json::value& c : *conds) {
    if (c.is_object() && api::Object::GetString(c.get_object(), "type") == type) {
      return &c.get_object();
    }
  }
  return nullptr;
}

bool ConditionTrue(const json::object& status, std::string_view type) {
  const json::object* c = FindCondition(status, type);
  return c != nullptr && api::Object::GetString(*c, "status") == "True";
}

JobCondition ConditionFrom(const json::object& c, std::string_view type) {
  return {std::string(type), "True", std::string(api::Object::GetString(c, "reason")),
          std::string(api::Object::GetString(c, "message"))};
}

bool ValidIndex(const PodInfo& p, const JobSpec& spec) {
  return p.index >= 0 && spec.completions && p.index < *spec.completions;
}

// Pods the status does not yet account for: with the tracking finalizer, not already uncounted,
// a valid index for Indexed Jobs, and passing `filter`.
template <typename F>
std::vector<const PodInfo*> NewlyFinished(const std::vector<PodInfo>& pods, const JobSpec& spec,
                                          const std::set<std::string>& uncounted, F filter) {
  std::vector<const PodInfo*> out;
  for (const PodInfo& p : pods) {
    if (!p.has_finalizer || uncounted.count(p.uid)) continue;
    if (spec.indexed && !ValidIndex(p, spec)) continue;
    if (filter(p)) out.push_back(&p);
  }
  return out;
}

bool PastBackoffLimitOnFailure(const JobSpec& spec, const std::vector<PodInfo>& pods) {
  if (spec.restart_policy != "OnFailure") return false;
  int64_t restarts = 0;
  for (const PodInfo& p : pods) {
    if (p.phase == "Running" || p.phase == "Pending") restarts += p.restarts;
  }
  if (spec.backoff_limit == 0) return restarts > 0;
  return restarts >= spec.backoff_limit;
}

// Indexed Jobs: pods with invalid or repeated indexes go first (keeping, per index, the pod
// DeleteFirst ranks last), then the usual ranking up to rm_at_least.
std::vector<const PodInfo*> ActivePodsForRemoval(const JobSpec& spec,
                                                 std::vector<const PodInfo*> active,
                                                 int rm_at_least) {
  std::vector<const PodInfo*> rm, left;
  if (spec.indexed) {
    std::map<int, std::vector<const PodInfo*>> by_index;
    for (const PodInfo* p : active) {
      if (!ValidIndex(*p, spec)) {
        rm.push_back(p);
      } else {
        by_index[p->index].push_back(p);
      }
    }
    for (auto& [ix, pods] : by_index) {
      std::sort(pods.begin(), pods.end(),
                [](const PodInfo* a, const PodInfo* b) { return DeleteFirst(*a, *b); });
      rm.insert(rm.end(), pods.begin(), pods.end() - 1);
      left.push_back(pods.back());
    }
  } else {
    left = std::move(active);
  }
  if (static_cast<int>(rm.size()) < rm_at_least) {
    std::sort(left.begin(), left.end(),
              [](const PodInfo* a, const PodInfo* b) { return DeleteFirst(*a, *b); });
    size_t more = std::min(left.size(), static_cast<size_t>(rm_at_least) - rm.size());
    rm.insert(rm.end(), left.begin(), left.begin() + static_cast<std::ptrdiff_t>(more));
  }
  return rm;
}

std::vector<int> FirstPendingIndexes(const OrderedIntervals& succeeded,
                                     const std::vector<const PodInfo*>& active, int count,
                                     int completions) {
  std::vector<int> active_ix;
  for (const PodInfo* p : active) {
    if (p->index >= 0) active_ix.push_back(p->index);
  }
  std::sort(active_ix.begin(), active_ix.end());
  OrderedIntervals non_pending = succeeded.WithOrderedIndexes(active_ix);
  std::vector<int> out;
  for (int ix = 0; ix < completions && static_cast<int>(out.size()) < count; ++ix) {
    if (!non_pending.Has(ix)) out.push_back(ix);
  }
  return out;
}

std::string Rfc3339(util::Clock::WallTime t) {
  return util::FormatRfc3339(t);
}

// Counters are omitted when zero, as upstream's omitempty fields are.
void SetOmitZero(json::object& status, std::string_view key, int64_t v) {
  if (v == 0) {
    status.erase(key);
  } else {
    status[key] = v;
  }
}

struct UncountedLists {
  std::vector<std::string> succeeded;
  std::vector<std::string> failed;
};

// cleanUncountedPodsWithoutFinalizers: uncounted uids whose pod no longer carries the tracking
// finalizer move into the succeeded/failed counters. Returns the uids still uncounted.
UncountedLists CleanUncounted(json::object& status, const std::set<std::string>& with_finalizer) {
  UncountedLists out;
  for (std::string_view which : {"succeeded", "failed"}) {
    std::vector<std::string>& kept = which == "succeeded" ? out.succeeded : out.failed;
    int64_t moved = 0;
    if (const json::array* a = api::FindArray(status, {"uncountedTerminatedPods", which})) {
      for (const json::value& v : *a) {
        if (!v.is_string()) continue;
        std::string uid(v.get_string());
        if (with_finalizer.count(uid)) {
          kept.push_back(std::move(uid));
        } else {
          ++moved;
        }
      }
    }
    if (moved > 0) SetOmitZero(status, which, api::FindInt(status, {which}) + moved);
  }
  return out;
}

// status.uncountedTerminatedPods, its lists omitted when empty.
void SetUncounted(json::object& status, const UncountedLists& unc) {
  json::object o;
  for (std::string_view which : {"succeeded", "failed"}) {
    const std::vector<std::string>& uids = which == "succeeded" ? unc.succeeded : unc.failed;
    if (uids.empty()) continue;
    json::array a;
    for (const std::string& u : uids) a.push_back(json::value(u));
    o[which] = std::move(a);
  }
  status["uncountedTerminatedPods"] = std::move(o);
}

}  // namespace

BackoffRecord NextBackoffRecord(BackoffRecord r, std::vector<util::Clock::WallTime> succeeded,
                                std::vector<util::Clock::WallTime> failed) {
  std::sort(succeeded.begin(), succeeded.end());
  std::sort(failed.begin(), failed.end());
  if (succeeded.empty()) {
    if (failed.empty()) return r;
    r.failures_after_last_success += static_cast<int32_t>(failed.size());
    r.last_failure_time = failed.back();
    return r;
  }
  // A success resets the count; only failures after the last success count again.
  r.failures_after_last_success = 0;
  r.last_failure_time.reset();
  const util::Clock::WallTime last_success = succeeded.back();
  for (auto it = failed.rbegin(); it != failed.rend(); ++it) {
    if (*it <= last_success) break;
    if (!r.last_failure_time) r.last_failure_time = *it;
    ++r.failures_after_last_success;
  }
  return r;
}

util::Clock::Duration RemainingBackoff(const BackoffRecord& r, util::Clock::WallTime now,
                                       const BackoffOptions& options) {
  if (r.failures_after_last_success == 0 || !r.last_failure_time) return {};
  util::Clock::Duration backoff = options.base;
  for (int i = 1; i < r.failures_after_last_success; ++i) {
    backoff *= 2;
    if (backoff >= options.max) {
      backoff = options.max;
      break;
    }
  }
  util::Clock::Duration elapsed = now - *r.last_failure_time;
  if (backoff < elapsed) return {};
  return backoff - elapsed;
}

SyncDecision Decide(const JobSnapshot& snap, const BackoffOptions& backoff_options) {
  SyncDecision d;
  const api::Object& job = *snap.job;
  d.spec = ParseJobSpec(job);
  const JobSpec& spec = d.spec;
  const json::object& status = StatusOf(job);
  const std::set<std::string> uncounted_succeeded = UidSet(status, "succeeded");
  const std::set<std::string> uncounted_failed = UidSet(status, "failed");

  std::vector<const PodInfo*> active;
  for (const PodInfo& p : snap.pods) {
    if (IsActive(p)) {
      active.push_back(&p);
      if (p.ready) ++d.ready;
    }
    if (IsTerminating(p)) ++d.terminating;
  }
  d.active = static_cast<int32_t>(active.size());
  auto new_succeeded = NewlyFinished(snap.pods, spec, uncounted_succeeded,
                                     [](const PodInfo& p) { return p.phase == "Succeeded"; });
  auto new_failed = NewlyFinished(snap.pods, spec, uncounted_failed,
                                  [&spec](const PodInfo& p) { return IsFailed(p, spec); });
  d.succeeded = Int32At(status, "succeeded") + static_cast<int32_t>(new_succeeded.size()) +
                static_cast<int32_t>(uncounted_succeeded.size());
  d.failed = Int32At(status, "failed") + static_cast<int32_t>(new_failed.size()) +
             static_cast<int32_t>(uncounted_failed.size());

  std::optional<util::Clock::WallTime> start =
      util::ParseRfc3339(api::Object::GetString(status, "startTime"));
  if (!start && !spec.suspend) {
    d.set_start_time = true;
    start = snap.now;
  }

  std::vector<util::Clock::WallTime> succeeded_times, failed_times;
  for (const PodInfo* p : new_succeeded) succeeded_times.push_back(p->finished_at);
  for (const PodInfo* p : new_failed) failed_times.push_back(p->finished_at);
  d.backoff = NextBackoffRecord(snap.backoff, succeeded_times, failed_times);

  // The end state, in upstream's order: earlier verdicts first, then failures, then success.
  if (const json::object* c = FindCondition(status, kSuccessCriteriaMet);
      c != nullptr && ConditionTrue(status, kSuccessCriteriaMet)) {
    d.finished = ConditionFrom(*c, kSuccessCriteriaMet);
  } else if (const json::object* ft = FindCondition(status, kFailureTarget);
             ft != nullptr && ConditionTrue(status, kFailureTarget)) {
    d.finished = ConditionFrom(*ft, kFailed);
  }
  if (!d.finished) {
    if (d.failed > spec.backoff_limit || PastBackoffLimitOnFailure(spec, snap.pods)) {
      d.finished = JobCondition{std::string(kFailureTarget), "True",
                                std::string(kReasonBackoffLimitExceeded),
                                "Job has reached the specified backoff limit"};
    } else if (spec.active_deadline_seconds && start && !spec.suspend) {
      const auto allowed = std::chrono::seconds(*spec.active_deadline_seconds);
      const auto elapsed = snap.now - *start;
      if (elapsed >= allowed) {
        d.finished =
            JobCondition{std::string(kFailureTarget), "True", std::string(kReasonDeadlineExceeded),
                         "Job was active longer than specified deadline"};
      } else {
        d.requeue_after = std::chrono::duration_cast<util::Clock::Duration>(allowed - elapsed);
      }
    }
  }

  if (spec.indexed) {
    const int completions = spec.completions.value_or(0);
    d.prev_succeeded_indexes =
        OrderedIntervals::Parse(api::Object::GetString(status, "completedIndexes"), completions);
    std::vector<int> fresh;
    for (const PodInfo& p : snap.pods) {
      if (p.phase == "Succeeded" && ValidIndex(p, spec) && p.has_finalizer)
        fresh.push_back(p.index);
    }
    std::sort(fresh.begin(), fresh.end());
    fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
    d.succeeded_indexes = d.prev_succeeded_indexes.WithOrderedIndexes(fresh);
    d.succeeded = d.succeeded_indexes.Total();
  }

  if (d.finished) {
    // A finished Job's active pods go (their finalizers stay until they are counted).
    for (const PodInfo* p : active) {
      d.deletes.push_back(p->name);
      if (p->ready) ++d.deletes_ready;
    }
    return d;
  }
  if (job.being_deleted()) return d;
  d.manage_called = true;

  if (spec.suspend) {
    for (const PodInfo* p : active) {
      d.deletes.push_back(p->name);
      if (p->ready) ++d.deletes_ready;
    }
    d.remove_finalizer_before_delete = true;
    return d;
  }
  int32_t want = 0;
  if (!spec.completions) {
    // Without completions, one success ends the Job: keep what runs, start nothing new.
    want = d.succeeded > 0 ? d.active : spec.parallelism;
  } else {
    want = std::clamp(*spec.completions - d.succeeded, 0, spec.parallelism);
  }
  const int32_t rm_at_least = std::max(0, d.active - want);
  std::vector<const PodInfo*> rm = ActivePodsForRemoval(spec, active, rm_at_least);
  if (rm.size() > static_cast<size_t>(kMaxPodCreateDeletePerSync)) {
    rm.resize(kMaxPodCreateDeletePerSync);
  }
  if (!rm.empty()) {
    // Deleting and creating in one sync is possible (repeated indexes) but deletion goes first.
    for (const PodInfo* p : rm) {
      d.deletes.push_back(p->name);
      if (p->ready) ++d.deletes_ready;
    }
    d.remove_finalizer_before_delete = true;
    return d;
  }
  const int32_t terminating = spec.only_replace_failed ? d.terminating : 0;
  int32_t diff = want - terminating - d.active;
  if (diff <= 0) return d;
  util::Clock::Duration wait = RemainingBackoff(d.backoff, snap.now, backoff_options);
  if (wait > util::Clock::Duration::zero()) {
    d.requeue_after = d.requeue_after ? std::min(*d.requeue_after, wait) : wait;
    return d;
  }
  diff = std::min(diff, static_cast<int32_t>(kMaxPodCreateDeletePerSync));
  if (spec.indexed) {
    d.create_indexes =
        FirstPendingIndexes(d.succeeded_indexes, active, diff, spec.completions.value_or(0));
    diff = static_cast<int32_t>(d.create_indexes.size());
  }
  d.creates = diff;
  return d;
}

bool EnsureCondition(json::object& status, const JobCondition& c, std::string_view now) {
  json::object fresh{{"type", c.type},       {"status", c.status},
                     {"lastProbeTime", now}, {"lastTransitionTime", now},
                     {"reason", c.reason},   {"message", c.message}};
  json::value* cv = status.if_contains("conditions");
  if (cv == nullptr || !cv->is_array()) {
    // An absent condition already reads as False; an empty list is not written for it.
    if (c.status == "False") return false;
    status["conditions"] = json::array{std::move(fresh)};
    return true;
  }
  json::array& list = cv->get_array();
  for (json::value& v : list) {
    if (!v.is_object() || api::Object::GetString(v.get_object(), "type") != c.type) continue;
    const json::object& old = v.get_object();
    if (api::Object::GetString(old, "status") == c.status &&
        api::Object::GetString(old, "reason") == c.reason &&
        api::Object::GetString(old, "message") == c.message) {
      return false;
    }
    v = std::move(fresh);
    return true;
  }
  if (c.status == "False") return false;  // an absent condition already reads as False
  list.push_back(std::move(fresh));
  return true;
}

StatusPlan TrackStatus(const JobSnapshot& snap, const SyncDecision& d, const PodOpsResult& ops) {
  StatusPlan plan;
  const api::Object& job = *snap.job;
  const JobSpec& spec = d.spec;
  const json::object& old_status = StatusOf(job);
  json::object status = old_status;
  const std::string now = Rfc3339(snap.now);

  std::optional<JobCondition> finished = d.finished;
  int32_t active = d.active;
  int32_t ready = d.ready;
  int32_t terminating = d.terminating;
  if (finished) {
    // Not finished until every active pod is on its way out.
    if (ops.deleted != d.active) finished.reset();
    active -= ops.deleted;
    terminating += ops.deleted;
    ready -= ops.deleted_ready;
  } else {
    active = d.active - ops.deleted + ops.created;
    terminating += ops.deleted;
    ready -= ops.deleted_ready;
    const bool complete = spec.completions ? d.succeeded >= *spec.completions && active == 0
                                           : d.succeeded > 0 && active == 0;
    if (complete) {
      finished = JobCondition{std::string(kSuccessCriteriaMet), "True",
                              std::string(kReasonCompletionsReached),
                              "Reached expected number of succeeded pods"};
    } else if (d.manage_called) {
      if (spec.suspend) {
        if (EnsureCondition(
                status, {std::string(kSuspended), "True", "JobSuspended", "Job suspended"}, now)) {
          plan.events.push_back({"Normal", "Suspended", "Job suspended"});
        }
      } else if (EnsureCondition(status,
                                 {std::string(kSuspended), "False", "JobResumed", "Job resumed"},
                                 now)) {
        plan.events.push_back({"Normal", "Resumed", "Job resumed"});
        // activeDeadlineSeconds counts continuous activity: a resumed Job starts afresh.
        status["startTime"] = now;
      }
    }
  }
  if (d.set_start_time && !status.contains("startTime")) status["startTime"] = now;
  SetOmitZero(status, "active", active);
  status["ready"] = ready;
  status["terminating"] = terminating;
  plan.terminating = terminating;

  // Newly terminated pods go to uncountedTerminatedPods before their finalizers are removed.
  std::set<std::string> with_finalizer;
  for (const PodInfo& p : snap.pods) {
    if (p.has_finalizer) with_finalizer.insert(p.uid);
  }
  // Uids whose finalizer is already gone were removed by an earlier sync that failed to write
  // the counters: count them now.
  UncountedLists unc = CleanUncounted(status, with_finalizer);

  std::vector<const PodInfo*> pods;
  for (const PodInfo& p : snap.pods) pods.push_back(&p);
  if (spec.indexed) {
    std::stable_sort(pods.begin(), pods.end(),
                     [](const PodInfo* a, const PodInfo* b) { return a->index < b->index; });
  }
  std::set<std::string> unc_succeeded(unc.succeeded.begin(), unc.succeeded.end());
  std::set<std::string> unc_failed(unc.failed.begin(), unc.failed.end());
  std::vector<int> new_succeeded_indexes;
  const bool finishing_as_failure = finished && finished->type != kSuccessCriteriaMet;
  for (const PodInfo* p : pods) {
    if (!p->has_finalizer) continue;  // counted by an earlier sync
    const bool failed = IsFailed(*p, spec);
    const bool can_remove = job.being_deleted() || finished || p->phase == "Succeeded" || failed;
    if (!can_remove) continue;
    plan.remove_finalizers.push_back(p->name);
    if (p->phase == "Succeeded" && !unc_failed.count(p->uid)) {
      if (spec.indexed) {
        if (ValidIndex(*p, spec) && !d.prev_succeeded_indexes.Has(p->index)) {
          new_succeeded_indexes.push_back(p->index);
        }
      } else if (unc_succeeded.insert(p->uid).second) {
        unc.succeeded.push_back(p->uid);
      }
    } else if (failed || finishing_as_failure) {
      // Once the Job is finishing as failed, every unfinished pod counts as failed.
      if (!unc_failed.count(p->uid) && (!spec.indexed || ValidIndex(*p, spec))) {
        unc.failed.push_back(p->uid);
        unc_failed.insert(p->uid);
      }
    }
    if (new_succeeded_indexes.size() + unc.succeeded.size() + unc.failed.size() >=
        static_cast<size_t>(kMaxUncountedPods)) {
      // Keep the status small and the sync short; the writes requeue the Job.
      plan.max_uncounted_reached = true;
      break;
    }
  }
  SetUncounted(status, unc);
  if (spec.indexed) {
    std::sort(new_succeeded_indexes.begin(), new_succeeded_indexes.end());
    OrderedIntervals all = d.succeeded_indexes.WithOrderedIndexes(new_succeeded_indexes);
    SetOmitZero(status, "succeeded", all.Total());
    status["completedIndexes"] = all.ToString();
  }

  if (finished && finished->type == kFailureTarget) {
    // The interim FailureTarget records the verdict before the pods' finalizers go.
    EnsureCondition(status, *finished, now);
    finished = JobCondition{std::string(kFailed), "True", finished->reason, finished->message};
  }
  if (finished && finished->type == kSuccessCriteriaMet) {
    if (!ConditionTrue(status, kSuccessCriteriaMet)) EnsureCondition(status, *finished, now);
    finished = JobCondition{std::string(kComplete), "True", finished->reason, finished->message};
  }
  plan.final_condition = finished;
  plan.needs_write = status != old_status;
  plan.status = std::move(status);
  return plan;
}

FinishResult FinishStatus(const StatusPlan& plan, const std::set<std::string>& still_finalized,
                          const JobSpec& spec, std::string_view now) {
  FinishResult r;
  r.status = plan.status;
  UncountedLists unc = CleanUncounted(r.status, still_finalized);
  SetUncounted(r.status, unc);
  r.changed = r.status != plan.status;
  const bool all_counted = unc.succeeded.empty() && unc.failed.empty();
  if (plan.final_condition && !plan.max_uncounted_reached && all_counted && plan.terminating == 0) {
    const JobCondition& c = *plan.final_condition;
    r.changed |= EnsureCondition(r.status, c, now);
    if (c.type == kComplete) {
      r.status["completionTime"] = now;
      const int64_t succeeded = api::FindInt(r.status, {"succeeded"});
      if (spec.completions && succeeded > *spec.completions) {
        r.events.push_back({"Warning", "TooManySucceededPods",
                            "Too many succeeded pods running after completion count reached"});
      }
      r.events.push_back({"Normal", "Completed", "Job completed"});
    } else {
      r.events.push_back({"Warning", c.reason, c.message});
    }
    r.finished = true;
    r.changed = true;
  }
  return r;
}

bool IsFinished(const api::Object& job) {
  const json::object& status = StatusOf(job);
  return ConditionTrue(status, kComplete) || ConditionTrue(status, kFailed);
}

std::optional<util::Clock::WallTime> FinishTime(const api::Object& job) {
  const json::object& status = StatusOf(job);
  if (auto t = util::ParseRfc3339(api::Object::GetString(status, "completionTime"))) return t;
  for (std::string_view type : {kComplete, kFailed}) {
    const json::object* c = FindCondition(status, type);
    if (c != nullptr && api::Object::GetString(*c, "status") == "True") {
      return util::ParseRfc3339(api::Object::GetString(*c, "lastTransitionTime"));
    }
  }
  return std::nullopt;
}

api::Object PodFromTemplate(const api::Object& job, int index) {
  api::Object pod;
  pod.mutable_doc()["apiVersion"] = "v1";
  pod.mutable_doc()["kind"] = "Pod";
  // No reference into pod.doc() is held across calls that touch it: boost::json::object's
  // operator[] may rehash (moving every value) even when the key exists.
  pod.set_namespace(job.namespace_());
  const json::object* tmeta = api::FindObject(job.doc(), {"spec", "template", "metadata"});
  if (tmeta != nullptr) {
    for (std::string_view f : {"labels", "annotations", "finalizers"}) {
      if (const json::value* v = tmeta->if_contains(f)) pod.mutable_metadata()[f] = *v;
    }
  }
  std::string name(job.name());
  if (index >= 0) {
    // podGenerateNameWithIndex: "<job>-<index>-", the job name cut to fit 58 characters.
    std::string suffix = "-" + std::to_string(index) + "-";
    constexpr size_t kMaxGeneratedNameLength = 58;
    std::string prefix = name + suffix;
    if (prefix.size() > kMaxGeneratedNameLength) {
      prefix = prefix.substr(0, kMaxGeneratedNameLength - suffix.size()) + suffix;
    }
    pod.mutable_metadata()["generateName"] = prefix;
  } else {
    pod.mutable_metadata()["generateName"] = name + "-";
  }
  pod.AddFinalizer(kTrackingFinalizer);
  json::array refs;
  refs.push_back(json::object{{"apiVersion", "batch/v1"},
                              {"kind", "Job"},
                              {"name", name},
                              {"uid", job.uid()},
                              {"controller", true},
                              {"blockOwnerDeletion", true}});
  pod.mutable_metadata()["ownerReferences"] = std::move(refs);
  const json::object* tspec = api::FindObject(job.doc(), {"spec", "template", "spec"});
  json::object spec = tspec != nullptr ? *tspec : json::object();
  if (index >= 0) {
    pod.SetAnnotation(kCompletionIndexAnnotation, std::to_string(index));
    pod.SetLabel(kCompletionIndexLabel, std::to_string(index));
    spec["hostname"] = name + "-" + std::to_string(index);
    for (std::string_view list : {"initContainers", "containers"}) {
      json::value* cs = spec.if_contains(list);
      if (cs == nullptr || !cs->is_array()) continue;
      for (json::value& c : cs->get_array()) {
        if (!c.is_object()) continue;
        json::value& env = c.get_object()["env"];
        if (!env.is_array()) env = json::array();
        bool present = false;
        for (const json::value& e : env.get_array()) {
          if (e.is_object() &&
              api::Object::GetString(e.get_object(), "name") == kCompletionIndexEnv) {
            present = true;
          }
        }
        if (present) continue;
        env.get_array().push_back(json::object{
            {"name", kCompletionIndexEnv},
            {"valueFrom",
             json::object{{"fieldRef",
                           json::object{{"fieldPath", "metadata.annotations['" +
                                                          std::string(kCompletionIndexAnnotation) +
                                                          "']"}}}}}});
      }
    }
  }
  pod.mutable_doc()["spec"] = std::move(spec);
  return pod;
}

}  // namespace converge::controllers::job
