// The parts of a batch/v1 Job and its pods the Job controller reads, parsed once per sync, and
// the completed-indexes notation ("1,3-5,7") of Indexed Jobs.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "util/clock.h"

namespace converge::controllers::job {

inline constexpr std::string_view kTrackingFinalizer = "batch.kubernetes.io/job-tracking";
inline constexpr std::string_view kCompletionIndexAnnotation =
    "batch.kubernetes.io/job-completion-index";
inline constexpr std::string_view kCompletionIndexLabel =
    "batch.kubernetes.io/job-completion-index";
inline constexpr std::string_view kCompletionIndexEnv = "JOB_COMPLETION_INDEX";

// Condition types and reasons (batch/v1).
inline constexpr std::string_view kComplete = "Complete";
inline constexpr std::string_view kFailed = "Failed";
inline constexpr std::string_view kSuspended = "Suspended";
inline constexpr std::string_view kFailureTarget = "FailureTarget";
inline constexpr std::string_view kSuccessCriteriaMet = "SuccessCriteriaMet";
inline constexpr std::string_view kReasonBackoffLimitExceeded = "BackoffLimitExceeded";
inline constexpr std::string_view kReasonDeadlineExceeded = "DeadlineExceeded";
inline constexpr std::string_view kReasonCompletionsReached = "CompletionsReached";

struct JobSpec {
  int32_t parallelism = 1;
  std::optional<int32_t> completions;  // unset: any success completes the Job
  int32_t backoff_limit = 6;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int64_t> ttl_seconds_after_finished;
  bool indexed = false;
  bool suspend = false;
  // podReplacementPolicy Failed (or a podFailurePolicy): replace a pod only once it has failed,
  // not while it terminates.
  bool only_replace_failed = false;
  std::string restart_policy;  // of the pod template
};
JobSpec ParseJobSpec(const api::Object& job);

struct PodInfo {
  api::ObjectPtr pod;
  std::string name;
  std::string uid;
  std::string phase;
  bool deleting = false;
  bool has_finalizer = false;
  bool ready = false;
  bool assigned = false;  // spec.nodeName set
  int index = -1;         // completion index; -1 unknown/invalid
  int32_t restarts = 0;   // sum over containers
  std::string creation_timestamp;
  // When it finished: latest container finishedAt, else the Ready=False transition, else the
  // deletion timestamp, else the creation timestamp (upstream's getFinishedTime).
  util::Clock::WallTime finished_at{};
};
PodInfo ParsePod(const api::ObjectPtr& pod);

// Active: neither Succeeded nor Failed, and not being deleted (FilterActivePods).
bool IsActive(const PodInfo& p);
// Terminating: being deleted and not terminal.
bool IsTerminating(const PodInfo& p);
// Failed: phase Failed; or, unless only failed pods are replaced, deleted before succeeding
// (orphaned pods may never reach Failed).
bool IsFailed(const PodInfo& p, const JobSpec& spec);

// Upstream's controller.ActivePods order: the first pods are the first to delete (unscheduled
// before scheduled, pending before running, not ready before ready, more restarts first, newer
// first).
bool DeleteFirst(const PodInfo& a, const PodInfo& b);

// Completed indexes as ordered, disjoint, non-adjacent closed intervals.
class OrderedIntervals {
 public:
  struct Interval {
    int first;
    int last;
    bool operator==(const Interval&) const = default;
  };
  // Parses "1,3-5,7"; entries >= completions and malformed entries are ignored.
  static OrderedIntervals Parse(std::string_view s, int completions);
  // This set plus `indexes` (ascending).
  OrderedIntervals WithOrderedIndexes(const std::vector<int>& indexes) const;
  bool Has(int ix) const;
  int Total() const;
  std::string ToString() const;
  const std::vector<Interval>& intervals() const { return intervals_; }

 private:
  std::vector<Interval> intervals_;
};

}  // namespace converge::controllers::job
