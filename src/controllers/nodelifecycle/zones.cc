#include "controllers/nodelifecycle/zones.h"

namespace converge::controllers::nodelifecycle {

std::string_view ZoneStateName(ZoneState s) {
  switch (s) {
    case ZoneState::kInitial: return "Initial";
    case ZoneState::kNormal: return "Normal";
    case ZoneState::kPartialDisruption: return "PartialDisruption";
    case ZoneState::kFullDisruption: return "FullDisruption";
  }
  return "";
}

std::string ZoneKey(const api::Object& node) {
  auto label = [&](std::string_view a, std::string_view b) {
    if (auto v = node.label(a)) return std::string(*v);
    if (auto v = node.label(b)) return std::string(*v);
    return std::string();
  };
  std::string region =
      label("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region");
  std::string zone = label("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone");
  if (region.empty() && zone.empty()) return "";
  return region + ":\x00:" + zone;
}

ZoneState ComputeZoneState(const std::vector<std::string>& ready_statuses,
                           double unhealthy_zone_threshold) {
  size_t not_ready = 0;
  for (const std::string& s : ready_statuses) {
    if (s != "True") ++not_ready;
  }
  const size_t ready = ready_statuses.size() - not_ready;
  if (!ready_statuses.empty() && not_ready == ready_statuses.size()) {
    return ZoneState::kFullDisruption;
  }
  if (not_ready > 2 && static_cast<double>(not_ready) / static_cast<double>(not_ready + ready) >=
                           unhealthy_zone_threshold) {
    return ZoneState::kPartialDisruption;
  }
  return ZoneState::kNormal;
}

double ZoneTaintRate(ZoneState state, size_t zone_size, const ZoneRates& rates) {
  switch (state) {
    case ZoneState::kNormal:
    case ZoneState::kInitial:
    case ZoneState::kFullDisruption: return rates.node_eviction_rate;
    case ZoneState::kPartialDisruption:
      return zone_size > rates.large_cluster_size_threshold ? rates.secondary_node_eviction_rate
                                                            : 0;
  }
  return 0;
}

}  // namespace converge::controllers::nodelifecycle
