// ResourceEventHandler: what an informer tells its handlers (client-go's ResourceEventHandler).
//
// Handlers should only look at the objects and enqueue keys (level-based: the worker re-reads
// the cache). Each handler runs on its own thread; a slow handler delays only itself.
//
// Deletions may be inferred: when a watch was down and a relist no longer contains an object, the
// handler gets a DeletedObject with final_state_unknown set and the last state this client saw
// (client-go's DeletedFinalStateUnknown tombstone). The key is always there.
#pragma once

#include <functional>

#include "api/object.h"
#include "api/types.h"

namespace converge::client {

struct DeletedObject {
  api::ObjectKey key;
  // The final state (observed deletion) or the last state known (tombstone). Null only for a
  // tombstone of an object this client never saw.
  api::ObjectPtr object;
  bool final_state_unknown = false;
};

// Thread-safety: each handler's methods are called from one thread (its own), one at a time.
class ResourceEventHandler {
 public:
  virtual ~ResourceEventHandler() = default;
  // A new object; `is_initial_list` when it comes from the informer's first list (or, for a
  // handler added to a running informer, from the replay of the cache).
  virtual void OnAdd(const api::ObjectPtr& obj, bool is_initial_list) = 0;
  // A change, or a periodic resync (then old_obj == new_obj, the same pointer).
  virtual void OnUpdate(const api::ObjectPtr& old_obj, const api::ObjectPtr& new_obj) = 0;
  virtual void OnDelete(const DeletedObject& deleted) = 0;
};

// A handler from functions; unset ones ignore their notification.
struct ResourceEventHandlerFuncs final : ResourceEventHandler {
  std::function<void(const api::ObjectPtr&, bool)> add;
  std::function<void(const api::ObjectPtr&, const api::ObjectPtr&)> update;
  std::function<void(const DeletedObject&)> del;

  void OnAdd(const api::ObjectPtr& obj, bool initial) override {
    if (add) add(obj, initial);
  }
  void OnUpdate(const api::ObjectPtr& old_obj, const api::ObjectPtr& new_obj) override {
    if (update) update(old_obj, new_obj);
  }
  void OnDelete(const DeletedObject& d) override {
    if (del) del(d);
  }
};

}  // namespace converge::client
