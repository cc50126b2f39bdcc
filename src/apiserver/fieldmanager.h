// The field manager: managedFields on every write, and server-side apply (upstream's
// k8s.io/apimachinery/pkg/util/managedfields, with sigs.k8s.io/structured-merge-diff's merge
// package underneath). Pure functions: the generic storage and the PATCH handler call them inside
// their read-modify-write; nothing here does I/O.
//
// Ownership in one example (a Deployment, FINDINGS 3.10/3.11):
//  1. `kubectl apply -f web.yaml` (client-side) creates it: manager kubectl-client-side-apply,
//     operation Update, owns every field present after defaulting, including .spec.replicas
//     (defaulted to 1) even though the manifest did not set it.
//  2. `kubectl apply --server-side` of a manifest with replicas: 3 (manager kubectl):
//  .spec.replicas
//     would change and is owned by someone else, so the apply fails with 409:
//       Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1:
//       .spec.replicas
//     (conflicts on fields the last-applied annotation lists with their live values are waived
//     for manager "kubectl": that is upstream's client-side to server-side upgrade path).
//  3. The same apply with force=true succeeds: kubectl (operation Apply) owns .spec.replicas and
//     kubectl-client-side-apply no longer does. Fields both set to the same value are shared.
//  4. A later apply by kubectl without .spec.replicas removes the field from the object (it is
//     defaulted again afterwards) unless another manager still owns it.
//
// Where to call these (the lead wires them in):
//  - UpdateManagedFields after the object to store is final for a create, update (PUT) or
//    non-apply PATCH, i.e. after decoding, defaulting and the strategy's PrepareFor*: upstream
//    defaults at decode time, so the writer owns the defaults it stored. For /status pass
//    subresource "status". Writes through /scale are managed on the autoscaling/v1 Scale (with
//    subresource "scale") and mapped onto the parent's entries: see scale_managed_fields.h.
//  - ServerSideApply inside the read-modify-write of an apply PATCH, on the current object (null
//    when absent: apply creates); then default, run PrepareFor*, CheckObjectName, validate and
//    store the result as for any update. Defaults added after the apply are owned by nobody.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "api/schema.h"
#include "apiserver/errors.h"
#include "util/time_format.h"

namespace converge::apiserver {

struct ManagedFieldsContext {
  // ?fieldManager, or DefaultFieldManager(User-Agent) when absent. Updates with an empty manager
  // are recorded as "unknown".
  std::string manager;
  // "" for the main resource, else "status", "scale", ...
  std::string subresource;
  // The request's group/version, e.g. "apps/v1" or "v1".
  std::string api_version;
  // Written as the entry's time (RFC 3339, seconds).
  util::WallTime now;
  // The strategy's reset fields for this (sub)resource, as dotted paths: fields the write may not
  // change, so that nobody gains or loses them by writing them. Upstream: "status" for the main
  // resource of kinds with a status subresource; "spec" (and some metadata) for /status. See
  // DefaultResetFields.
  std::vector<std::string> reset_fields;
};

// Records a non-apply write in obj's metadata.managedFields (operation Update). `old` is null on
// create. The writer gains the fields it changed (on create: every field present), every other
// manager loses the fields whose values changed or that were removed, and empty entries are
// dropped. The writer's entry gets time `now` only if it changed something.
// Explicit metadata.managedFields in `obj` follow upstream: [] or [{}] clears them (and since an
// existing object without managedFields is not tracked until its next apply, they stay cleared);
// a valid non-empty list replaces the stored one; anything else keeps the stored one. Subresource
// writes always start from the stored entries.
// Never fails (upstream's UpdateNoErrors): if the objects cannot be compared (a list item without
// its keys), obj is left without managedFields.
void UpdateManagedFields(const api::TypeSchema* schema, const api::Object* old, api::Object& obj,
                         const ManagedFieldsContext& ctx);

// Server-side apply of `applied` (the decoded application/apply-patch+yaml body) to `live` (null
// when the object does not exist yet). Returns the merged object carrying the updated
// managedFields (the applier's entry has operation Apply). Errors, as upstream answers them:
//  - 400 BadRequest "Incorrect version specified in apply patch. Specified patch version: X,
//    expected: Y" when applied.apiVersion is not ctx.api_version;
//  - 400 BadRequest "metadata.managedFields must be nil" when the body sets them;
//  - 500 (reason "") "failed to create typed patch object (ns/name; apps/v1, Kind=Deployment):
//    .spec.template.spec.containers: duplicate entries for key [name=\"x\"]" for unkeyable or
//    duplicated list items;
//  - 409 Conflict "Apply failed with 1 conflict: conflict with \"mgr\" using apps/v1:
//    .spec.replicas", causes [{reason FieldManagerConflict, message "conflict with \"mgr\" using
//    apps/v1", field ".spec.replicas"}], unless `force`, which takes the fields over instead.
//    With several: "Apply failed with 2 conflicts: conflicts with \"a\" using apps/v1:\n- .x\n-
//    .y" (grouped by manager). Apply owners print without " using <version>"; subresource owners
//    as "\"mgr\" with subresource \"status\" using apps/v1".
// Fields the applier applied before and omits now are removed from the result unless another
// manager owns them. An apply that changes nothing returns `live` with the applier's time
// unchanged. For manager "kubectl", conflicts the last-applied annotation explains are waived and
// the annotation is rewritten to the applied configuration (if the object has one).
// The name is not checked here: call CheckObjectName on the result.
ApiOr<api::Object> ServerSideApply(const api::TypeSchema* schema, const api::Object* live,
                                   const api::Object& applied, const ManagedFieldsContext& ctx,
                                   bool force);

// The manager name when ?fieldManager is absent (upstream's prefixFromUserAgent): the User-Agent
// up to its first '/', without non-printable characters, at most 128 bytes.
// "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07" -> "kubectl".
std::string DefaultFieldManager(std::string_view user_agent);

// Upstream's ValidatePatchOptions / ValidateCreateOptions / ValidateUpdateOptions for the field
// manager options: `options_kind` is "PatchOptions", "CreateOptions" or "UpdateOptions". For apply
// patches fieldManager is required; `force` is only allowed with apply; fieldManager is at most
// 128 bytes of printable characters. 422 Invalid on kind <options_kind>.meta.k8s.io, e.g.
//   PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply
//   patch
std::optional<ApiError> ValidateFieldManagerOptions(std::string_view options_kind, bool is_apply,
                                                    std::string_view field_manager, bool force_set);

// Upstream's checkName after a PATCH: 400 "the name of the object (a) does not match the name on
// the URL (b)", or "the namespace of the object (a) does not match the namespace on the URL (b)"
// when the object names a namespace other than the URL's.
std::optional<ApiError> CheckObjectName(const api::Object& obj, std::string_view url_name,
                                        std::string_view url_namespace);

// The reset fields most strategies declare: {"status"} for the main resource of a kind with a
// status subresource, {"spec"} for its status subresource, none otherwise. Strategies that
// reset more (metadata.labels for Deployment status) can add to it.
std::vector<std::string> DefaultResetFields(bool has_status_subresource,
                                            std::string_view subresource);

}  // namespace converge::apiserver
