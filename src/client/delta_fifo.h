// DeltaFIFO: the queue between a Reflector and an informer's processing loop (client-go's
// DeltaFIFO, with Replaced deltas enabled).
//
// It holds, per object key, the list of changes (Deltas) not yet processed, and hands out keys in
// the order they first became dirty. Changes to one key are compressed into one entry, so a slow
// consumer sees each object once with its whole recent history, never the same key twice in the
// queue.
//
//   Add/Update/Delete   append Added/Updated/Deleted for the object's key.
//   Replace(list, rv)   after a (re)list: Replaced for every listed object, and a
//                       Deleted(DeletedFinalStateUnknown) tombstone for every key that is known
//                       (queued, or in KnownObjects — the informer's cache) but missing from the
//                       list: its deletion happened while we were not watching.
//   Resync()            Sync for every known object that has nothing queued.
//
// Deduplication: two Deleted deltas in a row collapse into one, keeping the observed deletion over
// a tombstone. A Delete for a key that is neither queued nor known is dropped (its deletion was
// already reported by a relist).
//
// HasSynced is true once everything of the first Replace (or of whatever was added first) has
// been popped.
//
// Thread-safety: safe for concurrent use. Lock order: DeltaFIFO before KnownObjects (the FIFO
// reads the known objects with its lock held; process callbacks update them under it too).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/object.h"
#include "client/store.h"
#include "util/status.h"

namespace converge::client {

enum class DeltaType { kAdded, kUpdated, kDeleted, kReplaced, kSync };

std::string_view DeltaTypeName(DeltaType t);

struct Delta {
  DeltaType type = DeltaType::kAdded;
  // The object. For a tombstone: the last state this client knew (null when it never knew one).
  api::ObjectPtr object;
  // kDeleted only: the deletion was inferred from a relist, not observed in a watch, so `object`
  // may be stale (client-go's DeletedFinalStateUnknown).
  bool final_state_unknown = false;
};

// The pending changes of one key, oldest first; never empty when handed out.
struct Deltas {
  api::ObjectKey key;
  std::vector<Delta> items;

  const Delta& Newest() const { return items.back(); }
};

struct DeltaFifoOptions {
  // What the consumer already knows (the informer's Indexer): consulted for Delete, Replace and
  // Resync. Not owned. May be null (then only queued keys count as known).
  const KnownObjects* known_objects = nullptr;
};

class DeltaFIFO final : public ReflectorStore {
 public:
  explicit DeltaFIFO(DeltaFifoOptions options = {});

  // ReflectorStore.
  void Add(api::ObjectPtr obj) override;
  void Update(api::ObjectPtr obj) override;
  void Delete(api::ObjectPtr obj) override;
  void Replace(std::vector<api::ObjectPtr> objects, const std::string& resource_version) override;
  void Resync() override;

  // Waits for the oldest dirty key, removes it and calls process(deltas, is_in_initial_list)
  // with the FIFO's lock held — so that the consumer's cache (KnownObjects) changes atomically
  // with the queue, and a Delete or Replace arriving meanwhile sees one consistent state.
  // `process` must not call back into this FIFO and must not block. Returns kCancelled once the
  // FIFO is closed and empty. `synced_after`, when given, tells whether HasSynced() holds after
  // this pop (read under the same lock, so a consumer learns it without calling back in).
  util::Status Pop(const std::function<void(Deltas&, bool is_in_initial_list)>& process,
                   bool* synced_after = nullptr);
  // Pop without the wait: false at once when no key is queued.
  bool TryPop(const std::function<void(Deltas&, bool is_in_initial_list)>& process,
              bool* synced_after = nullptr);

  // Wakes Pop; after Close, Pop still drains what is queued, then returns kCancelled.
  void Close();
  bool closed() const;

  bool HasSynced() const;
  // Keys waiting, in order (for tests and debugging).
  std::vector<api::ObjectKey> QueuedKeys() const;
  // The pending deltas of a key (empty when none).
  std::vector<Delta> Pending(const api::ObjectKey& key) const;
  size_t size() const;

 private:
  void QueueActionLocked(DeltaType type, api::ObjectPtr obj, const api::ObjectKey& key,
                         bool final_state_unknown = false);
  bool HasSyncedLocked() const { return populated_ && initial_population_count_ == 0; }
  // Removes the oldest key (queue_ must not be empty) and processes it; false if it had no
  // deltas (never, by the invariant below). For Pop and TryPop.
  bool PopLocked(const std::function<void(Deltas&, bool)>& process, bool* synced_after);

  const DeltaFifoOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;  // signalled when queue_ gains a key or on Close
  // Invariant: a key is in queue_ exactly when items_ has a non-empty entry for it.
  std::unordered_map<api::ObjectKey, std::vector<Delta>> items_;  // guarded by mu_
  std::deque<api::ObjectKey> queue_;                              // guarded by mu_
  // Set by the first Add/Update/Delete/Replace; with initial_population_count_ it defines
  // HasSynced.
  bool populated_ = false;                // guarded by mu_
  int64_t initial_population_count_ = 0;  // guarded by mu_; keys of the first Replace not popped
  bool closed_ = false;                   // guarded by mu_
};

}  // namespace converge::client
