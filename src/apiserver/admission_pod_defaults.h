// Admission plugins that fill in what upstream's apiserver adds to every new Pod:
//
// ServiceAccountAdmission (upstream's ServiceAccount plugin): a Pod without
//   spec.serviceAccountName runs as `default`; unless automounting is off (on the Pod, or on
//   its ServiceAccount) every container gets the projected `kube-api-access-*` volume at
//   /var/run/secrets/kubernetes.io/serviceaccount (a bound token, the cluster CA, the namespace).
//   Converge does not refuse Pods whose ServiceAccount does not exist yet (upstream does); see
//   docs/COMPATIBILITY.md.
// DefaultTolerationSeconds: a Pod that does not tolerate node.kubernetes.io/not-ready and
//   node.kubernetes.io/unreachable NoExecute taints tolerates them for 300 s, so pods leave dead
//   nodes after five minutes (the node lifecycle controller's evictions honour it).
//
// Thread-safety: both are stateless apart from the lookup, which must be thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "apiserver/admission.h"

namespace converge::apiserver {

inline constexpr std::string_view kServiceAccountMountPath =
    "/var/run/secrets/kubernetes.io/serviceaccount";

class ServiceAccountAdmission final : public AdmissionPlugin {
 public:
  // The ServiceAccount's automountServiceAccountToken, nullopt when unset or unknown.
  using AutomountLookup =
      std::function<std::optional<bool>(const std::string& ns, const std::string& name)>;
  explicit ServiceAccountAdmission(AutomountLookup lookup) : lookup_(std::move(lookup)) {}
  std::string_view name() const override { return "ServiceAccount"; }
  std::optional<ApiError> Admit(AdmissionAttributes& attrs) override;

 private:
  AutomountLookup lookup_;
};

class DefaultTolerationSeconds final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "DefaultTolerationSeconds"; }
  std::optional<ApiError> Admit(AdmissionAttributes& attrs) override;
};

}  // namespace converge::apiserver
