// The Job controller's decisions as pure functions (upstream's syncJob, manageJob and
// trackJobStatusAndRemoveFinalizers with the API calls taken out).
//
// One sync runs in three steps, with I/O between them:
//
//   1. Decide (this snapshot → SyncDecision): counts succeeded/failed pods, finds whether the Job
//      has finished (a pre-existing SuccessCriteriaMet/FailureTarget; backoffLimit exceeded;
//      activeDeadlineSeconds passed; enough completions), and plans pod deletions (all active
//      pods of a finished Job, excess pods, all pods of a suspended Job) or creations (up to
//      parallelism and remaining completions, lowest pending indexes first, none while the
//      pod-failure backoff runs).
//   2. The I/O layer creates/deletes pods; TrackStatus (decision + what succeeded → StatusPlan)
//      computes the new status: active/ready/terminating, startTime, the Suspended condition,
//      the pods newly terminated (added to status.uncountedTerminatedPods before their tracking
//      finalizer is removed, so that a crash cannot count a pod twice or lose it), and the
//      interim condition (SuccessCriteriaMet or FailureTarget, as 1.32 writes them before the
//      terminal one).
//   3. The I/O layer writes that status (when it changed), removes the finalizers; FinishStatus
//      moves the pods whose finalizer is gone from uncountedTerminatedPods into the counters
//      and, once nothing is uncounted or terminating, adds Complete (with completionTime) or
//      Failed.
//
// Pod-failure backoff (upstream's backoffRecord): after n consecutive failures (since the last
// success) new pods wait 10 s·2ⁿ⁻¹, capped, counted from the last failure's finish time.
//
// Thread-safety: pure functions over values.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/object.h"
#include "controllers/job/job_types.h"
#include "util/clock.h"

namespace converge::controllers::job {

struct BackoffRecord {
  int32_t failures_after_last_success = 0;
  std::optional<util::Clock::WallTime> last_failure_time;
  bool operator==(const BackoffRecord&) const = default;
};

struct BackoffOptions {
  // 10 s: upstream's DefaultJobPodFailureBackOff.
  util::Clock::Duration base = std::chrono::seconds(10);
  // 6 min: the cap the Job documentation states (10 s·2ⁿ: 10, 20, 40, 80, 160, 320, 360...).
  util::Clock::Duration max = std::chrono::minutes(6);
};

// The record after this sync's newly finished pods (each list sorted by finish time inside).
BackoffRecord NextBackoffRecord(BackoffRecord old, std::vector<util::Clock::WallTime> succeeded,
                                std::vector<util::Clock::WallTime> failed);
// How long new pods must still wait; zero when they may be created now.
util::Clock::Duration RemainingBackoff(const BackoffRecord& r, util::Clock::WallTime now,
                                       const BackoffOptions& options = {});

struct JobCondition {
  std::string type;
  std::string status = "True";
  std::string reason;
  std::string message;
  bool operator==(const JobCondition&) const = default;
};

struct JobSnapshot {
  api::ObjectPtr job;
  std::vector<PodInfo> pods;  // the Job's pods (controller reference = the Job)
  util::Clock::WallTime now{};
  BackoffRecord backoff;  // the stored record before this sync
};

struct SyncDecision {
  JobSpec spec;
  int32_t active = 0;  // active pods before any action
  int32_t ready = 0;
  int32_t terminating = 0;
  int32_t succeeded = 0;  // including uncounted and newly finished
  int32_t failed = 0;
  std::optional<JobCondition> finished;  // as decided before pod actions
  bool set_start_time = false;
  // Pods to delete, and whether their tracking finalizer goes first (manageJob's deletions:
  // excess or suspended pods; a finished Job's deletions keep it until they are counted).
  std::vector<std::string> deletes;
  bool remove_finalizer_before_delete = false;
  int32_t deletes_ready = 0;  // how many of `deletes` are ready
  // Pods to create: `creates` of them; for Indexed Jobs, these indexes.
  int32_t creates = 0;
  std::vector<int> create_indexes;
  bool manage_called = false;  // manageJob ran (deletion in progress blocks it)
  std::optional<util::Clock::Duration> requeue_after;  // deadline or backoff re-check
  BackoffRecord backoff;  // the record to store once the status is written
  OrderedIntervals prev_succeeded_indexes;
  OrderedIntervals succeeded_indexes;
};

SyncDecision Decide(const JobSnapshot& snapshot, const BackoffOptions& backoff = {});

// What the I/O layer achieved of a decision.
struct PodOpsResult {
  int32_t created = 0;        // successfully created
  int32_t deleted = 0;        // successfully deleted (or already gone)
  int32_t deleted_ready = 0;  // of which were ready
};

struct Event {
  std::string type;  // "Normal" or "Warning"
  std::string reason;
  std::string message;
  bool operator==(const Event&) const = default;
};

struct StatusPlan {
  boost::json::object status;                   // the status to write before removing finalizers
  bool needs_write = false;                     // status differs from the stored one
  std::vector<std::string> remove_finalizers;   // pod names
  std::optional<JobCondition> final_condition;  // Complete/Failed to add once all is counted
  int32_t terminating = 0;
  bool max_uncounted_reached = false;
  std::vector<Event> events;  // Suspended / Resumed
};

StatusPlan TrackStatus(const JobSnapshot& snapshot, const SyncDecision& decision,
                       const PodOpsResult& ops);

struct FinishResult {
  boost::json::object status;
  bool changed = false;
  bool finished = false;
  std::vector<Event> events;  // Completed / the failure reason
};

// After finalizer removal: `still_finalized` are the uids that still carry the tracking
// finalizer. `now_rfc3339` stamps new conditions.
FinishResult FinishStatus(const StatusPlan& plan, const std::set<std::string>& still_finalized,
                          const JobSpec& spec, std::string_view now_rfc3339);

// Whether a Job has a Complete or Failed condition with status True.
bool IsFinished(const api::Object& job);
// When it finished: completionTime, else the finishing condition's lastTransitionTime.
std::optional<util::Clock::WallTime> FinishTime(const api::Object& job);

// Sets a condition (status, reason, message) in status.conditions, stamping lastProbeTime and
// lastTransitionTime when it is new or its status flips. Returns whether anything changed.
bool EnsureCondition(boost::json::object& status, const JobCondition& c, std::string_view now);

// The pod a Job creates for `index` (-1: NonIndexed): the template with the tracking finalizer,
// the controller reference, and for Indexed Jobs the completion-index annotation and label,
// JOB_COMPLETION_INDEX env and hostname <job>-<index>. Name left to generateName.
api::Object PodFromTemplate(const api::Object& job, int index);

// Upstream's MaxUncountedPods and MaxPodCreateDeletePerSync.
inline constexpr int kMaxUncountedPods = 500;
inline constexpr int kMaxPodCreateDeletePerSync = 500;

}  // namespace converge::controllers::job
