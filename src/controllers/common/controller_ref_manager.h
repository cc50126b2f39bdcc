// Claiming dependents: adoption and release by selector and controller reference (upstream's
// BaseControllerRefManager.ClaimObject, PodControllerRefManager, ReplicaSetControllerRefManager).
//
// For each candidate (DecideClaim, pure):
//   controlled by someone else                         → ignore
//   controlled by us, selector matches                 → owned (even while we are being deleted)
//   controlled by us, selector no longer matches       → release (not while we are being deleted)
//   orphan, matches, same namespace, neither it nor we
//   are being deleted                                  → adopt
//   anything else                                      → ignore
// ClaimObjects carries the decisions out with strategic-merge patches on the dependent (adding or
// deleting our ownerReference, with the dependent's uid as a precondition). Before the first
// adoption it calls `can_adopt` once: an uncached read of the owner that fails when the owner is
// gone or being deleted (RecheckDeletionTimestamp), so that a deleted owner never adopts. A
// dependent that disappeared meanwhile (NotFound), or a release the server rejects as invalid (the
// reference is already gone, or the name now belongs to a new object), is not an error.
//
// Thread-safety: pure functions; ClaimObjects calls the given functions from the calling thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/labels.h"
#include "api/object.h"
#include "controllers/common/owner_refs.h"
#include "util/status.h"

namespace converge::controllers {

enum class ClaimAction { kIgnore, kOwned, kAdopt, kRelease };

// `matches`: the selector (and any filter) matches the candidate.
ClaimAction DecideClaim(const api::Object& controller, const api::Object& candidate, bool matches);

// What DecideClaim reads of the controller, read once for a loop over many candidates (a
// ReplicaSet's sync decides for every pod of its namespace). Views into the controller object.
struct ClaimController {
  std::string_view uid;
  std::string_view ns;
  bool being_deleted = false;
  static ClaimController Of(const api::Object& controller);
};
// What DecideClaim reads of a candidate, for callers that already have it (PodFacts).
struct ClaimCandidate {
  const api::Object* object = nullptr;  // required; its namespace is read only for an adoption
  std::optional<std::string_view> controller_uid;  // ControllerUidOf(*object)
  bool being_deleted = false;
};
ClaimAction DecideClaim(const ClaimController& controller, const ClaimCandidate& candidate,
                        bool matches);

struct ClaimOptions {
  const api::Object* controller = nullptr;  // required
  api::GroupVersionKind controller_gvk;     // for the ownerReference written on adoption
  api::LabelSelector selector;
  // Extra conditions a dependent must meet to be ours (all of them); may be empty.
  std::vector<std::function<bool(const api::Object&)>> filters;
  // Uncached check before the first adoption; may be null (then adoption is allowed).
  std::function<util::Status()> can_adopt;
  // Applies a strategic-merge patch to a dependent. Required.
  std::function<util::Status(const api::Object& dependent, const std::string& patch)> patch;
};

struct ClaimResult {
  std::vector<api::ObjectPtr> claimed;  // owned or adopted, in candidate order
  util::Status error;                   // the first adoption/release failure; OK otherwise
};

ClaimResult ClaimObjects(const ClaimOptions& options,
                         const std::vector<api::ObjectPtr>& candidates);

// A can_adopt function: `get` reads the owner fresh from the server; adoption is refused
// (FailedPrecondition) when it is gone, has another uid than `uid`, or is being deleted.
std::function<util::Status()> RecheckDeletionTimestamp(
    std::function<util::StatusOr<api::Object>()> get, std::string uid);

}  // namespace converge::controllers
