#include "apiserver/admission_service_ip.h"

#include "apiserver/strategy_core.h"

namespace converge::apiserver {

namespace {
// Long enough for the watch cache to have seen any Service created with a recent IP.
constexpr std::chrono::seconds kRecentWindow{60};
}  // namespace

std::optional<ApiError> ServiceClusterIpAllocator::Admit(AdmissionAttributes& attrs) {
  const api::ResourceInfo& info = *attrs.resource;
  if (attrs.operation != "CREATE" || !info.gvr.group.empty() || info.gvr.resource != "services" ||
      !attrs.object || !ServiceNeedsClusterIp(*attrs.object)) {
    return std::nullopt;
  }
  std::set<std::string> used = used_();
  std::lock_guard lock(mu_);
  auto now = std::chrono::steady_clock::now();
  std::erase_if(recent_, [&](const auto& e) { return now - e.second > kRecentWindow; });
  for (const auto& [ip, t] : recent_) used.insert(ip);
  auto ip = AllocateClusterIp(used);
  if (!ip) return InternalError("failed to allocate a serviceIP: range is full");
  AssignClusterIp(*attrs.object, *ip);
  if (!attrs.dry_run) recent_[*ip] = now;
  return std::nullopt;
}

}  // namespace converge::apiserver
