// Namespace deletion as pure functions (upstream's pkg/controller/namespace/deletion, with the API
// calls taken out): what step a namespace is at, how long remaining content should take to go,
// and the status conditions that report progress.
//
// The lifecycle of a deleted namespace:
//   1. deletionTimestamp set by the API server (phase Terminating, spec.finalizers ["kubernetes"]);
//   2. this controller deletes every namespaced resource in it (DeleteCollection with background
//      propagation, per resource, each group at its preferred version), lists what remains and
//      reports it in status.conditions;
//   3. while content remains — pods within their grace period, objects held by finalizers — it
//      re-checks after estimate/2+1 seconds;
//   4. once nothing remains it removes "kubernetes" from spec.finalizers through /finalize, and
//      the API server removes the namespace when no finalizer is left.
//
// Thread-safety: pure functions over values.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "api/types.h"
#include "util/clock.h"

namespace converge::controllers::namespace_ {

inline constexpr std::string_view kKubernetesFinalizer = "kubernetes";
// Re-check delay for content held by finalizers (upstream's finalizerEstimateSeconds).
inline constexpr int64_t kFinalizerEstimateSeconds = 15;

// The condition types this controller maintains, in upstream's order.
inline constexpr std::string_view kDiscoveryFailure = "NamespaceDeletionDiscoveryFailure";
inline constexpr std::string_view kGroupVersionParsingFailure =
    "NamespaceDeletionGroupVersionParsingFailure";
inline constexpr std::string_view kContentFailure = "NamespaceDeletionContentFailure";
inline constexpr std::string_view kContentRemaining = "NamespaceContentRemaining";
inline constexpr std::string_view kFinalizersRemaining = "NamespaceFinalizersRemaining";

enum class NamespaceStep {
  kIgnore,          // not being deleted
  kSetTerminating,  // being deleted, status.phase not yet Terminating
  kFinalized,       // spec.finalizers already empty: nothing left for us
  kDeleteContent,
};
NamespaceStep DecideStep(const api::Object& ns);

// estimateGracefulTerminationForPods, gathered one pod at a time (the controller lists a
// namespace's pods in pages: a namespace may hold 100,000 of them).
struct PodTerminationEstimate {
  // The longest terminationGracePeriodSeconds among the non-terminal pods added.
  int64_t longest_grace_seconds = 0;

  void Add(const api::Object& pod);
  // The estimate, clipped by the time already spent: 0 once the namespace has been deleting for
  // longer than the longest grace period.
  int64_t Seconds(util::Clock::WallTime namespace_deleted_at, util::Clock::WallTime now) const;
};

// What deleting one resource's content left behind.
struct ResourceResult {
  api::GroupVersionResource gvr;
  int64_t estimate_seconds = 0;
  int num_remaining = 0;
  std::map<std::string, int> finalizers_remaining;
  std::string error;  // empty: no error
};

// What the final list of a resource found: how many items, and their finalizers. Gathered one
// item at a time, as the list comes in pages.
struct RemainingContent {
  int count = 0;
  std::map<std::string, int> finalizers;  // finalizer → items that carry it

  void Add(const api::Object& item);
};

// deleteAllContentForGroupVersionResource after the final list: remaining items are expected
// while pods terminate (estimate > 0) or finalizers hold them (the finalizer estimate); anything
// else is an error ("unexpected items still remain in namespace: ns for gvr: ...").
ResourceResult SummarizeRemaining(const api::GroupVersionResource& gvr, std::string_view ns,
                                  const RemainingContent& remaining, int64_t estimate);

struct NamespaceCondition {
  std::string type;
  std::string status;  // "True" (failing) or "False" (fine)
  std::string reason;
  std::string message;
};

// Everything one deletion pass learnt.
struct ContentReport {
  std::string discovery_error;      // upstream's "unable to retrieve ..." text, or empty
  std::string group_version_error;  // group-version parsing failure, or empty
  std::vector<ResourceResult> resources;
};

struct ContentOutcome {
  int64_t estimate_seconds = 0;  // > 0: re-check after estimate/2+1 seconds
  // Conditions in their failing state (upstream's newConditions); the others are "fine".
  std::vector<NamespaceCondition> failing;
  std::vector<std::string> errors;  // non-empty: the pass failed (retry with backoff)
};
ContentOutcome Summarize(const ContentReport& report);

// upstream's updateConditions: sets every maintained condition type in `status.conditions` to
// its failing variant from `failing`, or to its fine variant; lastTransitionTime changes only
// when the status flips. Returns whether anything changed.
bool UpdateConditions(boost::json::object& status, const std::vector<NamespaceCondition>& failing,
                      std::string_view now);

// The body for PUT /api/v1/namespaces/<ns>/finalize: the namespace with `token` removed from
// spec.finalizers (the rest sorted, as upstream's set does).
api::Object FinalizeRequest(const api::Object& ns, std::string_view token);

}  // namespace converge::controllers::namespace_
