// managedFields across the /scale subresource (upstream's managedfields.ScaleHandler).
//
// A write to /scale is field-managed on the autoscaling/v1 Scale, not on the parent object: the
// parent's entries that own its replicas field are shown to the Scale's field manager as owning
// the Scale's spec.replicas (ToSubresource), the write (update, patch or apply) is recorded on
// the Scale as on any object, and the Scale's entries are mapped back onto the parent's
// (ToParent). So an apply to /scale conflicts with whoever owns the workload's spec.replicas, and
// the parent keeps the scaler as an entry with `subresource: scale` owning spec.replicas.
//
// Worked example (upstream's TestScaleAllResources), Deployment "test":
//  1. apply by "apply_test" with replicas: 1        parent: apply_test (Apply) owns spec.replicas
//  2. merge PATCH /scale by "scale_test" to 5       ToSubresource: {apply_test Apply:
//  spec.replicas}
//                                                    on the Scale, scale_test takes spec.replicas;
//                                                    ToParent: apply_test loses spec.replicas,
//                                                    scale_test (Update, subresource scale) gains
//                                                    it
//  3. apply /scale by "apply_scale" with 17          409: conflict with "apply_test" (after a
//     (after apply_test forced replicas back)        forced re-apply owns it again); force=true
//                                                    moves it to apply_scale (Apply, scale)
//  4. apply /scale by "co_owning_test" with the      both own it
//     current value
//
// Entry times follow upstream's ToParent exactly: an entry the parent already had keeps the
// parent's time; an entry new to the parent gets the parent's time for that identifier, which
// means none (so a first `kubectl scale` entry carries no time, as on a real cluster).
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "api/fieldpath.h"
#include "apiserver/managed_fields.h"

namespace converge::apiserver {

// The replicas field of the parent in each of its API versions ("apps/v1" -> spec.replicas;
// upstream's ResourcePathMappings). nullopt: that version has no scale subresource (a custom
// resource version without one). Entries in versions missing here are dropped by ToParent.
using ReplicasPaths = std::map<std::string, std::optional<api::Path>, std::less<>>;

// ".spec.replicas" (a CRD's specReplicasPath) -> spec.replicas.
api::Path ReplicasPathFromJsonPath(std::string_view json_path);

// ToSubresource: the parent's entries that own the replicas field of their version, as Scale
// entries owning spec.replicas with apiVersion autoscaling/v1 (identifiers and times kept).
ManagedFields ScaleManagedFieldsFromParent(const ManagedFields& parent, const ReplicasPaths& paths);

// ToParent: the parent's entries after a write through /scale whose Scale entries are `scale`.
// Parent entries without the replicas field stay; those that own it keep it only if the Scale
// still lists them, else lose it (dropped when empty); Scale entries new to the parent and owning
// spec.replicas become parent entries owning the replicas field of `group_version` (the
// request's version) in that version.
ManagedFields ParentManagedFieldsFromScale(const ManagedFields& parent, const ManagedFields& scale,
                                           const ReplicasPaths& paths,
                                           std::string_view group_version);

}  // namespace converge::apiserver
