// The disruption controller's pure part (upstream's pkg/controller/disruption): from a
// PodDisruptionBudget, the pods its selector matches and the scale of their controllers, the
// budget's status.
//
//   expectedPods   minAvailable as an integer: the number of matching pods; a percentage, or
//                  maxUnavailable: the sum of spec.replicas of the pods' controllers (each
//                  counted once), found through ScaleResolver;
//   desiredHealthy minAvailable (a percentage of expectedPods, rounded up), or expectedPods minus
//                  maxUnavailable (a percentage of expectedPods, rounded up), never below 0;
//   currentHealthy ready pods that are not being deleted and not listed in disruptedPods less
//                  than kDeletionTimeout ago (the eviction handler listed them: they are about to
//                  go, though the cache may still show them);
//   disruptionsAllowed  currentHealthy - desiredHealthy, but 0 when negative or when no pods are
//                  expected (a budget whose first pods appear before this controller has run is
//                  then safe);
//   disruptedPods  the entries of pods that still exist, are not being deleted and were listed
//                  less than kDeletionTimeout ago; the budget is checked again when the oldest
//                  remaining entry expires;
//   conditions     DisruptionAllowed: True/SufficientPods when disruptions are allowed, else
//                  False/InsufficientPods (False/SyncFailed when the expected count failed).
//
// Worked example: a Deployment of 3 replicas, all ready, with maxUnavailable "34%": expected 3,
// maxUnavailable ceil(3 * 0.34) = 2, desired 1, allowed 3 - 1 = 2. The eviction handler takes
// one (allowed 1, disruptedPods {web-a}); this controller then counts web-a as unhealthy until it
// is deleted or two minutes pass: current 2, allowed 1 — the eviction is not counted twice.
//
// Thread-safety: stateless functions.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "controllers/common/owner_refs.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::controllers::disruption {

// How long an eviction's entry in disruptedPods keeps the pod from counting as healthy; a pod
// still there afterwards was not deleted after all (upstream's DeletionTimeout).
inline constexpr std::chrono::minutes kDeletionTimeout{2};

// A controller of pods and its desired replica count.
struct ControllerScale {
  std::string uid;
  int32_t replicas = 0;
};

// Finds the controller a pod's controller reference names (in namespace `ns`) and its scale;
// nullopt when no supported controller with that reference exists; an error when it could not
// be read.
using ScaleResolver = std::function<util::StatusOr<std::optional<ControllerScale>>(
    std::string_view ns, const OwnerRef& ref)>;

// The denominator of percentages: the summed replicas of the pods' distinct controllers.
// Pods without a controller are listed in `unmanaged` and do not count.
struct ExpectedScale {
  int32_t count = 0;
  std::vector<std::string> unmanaged;
};
// Error (FailedPrecondition) when a pod's controller is not found: "found no controllers for pod
// \"NAME\"".
util::StatusOr<ExpectedScale> GetExpectedScale(const std::vector<api::ObjectPtr>& pods,
                                               const ScaleResolver& resolve);

// An int-or-percent scaled against `total`, percentages rounded up (upstream's
// intstr.GetScaledValueFromIntOrPercent with roundUp). Error for a malformed percentage.
util::StatusOr<int32_t> ScaledValue(const boost::json::value& int_or_percent, int32_t total);

struct BudgetSnapshot {
  api::ObjectPtr budget;
  std::vector<api::ObjectPtr> pods;  // the namespace's pods matching the budget's selector
  ScaleResolver resolve;             // needed only for percentages and maxUnavailable
  util::Clock::WallTime now;
};

struct BudgetPlan {
  // The status to write; nullopt when the stored one is already up to date.
  std::optional<boost::json::object> status;
  // Check again after this long (an entry of disruptedPods expires).
  std::optional<util::Clock::Duration> recheck_after;
  // Why the counts could not be computed; `status` is then the fail-safe one (no disruptions
  // allowed, DisruptionAllowed False/SyncFailed) and the sync should be retried.
  util::Status error;
  // Pods selected by the budget that no controller manages (percentages ignore them).
  std::vector<std::string> unmanaged_pods;
  // disruptedPods entries dropped because the pod outlived kDeletionTimeout.
  std::vector<std::string> not_deleted;
};

BudgetPlan DecideBudget(const BudgetSnapshot& snapshot);

}  // namespace converge::controllers::disruption
