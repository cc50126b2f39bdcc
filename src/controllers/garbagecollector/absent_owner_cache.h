// AbsentOwnerCache: owners verified absent, so that the dependents of a deleted owner do not each
// re-read it (upstream's ReferenceCache, an LRU keyed by the full reference). An identity
// includes the uid, and uids are never reused, so an entry never goes stale.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <list>
#include <map>
#include <mutex>
#include <tuple>

#include "controllers/garbagecollector/object_identity.h"

namespace converge::controllers::garbagecollector {

class AbsentOwnerCache {
 public:
  explicit AbsentOwnerCache(size_t capacity) : capacity_(capacity) {}

  void Add(const ObjectIdentity& id);
  // Whether `id` was recorded absent (refreshes its recency).
  bool Has(const ObjectIdentity& id);

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  static Key KeyOf(const ObjectIdentity& id) {
    return {id.api_version, id.kind, id.name, id.uid, id.ns};
  }

  const size_t capacity_;
  std::mutex mu_;
  std::list<Key> order_;                             // guarded by mu_; most recent first
  std::map<Key, std::list<Key>::iterator> entries_;  // guarded by mu_
};

}  // namespace converge::controllers::garbagecollector
