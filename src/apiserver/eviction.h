// The decisions behind pods/eviction (upstream's pkg/registry/core/pod/storage/eviction.go), as
// pure functions over the pod and its PodDisruptionBudgets; handlers_eviction.cc does the I/O.
//
// An eviction is a delete that asks the pod's budget first:
//   - a pod that is terminal, Pending or already being deleted has nothing left to disrupt: it is
//     deleted without looking at budgets (CanIgnoreBudget);
//   - no budget selects the pod: it is deleted;
//   - more than one budget selects it: 500, the eviction subresource does not support that;
//   - one budget: an unready pod may bypass it (UnreadyPodBypassesBudget: AlwaysAllow, or
//     IfHealthyBudget while the budget is healthy); otherwise CheckAndDecrement takes one
//     disruption from status.disruptionsAllowed and records the pod in status.disruptedPods, or
//     refuses with 429 TooManyRequests, which clients (kubectl drain) retry.
//
// Thread-safety: stateless functions.
#pragma once

#include <string_view>
#include <vector>

#include "api/object.h"
#include "apiserver/errors.h"

namespace converge::apiserver {

// Upstream's MaxDisruptedPodSize: a budget whose disruptedPods map is larger than this has too
// many evictions the disruption controller has not confirmed yet, and refuses more.
inline constexpr size_t kMaxDisruptedPods = 2000;

// The PodCondition an evicted pod gets before it is deleted (upstream: DisruptionTarget /
// EvictionByEvictionAPI).
inline constexpr std::string_view kDisruptionTargetCondition = "DisruptionTarget";

// Sets the pod's DisruptionTarget condition to True / EvictionByEvictionAPI ("Eviction API:
// evicting"); lastTransitionTime (`now`, RFC 3339) moves only when the status changes.
void MarkDisruptionTarget(api::Object& pod, std::string_view now);

// Terminal (Succeeded/Failed), Pending, or being deleted: evicting it disrupts nothing.
bool CanIgnoreBudget(const api::Object& pod);

// Whether the delete of a pod that skipped the budget must carry the pod's resourceVersion as
// a precondition, so the pod cannot have become ready (and budget-relevant) in between: true
// unless the pod is terminal or already being deleted.
bool ShouldEnforceResourceVersion(const api::Object& pod);

// status.conditions Ready=True.
bool IsPodReadyForEviction(const api::Object& pod);

// The budgets (in `budgets`, all of the pod's namespace) whose selector matches the pod's
// labels. A missing or invalid selector matches nothing.
std::vector<const api::Object*> BudgetsForPod(const api::Object& pod,
                                              const std::vector<api::Object>& budgets);

// For an unready pod: true when it may be deleted without taking a disruption from `budget`:
// spec.unhealthyPodEvictionPolicy AlwaysAllow, or (IfHealthyBudget, the default) the budget
// currently has currentHealthy >= desiredHealthy > 0.
bool UnreadyPodBypassesBudget(const api::Object& budget);

// Upstream's checkAndDecrement: the budget as it must be written back (disruptionsAllowed - 1,
// the DisruptionAllowed condition when it reaches 0, status.disruptedPods[pod] = now unless
// `dry_run`), or the refusal: 429 while status.observedGeneration < metadata.generation or when
// no disruption is allowed, 403 when disruptionsAllowed is negative or disruptedPods is too big.
// `now` is RFC 3339.
ApiOr<api::Object> CheckAndDecrement(const api::Object& budget, std::string_view pod_name,
                                     std::string_view now, bool dry_run);

// 429 "Cannot evict pod as it would violate the pod's disruption budget." with a
// DisruptionBudget cause saying the budget is still being processed (retry after 10 s).
ApiError BudgetBeingProcessed(std::string_view budget_name);

// The Status of an eviction refused because several budgets select the pod (upstream answers
// it as a 500 Failure Status, not as an error).
ApiError MultipleBudgets();

}  // namespace converge::apiserver
