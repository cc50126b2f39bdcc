// The garbage collector's decisions as pure functions (upstream's attemptToDeleteItem,
// processDeletingDependentsItem and classifyReferences, with the API calls taken out).
//
// An attemptToDelete worker: snapshots the item from the graph (ItemView), reads the item live
// from the API server (never trusting the cache alone), looks every owner up (absent-owner cache,
// then a live GET), classifies the owners (ClassifyOwner) and asks DecideItem what to do.
//
// The rules, upstream's:
//   - An item being deleted but not deleting dependents: nothing (its deletion will finish).
//   - An item deleting dependents (foreground): when no dependent blocks it (blockOwnerDeletion),
//     remove its foregroundDeletion finalizer; else queue the blocking dependents that are not
//     themselves deleting dependents.
//   - Otherwise, by owner: solid (exists, not waiting), dangling (absent or another uid),
//     waiting (being deleted with foregroundDeletion).
//       some solid           → keep; drop the references to dangling and waiting owners;
//       waiting, and the item has dependents
//                            → delete it in the foreground; if one of its dependents is itself
//                              deleting dependents (a cycle), first make its own references
//                              non-blocking so the cycle cannot deadlock;
//       otherwise            → delete it, honouring an orphan/foreground finalizer it already has.
//
// Thread-safety: pure functions over values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "controllers/garbagecollector/object_identity.h"
#include "controllers/garbagecollector/owner_graph.h"

namespace converge::controllers::garbagecollector {

// A dependent as its owner's decision needs it.
struct DependentView {
  std::string uid;
  bool deleting_dependents = false;
  // The dependent's reference to the owner has blockOwnerDeletion: true.
  bool blocks_owner = false;
};

// A copy of a node and its dependents, taken under the graph's lock.
struct ItemView {
  ObjectIdentity identity;
  bool observed = false;
  bool being_deleted = false;
  bool deleting_dependents = false;
  std::vector<DependentView> dependents;  // ordered by uid
};

// Null when the graph has no node for `uid`.
std::optional<ItemView> ViewOf(const OwnerGraph& graph, const std::string& uid);

// processDeletingDependentsItem.
struct DeletingDependentsDecision {
  bool remove_finalizer = false;     // no blocking dependent left
  std::vector<std::string> enqueue;  // blocking dependents to (re)consider
};
DeletingDependentsDecision DecideDeletingDependents(const ItemView& item);

enum class OwnerState { kSolid, kDangling, kWaitingForDependentsDeletion };

// What a live lookup of an owner found.
struct OwnerLookup {
  bool found = false;
  std::string uid;
  bool being_deleted = false;
  bool has_foreground_finalizer = false;

  static OwnerLookup Absent() { return {}; }
  static OwnerLookup Of(const api::Object& owner);
};

// A reference's owner is dangling when it is absent or has another uid (a re-created namesake).
OwnerState ClassifyOwner(const OwnerReference& ref, const OwnerLookup& lookup);

struct ClassifiedOwner {
  OwnerReference ref;
  OwnerState state = OwnerState::kSolid;
};

struct ItemDecision {
  enum class Action {
    kNone,
    kRemoveOwnerReferences,  // keep the item, drop the references in remove_owner_uids
    kDelete,                 // delete with propagation_policy (after unblocking if asked)
  };
  Action action = Action::kNone;
  std::vector<std::string> remove_owner_uids;
  // Before deleting: set blockOwnerDeletion false on every reference (cycle breaking).
  bool unblock_owner_references = false;
  std::string propagation_policy;  // "Background", "Foreground" or "Orphan"

  bool operator==(const ItemDecision&) const = default;
};

// The decision for an item that is not deleting dependents, from its live state and its
// classified owners (every reference of `latest`, in order).
ItemDecision DecideItem(const ItemView& item, const api::Object& latest,
                        const std::vector<ClassifiedOwner>& owners);

// Patches (JSON merge patches pinned to the object's resourceVersion, so a concurrent change
// makes them fail with a Conflict instead of overwriting it).
// Drops the references to `uids`; nullopt when none of them is present.
std::optional<std::string> RemoveOwnerReferencesPatch(const api::Object& obj,
                                                      const std::vector<std::string>& uids);
// Sets blockOwnerDeletion false on every reference; nullopt when none blocks.
std::optional<std::string> UnblockOwnerReferencesPatch(const api::Object& obj);
// Removes `finalizer`; nullopt when absent.
std::optional<std::string> RemoveFinalizerPatch(const api::Object& obj, std::string_view finalizer);

}  // namespace converge::controllers::garbagecollector
