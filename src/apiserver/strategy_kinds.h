// Per-API-group strategy factories used by MakeStrategy (strategies.cc). Each returns the
// strategy for a resource of its group, or null when the resource is not one it knows (the
// caller then uses the generic Strategy).
#pragma once

#include <memory>

#include "apiserver/strategy.h"

namespace converge::apiserver {

using ResourceInfoPtr = std::shared_ptr<const api::ResourceInfo>;

std::shared_ptr<const Strategy> MakeCoreStrategy(ResourceInfoPtr info);  // ""
// The core group's kinds in files of their own; MakeCoreStrategy asks these first.
std::shared_ptr<const Strategy> MakeCorePodStrategy(ResourceInfoPtr info);      // pods
std::shared_ptr<const Strategy> MakeCoreServiceStrategy(ResourceInfoPtr info);  // services
std::shared_ptr<const Strategy> MakeCoreConfigStrategy(
    ResourceInfoPtr info);                                                // configmaps, secrets
std::shared_ptr<const Strategy> MakeAppsStrategy(ResourceInfoPtr info);   // apps
std::shared_ptr<const Strategy> MakeBatchStrategy(ResourceInfoPtr info);  // batch
std::shared_ptr<const Strategy> MakeCoordinationStrategy(ResourceInfoPtr info);   // leases
std::shared_ptr<const Strategy> MakeEventsStrategy(ResourceInfoPtr info);         // events.k8s.io
std::shared_ptr<const Strategy> MakePolicyStrategy(ResourceInfoPtr info);         // PDBs
std::shared_ptr<const Strategy> MakeRbacStrategy(ResourceInfoPtr info);           // rbac
std::shared_ptr<const Strategy> MakeApiextensionsStrategy(ResourceInfoPtr info);  // CRDs
std::shared_ptr<const Strategy> MakeAdmissionregistrationStrategy(
    ResourceInfoPtr info);  // webhooks
// Every custom resource (info->crd set).
std::shared_ptr<const Strategy> MakeCustomResourceStrategy(ResourceInfoPtr info);

}  // namespace converge::apiserver
