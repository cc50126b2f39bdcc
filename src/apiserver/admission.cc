#include "apiserver/admission.h"

namespace converge::apiserver {

std::optional<ApiError> AdmissionChain::Run(AdmissionAttributes& attrs) const {
  if (auto err = Mutate(attrs)) return err;
  return Validate(attrs);
}

std::optional<ApiError> AdmissionChain::Mutate(AdmissionAttributes& attrs) const {
  for (const auto& p : plugins_) {
    if (auto err = p->Admit(attrs)) return err;
  }
  return std::nullopt;
}

std::optional<ApiError> AdmissionChain::Validate(const AdmissionAttributes& attrs) const {
  for (const auto& p : plugins_) {
    if (auto err = p->Validate(attrs)) return err;
  }
  return std::nullopt;
}

}  // namespace converge::apiserver
