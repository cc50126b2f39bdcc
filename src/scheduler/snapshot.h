// Snapshot: the nodes of the cluster as one scheduling cycle sees them (upstream
// internal/cache.Snapshot). The cache refreshes it incrementally at the start of every cycle
// (Cache::UpdateSnapshot copies only the NodeInfos that changed), so a cycle reads a consistent
// state without holding the cache lock.
//
// Thread-safety: none; owned by the scheduling thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "scheduler/node_info.h"

namespace converge::scheduler {

class Snapshot {
 public:
  // Nodes with a Node object, in the cache's order (node add order).
  const std::vector<NodeInfo*>& nodes() const { return node_list_; }
  size_t NumNodes() const { return node_list_.size(); }
  // The NodeInfo of a node, or null.
  const NodeInfo* Get(std::string_view name) const;

 private:
  friend class Cache;
  std::unordered_map<std::string, std::unique_ptr<NodeInfo>> node_map_;
  std::vector<NodeInfo*> node_list_;
  int64_t generation_ = 0;           // the cache generation this snapshot reflects
  int64_t node_order_version_ = -1;  // the cache's node order this node_list_ follows
};

}  // namespace converge::scheduler
