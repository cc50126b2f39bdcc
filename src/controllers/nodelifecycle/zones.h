// Zones and disruption (upstream's handleDisruption): NoExecute tainting is rate-limited per
// zone, and slowed or stopped when a large part of a zone — or everything — is unhealthy, since
// then the likelier culprit is the network or the control plane, not the nodes.
//
//   state              when                                               taint rate
//   Normal             otherwise                                          node_eviction_rate
//   PartialDisruption  > 2 not-ready nodes and ≥ unhealthy_zone_threshold secondary rate if the
//                      (55 %) of the zone not ready                       zone has > 50 nodes, else
//                      0
//   FullDisruption     every node of the zone not ready                   node_eviction_rate
// and when every zone is in FullDisruption, no node is tainted at all (and NoExecute taints are
// removed): "all nodes are not-Ready: entering master disruption mode".
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "api/object.h"

namespace converge::controllers::nodelifecycle {

enum class ZoneState { kInitial, kNormal, kPartialDisruption, kFullDisruption };
std::string_view ZoneStateName(ZoneState s);

// Upstream's GetZoneKey: region and zone labels ("" for a node with neither).
std::string ZoneKey(const api::Object& node);

// From the Ready statuses of a zone's nodes ("True" is ready; anything else is not).
ZoneState ComputeZoneState(const std::vector<std::string>& ready_statuses,
                           double unhealthy_zone_threshold);

struct ZoneRates {
  double node_eviction_rate = 0.1;             // --node-eviction-rate (nodes/s)
  double secondary_node_eviction_rate = 0.01;  // --secondary-node-eviction-rate
  size_t large_cluster_size_threshold = 50;    // --large-cluster-size-threshold
};
double ZoneTaintRate(ZoneState state, size_t zone_size, const ZoneRates& rates);

}  // namespace converge::controllers::nodelifecycle
