// NamespaceLifecycle admission: no content in namespaces that do not exist or are being
// terminated, and the system namespaces cannot be deleted (upstream's plugin of that name).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "apiserver/admission.h"

namespace converge::apiserver {

class NamespaceLifecycle final : public AdmissionPlugin {
 public:
  enum class Phase { kActive, kTerminating };
  // Returns the namespace's phase, or nullopt when it does not exist. Should be fresh (a cache
  // lookup with a fallback to storage on a miss).
  using Lookup = std::function<std::optional<Phase>(const std::string& ns)>;

  explicit NamespaceLifecycle(Lookup lookup) : lookup_(std::move(lookup)) {}
  std::string_view name() const override { return "NamespaceLifecycle"; }
  std::optional<ApiError> Validate(const AdmissionAttributes& attrs) override;

 private:
  Lookup lookup_;
};

}  // namespace converge::apiserver
