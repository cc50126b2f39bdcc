// RevisionEvents: the changes one write transaction made, as watchers receive them.
//
// Built once by the committer (or once per read of history) and shared by every watcher that
// sees it: fan-out copies pointers, never key-values.
//
// A change's previous value is not read for its event unless it was in memory already: the event
// names the revision of the record that holds it, and a watcher that asks for prev_kv reads it
// from the store (HistorySource::ReadPrevious). Most watchers do not ask (in the API server only
// the Events cache does), and reading every overwritten record on the commit thread cost a
// B-tree walk and a copy per write, and mapped the pages holding those records into the process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "store/kv.h"
#include "store/revision.h"

namespace converge::store {

struct RevisionEvents {
  Revision revision = 0;
  // In the order the transaction made them (sub-revision order). prev_kv is set when the
  // previous value was in memory; otherwise prev_at says where it is stored (watchers that did
  // not ask for prev_kv drop both).
  std::vector<Event> events;
  // Empty, or one entry per event: the revision of the record holding the previous value of an
  // event whose prev_kv is null (zero: there was none, or prev_kv holds it).
  std::vector<RevisionPair> prev_at;

  void Add(Event event, RevisionPair prev) {
    if (!prev.IsZero() || !prev_at.empty()) {
      prev_at.resize(events.size());
      prev_at.push_back(prev);
    }
    events.push_back(std::move(event));
  }
  // Where the previous value of events[i] is stored, if it is not in events[i].prev_kv.
  RevisionPair PrevAt(size_t i) const { return i < prev_at.size() ? prev_at[i] : RevisionPair{}; }
};
using RevisionEventsPtr = std::shared_ptr<const RevisionEvents>;

}  // namespace converge::store
