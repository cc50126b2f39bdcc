// Indexer: the informer cache — a thread-safe map from ObjectKey to immutable objects, with
// named secondary indexes (client-go's threadSafeStore + Indexer).
//
// Contract (client-go's ThreadSafeStore, enforced by types here): objects handed out are
// shared_ptr<const Object>; to change one, copy it. Every read sees a state the informer has
// been through; indexes are always consistent with the items (both change under one lock).
//
// Index functions are called with the write lock held and must be pure and fast.
//
// Thread-safety: safe for concurrent use; reads share a lock, writes are exclusive.
#pragma once

#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/object.h"
#include "client/index_funcs.h"
#include "client/store.h"
#include "util/status.h"

namespace converge::client {

class Indexer final : public KnownObjects {
 public:
  explicit Indexer(Indexers indexers = DefaultIndexers());

  // Adds indexes; existing items are indexed at once. InvalidArgument when a name is taken.
  util::Status AddIndexers(Indexers indexers);

  // Inserts or replaces the object at its key; returns the previous object (null if none).
  api::ObjectPtr Upsert(api::ObjectPtr obj);
  // Removes the object at `key`; returns it (null if absent).
  api::ObjectPtr Delete(const api::ObjectKey& key);
  // Makes the content exactly `objects`.
  void Replace(std::vector<api::ObjectPtr> objects);

  api::ObjectPtr Get(const api::ObjectKey& key) const;  // null when absent
  std::vector<api::ObjectPtr> List() const;
  size_t size() const;

  // KnownObjects.
  std::vector<api::ObjectKey> ListKeys() const override;
  api::ObjectPtr GetByKey(const api::ObjectKey& key) const override { return Get(key); }

  // Objects whose index `index` holds `value`. NotFound for an unknown index.
  util::StatusOr<std::vector<api::ObjectPtr>> ByIndex(std::string_view index,
                                                      std::string_view value) const;
  util::StatusOr<std::vector<api::ObjectKey>> IndexKeys(std::string_view index,
                                                        std::string_view value) const;
  // Objects sharing at least one value of index `index` with `obj`.
  util::StatusOr<std::vector<api::ObjectPtr>> Index(std::string_view index,
                                                    const api::Object& obj) const;
  // Every value index `index` currently holds.
  util::StatusOr<std::vector<std::string>> ListIndexFuncValues(std::string_view index) const;
  bool HasIndex(std::string_view index) const;

 private:
  // The objects, found by their own namespace and name: no copy of the key per entry (every
  // in-process informer of pods holds one entry per pod). An entry's object may be replaced by
  // another of the same key (the hash and equality read nothing else), hence `mutable`.
  struct Item {
    mutable api::ObjectPtr obj;
  };
  struct KeyView {
    std::string_view ns;
    std::string_view name;
  };
  struct ItemHash {
    using is_transparent = void;
    size_t operator()(KeyView k) const;
    size_t operator()(const Item& item) const {
      return (*this)(KeyView{item.obj->namespace_(), item.obj->name()});
    }
  };
  struct ItemEqual {
    using is_transparent = void;
    static KeyView Of(KeyView k) { return k; }
    static KeyView Of(const Item& item) { return {item.obj->namespace_(), item.obj->name()}; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Of(a).name == Of(b).name && Of(a).ns == Of(b).ns;
    }
  };
  using Items = std::unordered_set<Item, ItemHash, ItemEqual>;
  // An index value's items, as pointers to their entries in items_ (whose addresses are stable
  // until erased): a query reads the objects without looking each key up again, and an entry
  // costs a pointer instead of a copy of the key.
  using ItemSet = std::unordered_set<const Item*>;
  using IndexMap = std::unordered_map<std::string, ItemSet>;

  // Moves `item` between index values as its object changes from `old_obj` to `new_obj` (null:
  // absent). Call before an erased item's entry goes.
  void IndexLocked(const Item* item, const api::Object* old_obj, const api::Object* new_obj);
  void IndexAllLocked(const std::string& name, const IndexFunc& fn);
  const IndexMap* FindIndexLocked(std::string_view index) const;

  mutable std::shared_mutex mu_;
  Items items_;        // guarded by mu_
  Indexers indexers_;  // guarded by mu_
  // index name → value → items; one entry per indexer.    guarded by mu_
  std::unordered_map<std::string, IndexMap> indices_;
};

}  // namespace converge::client
