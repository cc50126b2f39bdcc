// RevisionEvents: the changes one write transaction made, as watchers receive them.
//
// Built once by the committer (or once per read of history) and shared by every watcher that
// sees it: fan-out copies pointers, never key-values.
#pragma once

#include <memory>
#include <vector>

#include "store/kv.h"

namespace converge::store {

struct RevisionEvents {
  Revision revision = 0;
  // In the order the transaction made them (sub-revision order). prev_kv is set whenever the
  // key had a previous value in the same generation; watchers that did not ask drop it.
  std::vector<Event> events;
};
using RevisionEventsPtr = std::shared_ptr<const RevisionEvents>;

}  // namespace converge::store
