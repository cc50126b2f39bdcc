// The store interfaces of the informer machinery (client-go tools/cache Store, split by user).
//
//   Reflector ──writes──▶ ReflectorStore (DeltaFIFO, or an Indexer directly)
//   DeltaFIFO ──reads───▶ KnownObjects   (the informer's Indexer: what handlers have been told)
//
// Objects are keyed by api::ObjectKey (namespace/name). Everything handed in or out is an
// immutable shared object.
#pragma once

#include <string>
#include <vector>

#include "api/object.h"
#include "api/types.h"

namespace converge::client {

// What a Reflector feeds. Implementations are thread-safe: the reflector's watch loop and its
// resync timer call in from different threads.
class ReflectorStore {
 public:
  virtual ~ReflectorStore() = default;
  virtual void Add(api::ObjectPtr obj) = 0;
  virtual void Update(api::ObjectPtr obj) = 0;
  // `obj` is the last state the watch reported (the server's final state of the object).
  virtual void Delete(api::ObjectPtr obj) = 0;
  // The complete current state after a (re)list at `resource_version`.
  virtual void Replace(std::vector<api::ObjectPtr> objects,
                       const std::string& resource_version) = 0;
  // Periodic resync: re-deliver what is known (see DeltaFIFO::Resync).
  virtual void Resync() = 0;
};

// Read access to the objects the consumer has already seen. Thread-safe.
class KnownObjects {
 public:
  virtual ~KnownObjects() = default;
  virtual std::vector<api::ObjectKey> ListKeys() const = 0;
  // Null when absent.
  virtual api::ObjectPtr GetByKey(const api::ObjectKey& key) const = 0;
};

}  // namespace converge::client
