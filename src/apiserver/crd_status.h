// The status of CustomResourceDefinitions as pure functions: conditions (upstream's
// apiextensions helpers SetCRDCondition / FindCRDCondition) and the naming decision (upstream's
// NamingConditionController.calculateNamesAndConditions), which the CRD controller
// (crd_controller.h) applies.
//
// Naming, as upstream: a CRD's requested names (spec.names) become its accepted names
// (status.acceptedNames, the names it is served under) unless another CRD of the same group
// already accepted them; a conflicting name keeps the previously accepted one and sets
// NamesAccepted=False with reason PluralConflict, SingularConflict, ShortNamesConflict,
// KindConflict or ListKindConflict and a message like `"foos" is already in use`. Established
// starts False ("NotAccepted", or "Installing" once names are accepted); the controller sets it
// True ("InitialNamesAccepted") after the resource is served.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace converge::apiserver {

inline constexpr std::string_view kCrdCleanupFinalizer =
    "customresourcecleanup.apiextensions.k8s.io";

struct CrdCondition {
  std::string type;    // NamesAccepted, Established, Terminating
  std::string status;  // True, False, Unknown
  std::string reason;
  std::string message;
};

// The condition of `type` in crd.status.conditions, or null.
const boost::json::object* FindCrdCondition(const boost::json::object& crd, std::string_view type);
bool IsCrdConditionTrue(const boost::json::object& crd, std::string_view type);
// Sets (or adds) a condition; lastTransitionTime becomes `now` only when the status changes or
// the condition is new.
void SetCrdCondition(boost::json::object& crd, const CrdCondition& c, std::string_view now);

struct CrdNamesDecision {
  boost::json::object accepted_names;  // the new status.acceptedNames
  CrdCondition names_accepted;
  CrdCondition established;
};

// `crd` is the CRD being decided; `others` are the other CRDs (any group: those of other groups
// are ignored).
CrdNamesDecision DecideCrdNames(const boost::json::object& crd,
                                const std::vector<const boost::json::object*>& others);

}  // namespace converge::apiserver
