// NodeRestriction admission: what a node identity (system:node:<name>) writes must belong to that
// node — the part of upstream's NodeRestriction plugin that needs the request body (the node
// authorizer has already checked which objects a node may touch):
//   - a Node it creates or updates is its own;
//   - a Pod it creates is bound to it (spec.nodeName), and it cannot move a pod to another node;
//   - a Lease it creates in kube-node-lease carries its name.
//
// Thread-safety: stateless; thread-safe.
#pragma once

#include "apiserver/admission.h"

namespace converge::apiserver {

class NodeRestriction final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "NodeRestriction"; }
  std::optional<ApiError> Validate(const AdmissionAttributes& attrs) override;
};

}  // namespace converge::apiserver
