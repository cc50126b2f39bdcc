// OwnerGraph: the garbage collector's picture of who owns whom (upstream's GraphBuilder and its
// uidToNode), built from the ownerReferences of every object the collector watches.
//
// A node per uid. An object the collector has seen through an informer is an *observed* node; an
// owner that only appears in someone's ownerReferences gets a *virtual* node (its namespace is the
// dependent's, a guess) and is queued for attemptToDelete, which asks the API server whether it
// exists and answers with a virtual delete event when it does not.
//
// Process() applies one change and returns what the workers must look at next. It is a pure
// state machine: no I/O, no clock, no threads, so table tests drive it event by event. Worked
// example, foreground deletion of a ReplicaSet `rs` owning pod `p` (blockOwnerDeletion: true):
//
//   add rs                  → node rs
//   add p (owner rs)        → node p, rs.dependents = {p}
//   update rs (deletionTimestamp + foregroundDeletion)
//                           → rs.deleting_dependents; attempt_to_delete {p, rs}
//   (worker deletes p; worker sees rs still blocked by p)
//   delete p                → p removed; rs is deleting dependents → attempt_to_delete {rs}
//   (worker finds no blocking dependents: removes rs's finalizer)
//   delete rs               → rs removed
//
// Thread-safety: not thread-safe; the garbage collector guards it with one mutex.
#pragma once

#include <boost/unordered/unordered_flat_set.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/object.h"
#include "controllers/garbagecollector/object_identity.h"

namespace converge::controllers::garbagecollector {

// A node's owner references. Nodes with equal references share one list: the pods of a
// ReplicaSet all name it alike, so a graph of 100,000 pods holds a handful of lists.
using OwnerList = std::shared_ptr<const std::vector<OwnerReference>>;

struct Node {
  ObjectIdentity identity;
  // Seen through an informer. False for a virtual node (an owner only known from references).
  bool observed = false;
  // deletionTimestamp seen; one-way.
  bool being_deleted = false;
  // Being deleted with the foregroundDeletion finalizer: waits for its blocking dependents.
  // One-way.
  bool deleting_dependents = false;
  // Never null (an empty list when the object has no owners).
  OwnerList owners = NoOwners();
  // The nodes whose owners include this uid. They stay valid: the graph's nodes never move, and
  // a node leaves every owner's set before it leaves the graph.
  boost::unordered_flat_set<const Node*> dependents;
  // The list the last dependent added here had, offered to the next one with equal references.
  OwnerList dependents_owners;

  // `dependents` ordered by uid, for callers that act on them in a stable order.
  std::vector<const Node*> SortedDependents() const;
  std::vector<std::string> DependentUids() const;

  static const OwnerList& NoOwners();
};

enum class GraphEventType { kAdd, kUpdate, kDelete };

struct GraphEvent {
  GraphEventType type = GraphEventType::kAdd;
  // Informer events: the object (for deletes its final or last known state) and, for updates,
  // the state before. The object's own apiVersion/kind may be empty; `api_version` and `kind`
  // (the watched resource's) name it.
  api::ObjectPtr object;
  api::ObjectPtr old_object;
  std::string api_version;
  std::string kind;
  // A virtual delete: attemptToDelete found `virtual_identity` absent from the API server.
  bool is_virtual = false;
  ObjectIdentity virtual_identity;

  // The identity of the object the event is about.
  ObjectIdentity Identity() const;
};

// What the workers must do after a change. Uids, deduplicated by the queues.
struct GraphActions {
  std::vector<std::string> attempt_to_delete;
  // Re-checks of a replaced virtual node: retried with backoff, not at once.
  std::vector<std::string> attempt_to_delete_rate_limited;
  std::vector<std::string> attempt_to_orphan;
  // Identities verified absent (for the absent-owner cache).
  std::vector<ObjectIdentity> absent;
  // A dependent whose owner reference names an object observed in another namespace
  // (a Warning event "OwnerRefInvalidNamespace" on the dependent).
  struct InvalidNamespaceOwner {
    ObjectIdentity dependent;
    OwnerReference owner;
  };
  std::vector<InvalidNamespaceOwner> invalid_namespace;
};

class OwnerGraph {
 public:
  GraphActions Process(const GraphEvent& event);

  // Null when the graph has no node for `uid`.
  const Node* Find(std::string_view uid) const;
  size_t size() const { return nodes_.size(); }

 private:
  Node* FindMutable(std::string_view uid);
  void InsertNode(Node node, GraphActions& out);
  // Adds `n` to the dependents of each of `owners`, creating virtual owner nodes as needed.
  void AddDependentToOwners(const Node& n, const std::vector<OwnerReference>& owners,
                            GraphActions& out);
  void RemoveDependentFromOwners(const Node& dependent, const std::vector<OwnerReference>& owners);
  // `refs` as a list, shared with an earlier dependent of the same first owner when equal.
  OwnerList ShareOwners(std::vector<OwnerReference> refs);
  // Owners that were waiting for `removed`/`changed` references to stop blocking them.
  void AddUnblockedOwners(const std::vector<OwnerReference>& removed,
                          const std::vector<std::pair<OwnerReference, OwnerReference>>& changed,
                          GraphActions& out);
  // Orphan/foreground transitions of a (new or updated) object.
  void ProcessTransitions(const api::Object* old_obj, const api::Object& obj, Node& n,
                          GraphActions& out);
  void ProcessDelete(const GraphEvent& event, GraphActions& out);
  // Splits `dependents` by whether their references to the owner match `owner` exactly.
  void PartitionDependents(const Node& owner_node, const ObjectIdentity& owner,
                           std::vector<std::string>* matching,
                           std::vector<std::string>* nonmatching) const;
  std::optional<ObjectIdentity> AlternateOwnerIdentity(const std::vector<std::string>& deps,
                                                       const ObjectIdentity& absent) const;

  struct UidHash {
    using is_transparent = void;
    size_t operator()(std::string_view uid) const { return std::hash<std::string_view>()(uid); }
  };
  // uid → node. Node-based: a node's address is kept for its life (dependents point to it).
  std::unordered_map<std::string, Node, UidHash, std::equal_to<>> nodes_;
};

}  // namespace converge::controllers::garbagecollector
