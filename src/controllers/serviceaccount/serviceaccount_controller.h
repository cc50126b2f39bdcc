// The ServiceAccount controller's I/O layer: watches namespaces and ServiceAccounts and creates
// each active namespace's `default` ServiceAccount when it is missing (decide.h). The key is the
// namespace's name; a ServiceAccount's deletion requeues its namespace, so a deleted `default`
// comes back. An AlreadyExists answer means someone else created it: done.
//
// Thread-safety: run by the controller-manager; Sync for one namespace at a time.
#pragma once

#include <memory>

#include "controllers/manager/controller_context.h"

namespace converge::controllers::serviceaccount {

util::StatusOr<std::unique_ptr<RunnableController>> NewServiceAccountController(
    ControllerContext& ctx);

}  // namespace converge::controllers::serviceaccount
