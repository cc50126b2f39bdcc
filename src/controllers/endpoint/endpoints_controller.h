// The Endpoints controller's I/O layer (upstream's endpoint controller in
// kube-controller-manager): keeps, for every Service with a selector, the Endpoints object of its
// name (decide.h), deletes it when the Service goes, and recreates it when it is deleted. Services
// without a selector keep the Endpoints their users write. The key is the Service's
// namespace/name; a pod's change requeues the Services that select it (before or after).
//
// Thread-safety: run by the controller-manager; Sync for one Service at a time.
#pragma once

#include <memory>

#include "controllers/manager/controller_context.h"

namespace converge::controllers::endpoint {

util::StatusOr<std::unique_ptr<RunnableController>> NewEndpointsController(ControllerContext& ctx);

}  // namespace converge::controllers::endpoint
