#include "apiserver/admission.h"

namespace converge::apiserver {

std::optional<ApiError> AdmissionChain::Run(AdmissionAttributes& attrs) const {
  for (const auto& p : plugins_) {
    if (auto err = p->Admit(attrs)) return err;
  }
  for (const auto& p : plugins_) {
    if (auto err = p->Validate(attrs)) return err;
  }
  return std::nullopt;
}

}  // namespace converge::apiserver
