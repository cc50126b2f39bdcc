// Allocates cluster IPs for Services on create (upstream does it in the service registry; here it
// is a mutating admission step so that the Service strategy stays a pure function).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "apiserver/admission.h"

namespace converge::apiserver {

class ServiceClusterIpAllocator final : public AdmissionPlugin {
 public:
  // Returns the cluster IPs of every existing Service (from the watch cache).
  using UsedIps = std::function<std::set<std::string>()>;
  explicit ServiceClusterIpAllocator(UsedIps used) : used_(std::move(used)) {}
  std::string_view name() const override { return "ServiceClusterIPAllocator"; }
  std::optional<ApiError> Admit(AdmissionAttributes& attrs) override;

 private:
  UsedIps used_;
  std::mutex mu_;
  // IPs handed out recently, which the cache may not show yet: two concurrent creates must not
  // get the same address.
  std::map<std::string, std::chrono::steady_clock::time_point> recent_;  // guarded by mu_
};

}  // namespace converge::apiserver
