#include "controllers/garbagecollector/owner_graph.h"

#include <algorithm>
#include <map>

namespace converge::controllers::garbagecollector {

namespace {

bool DeletionStartsWithFinalizer(const api::Object* old_obj, const api::Object& obj,
                                 std::string_view finalizer) {
  if (!obj.being_deleted() || !obj.HasFinalizer(finalizer)) return false;
  if (old_obj == nullptr) return true;
  return !old_obj->being_deleted() || !old_obj->HasFinalizer(finalizer);
}

struct ReferenceDiff {
  std::vector<OwnerReference> added;
  std::vector<OwnerReference> removed;
  std::vector<std::pair<OwnerReference, OwnerReference>> changed;  // (old, new)
};

ReferenceDiff DiffReferences(const std::vector<OwnerReference>& old_refs,
                             const std::vector<OwnerReference>& new_refs) {
  ReferenceDiff d;
  std::map<std::string, const OwnerReference*> old_by_uid;
  for (const OwnerReference& r : old_refs) old_by_uid[r.uid] = &r;
  for (const OwnerReference& r : new_refs) {
    auto it = old_by_uid.find(r.uid);
    if (it == old_by_uid.end()) {
      d.added.push_back(r);
      continue;
    }
    if (!(*it->second == r)) d.changed.emplace_back(*it->second, r);
    old_by_uid.erase(it);
  }
  for (const auto& [uid, r] : old_by_uid) d.removed.push_back(*r);
  return d;
}

}  // namespace

ObjectIdentity GraphEvent::Identity() const {
  if (is_virtual || object == nullptr) return virtual_identity;
  ObjectIdentity id;
  id.api_version = api_version.empty() ? std::string(object->api_version()) : api_version;
  id.kind = kind.empty() ? std::string(object->kind()) : kind;
  id.name = std::string(object->name());
  id.uid = std::string(object->uid());
  id.ns = std::string(object->namespace_());
  return id;
}

const OwnerList& Node::NoOwners() {
  static const OwnerList none = std::make_shared<const std::vector<OwnerReference>>();
  return none;
}

std::vector<const Node*> Node::SortedDependents() const {
  std::vector<const Node*> out(dependents.begin(), dependents.end());
  std::sort(out.begin(), out.end(),
            [](const Node* a, const Node* b) { return a->identity.uid < b->identity.uid; });
  return out;
}

std::vector<std::string> Node::DependentUids() const {
  std::vector<std::string> out;
  for (const Node* d : SortedDependents()) out.push_back(d->identity.uid);
  return out;
}

const Node* OwnerGraph::Find(std::string_view uid) const {
  auto it = nodes_.find(uid);
  return it == nodes_.end() ? nullptr : &it->second;
}

Node* OwnerGraph::FindMutable(std::string_view uid) {
  auto it = nodes_.find(uid);
  return it == nodes_.end() ? nullptr : &it->second;
}

OwnerList OwnerGraph::ShareOwners(std::vector<OwnerReference> refs) {
  if (refs.empty()) return Node::NoOwners();
  if (const Node* first = Find(refs.front().uid);
      first != nullptr && first->dependents_owners && *first->dependents_owners == refs) {
    return first->dependents_owners;
  }
  return std::make_shared<const std::vector<OwnerReference>>(std::move(refs));
}

void OwnerGraph::InsertNode(Node node, GraphActions& out) {
  std::string uid = node.identity.uid;
  const Node& n = nodes_.insert_or_assign(std::move(uid), std::move(node)).first->second;
  AddDependentToOwners(n, *n.owners, out);
}

void OwnerGraph::AddDependentToOwners(const Node& n, const std::vector<OwnerReference>& owners,
                                      GraphActions& out) {
  const ObjectIdentity& dep = n.identity;
  bool potentially_invalid = false;
  for (const OwnerReference& owner : owners) {
    Node* owner_node = FindMutable(owner.uid);
    if (owner_node == nullptr) {
      // A virtual node: attemptToDelete will verify the owner exists, and if it does not, a
      // virtual delete event removes it and queues its dependents.
      Node v;
      v.identity = IdentityOfReference(owner, dep.ns);
      v.observed = false;
      v.dependents.insert(&n);
      v.dependents_owners = n.owners;
      nodes_.emplace(owner.uid, std::move(v));
      out.attempt_to_delete.push_back(owner.uid);
      continue;
    }
    owner_node->dependents.insert(&n);
    owner_node->dependents_owners = n.owners;
    if (potentially_invalid) continue;
    const bool owner_namespaced = !owner_node->identity.ns.empty();
    if (owner_namespaced && owner_node->identity.ns != dep.ns) {
      // A namespaced owner can only own objects of its own namespace.
      if (owner_node->observed) out.invalid_namespace.push_back({dep, owner});
      potentially_invalid = true;
    } else if (!ReferenceMatchesCoordinates(owner, owner_node->identity)) {
      // The reference names the uid with other coordinates than the node has.
      potentially_invalid = true;
    } else if (!owner_namespaced && owner_node->identity.ns != dep.ns && !owner_node->observed) {
      // A virtual cluster-scoped owner seen from a namespaced dependent: perhaps a namespaced
      // kind wrongly referenced by a cluster-scoped child; let attemptToDelete verify.
      potentially_invalid = true;
    }
  }
  if (potentially_invalid) out.attempt_to_delete.push_back(dep.uid);
}

void OwnerGraph::RemoveDependentFromOwners(const Node& dependent,
                                           const std::vector<OwnerReference>& owners) {
  for (const OwnerReference& owner : owners) {
    if (Node* o = FindMutable(owner.uid)) o->dependents.erase(&dependent);
  }
}

void OwnerGraph::AddUnblockedOwners(
    const std::vector<OwnerReference>& removed,
    const std::vector<std::pair<OwnerReference, OwnerReference>>& changed, GraphActions& out) {
  for (const OwnerReference& ref : removed) {
    if (!ref.block_owner_deletion) continue;
    const Node* owner = Find(ref.uid);
    if (owner != nullptr && owner->deleting_dependents) out.attempt_to_delete.push_back(ref.uid);
  }
  for (const auto& [old_ref, new_ref] : changed) {
    if (!old_ref.block_owner_deletion || new_ref.block_owner_deletion) continue;
    const Node* owner = Find(new_ref.uid);
    if (owner != nullptr && owner->deleting_dependents)
      out.attempt_to_delete.push_back(new_ref.uid);
  }
}

void OwnerGraph::ProcessTransitions(const api::Object* old_obj, const api::Object& obj, Node& n,
                                    GraphActions& out) {
  if (DeletionStartsWithFinalizer(old_obj, obj, kOrphanFinalizer)) {
    out.attempt_to_orphan.push_back(n.identity.uid);
    return;
  }
  if (DeletionStartsWithFinalizer(old_obj, obj, kForegroundFinalizer)) {
    n.deleting_dependents = true;
    for (const Node* dep : n.SortedDependents()) out.attempt_to_delete.push_back(dep->identity.uid);
    out.attempt_to_delete.push_back(n.identity.uid);
  }
}

GraphActions OwnerGraph::Process(const GraphEvent& event) {
  GraphActions out;
  if (event.type == GraphEventType::kDelete) {
    ProcessDelete(event, out);
    return out;
  }
  if (event.object == nullptr) return out;
  const api::Object& obj = *event.object;
  const ObjectIdentity identity = event.Identity();
  if (identity.uid.empty()) return out;

  Node* existing = FindMutable(identity.uid);
  if (existing != nullptr && !existing->observed) {
    // First informer event for a node known so far only from references.
    if (!(identity == existing->identity)) {
      // Dependents that named this uid with other coordinates may be invalid: re-check them
      // (a no-op for dependents whose owners are solid).
      std::vector<std::string> matching, nonmatching;
      PartitionDependents(*existing, identity, &matching, &nonmatching);
      for (const std::string& dep_uid : nonmatching) {
        const Node* dep = Find(dep_uid);
        if (dep != nullptr && !identity.ns.empty() && dep->identity.ns != identity.ns) {
          for (const OwnerReference& r : *dep->owners) {
            if (r.uid == identity.uid) out.invalid_namespace.push_back({dep->identity, r});
          }
        }
        out.attempt_to_delete.push_back(dep_uid);
      }
      existing->identity = identity;
    }
    existing->observed = true;
  }

  if (existing == nullptr) {
    Node n;
    n.identity = identity;
    n.observed = true;
    n.owners = ShareOwners(OwnerReferencesOf(obj));
    n.being_deleted = obj.being_deleted();
    n.deleting_dependents = obj.being_deleted() && obj.HasFinalizer(kForegroundFinalizer);
    InsertNode(std::move(n), out);
    ProcessTransitions(event.old_object.get(), obj, *FindMutable(identity.uid), out);
    return out;
  }

  std::vector<OwnerReference> refs = OwnerReferencesOf(obj);
  if (refs != *existing->owners) {
    ReferenceDiff diff = DiffReferences(*existing->owners, refs);
    // Changed references may unblock owners waiting for their dependents.
    AddUnblockedOwners(diff.removed, diff.changed, out);
    existing->owners = ShareOwners(std::move(refs));
    AddDependentToOwners(*existing, diff.added, out);
    RemoveDependentFromOwners(*existing, diff.removed);
  }
  if (obj.being_deleted()) existing->being_deleted = true;
  ProcessTransitions(event.old_object.get(), obj, *existing, out);
  return out;
}

void OwnerGraph::ProcessDelete(const GraphEvent& event, GraphActions& out) {
  const ObjectIdentity deleted = event.Identity();
  Node* existing = FindMutable(deleted.uid);
  if (existing == nullptr) return;
  bool remove = true;
  if (event.is_virtual) {
    if (!existing->observed) {
      // Our node is virtual too: its coordinates are a guess. Dependents that name the uid
      // differently keep it alive under one of their identities.
      std::vector<std::string> matching, nonmatching;
      PartitionDependents(*existing, deleted, &matching, &nonmatching);
      if (!nonmatching.empty()) {
        remove = false;
        if (!matching.empty()) {
          out.absent.push_back(deleted);
          for (const std::string& d : matching) out.attempt_to_delete.push_back(d);
        }
        if (existing->identity == deleted) {
          if (auto alt = AlternateOwnerIdentity(nonmatching, deleted)) {
            existing->identity = *alt;
            out.attempt_to_delete_rate_limited.push_back(deleted.uid);
          }
        }
      }
    } else if (!(existing->identity == deleted)) {
      // An observed node outlives a virtual delete of other coordinates; only the dependents
      // that used those coordinates are affected.
      remove = false;
      std::vector<std::string> matching, nonmatching;
      PartitionDependents(*existing, deleted, &matching, &nonmatching);
      if (!matching.empty()) {
        out.absent.push_back(deleted);
        for (const std::string& d : matching) out.attempt_to_delete.push_back(d);
      }
    }
  }
  if (!remove) return;
  // Its dependents before it leaves its owners' sets: a node that owns itself is one of them.
  const std::vector<std::string> dependents = existing->DependentUids();
  const OwnerList owners = existing->owners;
  RemoveDependentFromOwners(*existing, *owners);
  nodes_.erase(nodes_.find(deleted.uid));
  if (!dependents.empty()) out.absent.push_back(deleted);
  for (const std::string& d : dependents) out.attempt_to_delete.push_back(d);
  for (const OwnerReference& owner : *owners) {
    const Node* o = Find(owner.uid);
    // The owner may have been waiting for this dependent to go.
    if (o != nullptr && o->deleting_dependents) out.attempt_to_delete.push_back(owner.uid);
  }
}

void OwnerGraph::PartitionDependents(const Node& owner_node, const ObjectIdentity& owner,
                                     std::vector<std::string>* matching,
                                     std::vector<std::string>* nonmatching) const {
  const bool owner_namespaced = !owner.ns.empty();
  for (const Node* dep : owner_node.SortedDependents()) {
    const std::string& uid = dep->identity.uid;
    bool match = false, mismatch = false;
    if (owner_namespaced && owner.ns != dep->identity.ns) {
      mismatch = true;  // a namespaced owner cannot own across namespaces
    } else {
      for (const OwnerReference& r : *dep->owners) {
        if (r.uid != owner.uid) continue;
        if (ReferenceMatchesCoordinates(r, owner)) {
          match = true;
        } else {
          mismatch = true;
        }
      }
    }
    if (match) matching->push_back(uid);
    if (mismatch) nonmatching->push_back(uid);
  }
}

std::optional<ObjectIdentity> OwnerGraph::AlternateOwnerIdentity(
    const std::vector<std::string>& deps, const ObjectIdentity& absent) const {
  const bool absent_cluster_scoped = absent.ns.empty();
  std::vector<ObjectIdentity> seen = {absent};
  std::optional<ObjectIdentity> first, first_following;
  std::vector<std::string> sorted = deps;
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& uid : sorted) {
    const Node* dep = Find(uid);
    if (dep == nullptr) continue;
    for (const OwnerReference& r : *dep->owners) {
      if (r.uid != absent.uid) continue;
      if (ReferenceMatchesCoordinates(r, absent) &&
          (absent_cluster_scoped || absent.ns == dep->identity.ns)) {
        continue;  // exactly the identity verified absent
      }
      ObjectIdentity ref = IdentityOfReference(r, dep->identity.ns);
      if (absent_cluster_scoped && ref.api_version == absent.api_version &&
          ref.kind == absent.kind) {
        ref.ns.clear();  // that kind is known to be cluster-scoped
      }
      if (std::find(seen.begin(), seen.end(), ref) != seen.end()) continue;
      seen.push_back(ref);
      if (!first) first = ref;
      if (!first_following && ReferenceLessThan(absent, ref)) first_following = ref;
    }
  }
  return first_following ? first_following : first;
}

}  // namespace converge::controllers::garbagecollector
