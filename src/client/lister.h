// Lister: typed-free reads of an informer's cache by namespace and label selector (client-go's
// generated listers, for any resource).
//
// Thread-safety: safe for concurrent use (reads the Indexer, which is thread-safe).
#pragma once

#include <string_view>
#include <vector>

#include "api/labels.h"
#include "api/object.h"
#include "client/indexer.h"

namespace converge::client {

class Lister {
 public:
  explicit Lister(const Indexer* indexer) : indexer_(indexer) {}

  // Every cached object matching `selector`, in any namespace.
  std::vector<api::ObjectPtr> List(const api::LabelSelector& selector = {}) const;
  // The objects of one namespace matching `selector` (uses the namespace index when present).
  std::vector<api::ObjectPtr> List(std::string_view ns,
                                   const api::LabelSelector& selector = {}) const;
  // Null when not cached.
  api::ObjectPtr Get(const api::ObjectKey& key) const { return indexer_->Get(key); }

 private:
  const Indexer* const indexer_;
};

}  // namespace converge::client
