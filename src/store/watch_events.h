// RevisionEvents: the changes one write transaction made, as watchers receive them.
//
// Built once by the committer (or once per read of history) and shared by every watcher that
// sees it: fan-out copies pointers, never key-values.
//
// A change's previous value is kept as its record stores it (usually a zstd frame) unless it was
// in memory already: most watchers do not ask for prev_kv, and decompressing every overwritten
// value on the commit thread for them cost as much as compressing the new one. A watcher that
// asks materializes it (PrevKeyValue).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/kv.h"
#include "store/record.h"
#include "store/revision.h"
#include "util/status.h"

namespace converge::store {

// A previous value as its record holds it: `value` is the zstd frame when `compressed`.
struct StoredPrev {
  RevisionPair mod;
  std::string value;
  bool compressed = false;
  Revision create_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
};

struct RevisionEvents {
  Revision revision = 0;
  // In the order the transaction made them (sub-revision order). prev_kv is set when the
  // previous value was in memory; otherwise stored_prev holds it (watchers that did not ask for
  // prev_kv drop both).
  std::vector<Event> events;
  // Empty, or one entry per event: the previous value of an event whose prev_kv is null, as
  // stored (nullopt: there was none, or prev_kv holds it).
  std::vector<std::optional<StoredPrev>> stored_prev;

  void Add(Event event, std::optional<StoredPrev> stored) {
    if (stored || !stored_prev.empty()) {
      stored_prev.resize(events.size());
      stored_prev.push_back(std::move(stored));
    }
    events.push_back(std::move(event));
  }
};
using RevisionEventsPtr = std::shared_ptr<const RevisionEvents>;

// The previous key-value of events.events[i] (null if the key had none): prev_kv, or
// stored_prev decompressed. DataLoss if the stored frame does not decompress.
inline util::StatusOr<KeyValuePtr> PrevKeyValue(const RevisionEvents& events, size_t i) {
  const Event& e = events.events[i];
  if (e.prev_kv != nullptr || i >= events.stored_prev.size() || !events.stored_prev[i]) {
    return e.prev_kv;
  }
  const StoredPrev& s = *events.stored_prev[i];
  RecordView record;
  record.key = e.kv->key;
  record.value = s.value;
  record.compressed = s.compressed;
  record.create_revision = s.create_revision;
  record.version = s.version;
  record.lease = s.lease;
  return MakeKeyValue(s.mod, record);
}

}  // namespace converge::store
