#include "scheduler/snapshot.h"

namespace converge::scheduler {

const NodeInfo* Snapshot::Get(std::string_view name) const {
  auto it = node_map_.find(std::string(name));
  return it == node_map_.end() ? nullptr : it->second.get();
}

}  // namespace converge::scheduler
