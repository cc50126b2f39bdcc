#include "controllers/garbagecollector/decide.h"

#include <algorithm>

namespace converge::controllers::garbagecollector {

namespace json = boost::json;

std::optional<ItemView> ViewOf(const OwnerGraph& graph, const std::string& uid) {
  const Node* n = graph.Find(uid);
  if (n == nullptr) return std::nullopt;
  ItemView v;
  v.identity = n->identity;
  v.observed = n->observed;
  v.being_deleted = n->being_deleted;
  v.deleting_dependents = n->deleting_dependents;
  // In the set's order, as upstream's map of dependents: attempts on an owner whose dependents
  // go one by one (a foreground deletion of 100,000 pods) would otherwise sort them every time.
  for (const Node* dep : n->dependents) {
    DependentView d;
    d.uid = dep->identity.uid;
    d.deleting_dependents = dep->deleting_dependents;
    for (const OwnerReference& r : *dep->owners) {
      if (r.uid == uid && r.block_owner_deletion) d.blocks_owner = true;
    }
    v.dependents.push_back(std::move(d));
  }
  return v;
}

DeletingDependentsDecision DecideDeletingDependents(const ItemView& item) {
  DeletingDependentsDecision d;
  bool blocked = false;
  for (const DependentView& dep : item.dependents) {
    if (!dep.blocks_owner) continue;
    blocked = true;
    // A dependent that is itself deleting dependents is already on its way; queueing it again
    // would only spin.
    if (!dep.deleting_dependents) d.enqueue.push_back(dep.uid);
  }
  d.remove_finalizer = !blocked;
  return d;
}

OwnerLookup OwnerLookup::Of(const api::Object& owner) {
  OwnerLookup l;
  l.found = true;
  l.uid = std::string(owner.uid());
  l.being_deleted = owner.being_deleted();
  l.has_foreground_finalizer = owner.HasFinalizer(kForegroundFinalizer);
  return l;
}

OwnerState ClassifyOwner(const OwnerReference& ref, const OwnerLookup& lookup) {
  if (!lookup.found || lookup.uid != ref.uid) return OwnerState::kDangling;
  if (lookup.being_deleted && lookup.has_foreground_finalizer) {
    return OwnerState::kWaitingForDependentsDeletion;
  }
  return OwnerState::kSolid;
}

ItemDecision DecideItem(const ItemView& item, const api::Object& latest,
                        const std::vector<ClassifiedOwner>& owners) {
  ItemDecision d;
  if (owners.empty()) return d;  // no owner: not ours to collect
  std::vector<std::string> dangling, waiting;
  bool solid = false;
  for (const ClassifiedOwner& o : owners) {
    switch (o.state) {
      case OwnerState::kSolid: solid = true; break;
      case OwnerState::kDangling: dangling.push_back(o.ref.uid); break;
      case OwnerState::kWaitingForDependentsDeletion: waiting.push_back(o.ref.uid); break;
    }
  }
  if (solid) {
    if (dangling.empty() && waiting.empty()) return d;
    // References to owners waiting for their dependents must go, or those owners would wait
    // for this item forever.
    d.action = ItemDecision::Action::kRemoveOwnerReferences;
    d.remove_owner_uids = std::move(dangling);
    d.remove_owner_uids.insert(d.remove_owner_uids.end(), waiting.begin(), waiting.end());
    return d;
  }
  d.action = ItemDecision::Action::kDelete;
  if (!waiting.empty() && !item.dependents.empty()) {
    // Delete in the foreground so this item's own dependents go first. A dependent that is
    // itself deleting dependents may be part of a cycle (this detection has false positives,
    // which cost only a blockOwnerDeletion flag): unblock our references first.
    for (const DependentView& dep : item.dependents) {
      if (dep.deleting_dependents) {
        d.unblock_owner_references = true;
        break;
      }
    }
    d.propagation_policy = "Foreground";
    return d;
  }
  if (latest.HasFinalizer(kOrphanFinalizer)) {
    d.propagation_policy = "Orphan";
  } else if (latest.HasFinalizer(kForegroundFinalizer)) {
    d.propagation_policy = "Foreground";
  } else {
    d.propagation_policy = "Background";
  }
  return d;
}

namespace {

// {"metadata":{"resourceVersion":rv, <field>: value}}
std::string MetadataPatch(const api::Object& obj, std::string_view field, json::value value) {
  json::object meta;
  meta["resourceVersion"] = obj.resource_version();
  meta[field] = std::move(value);
  json::object patch;
  patch["metadata"] = std::move(meta);
  return json::serialize(patch);
}

}  // namespace

std::optional<std::string> RemoveOwnerReferencesPatch(const api::Object& obj,
                                                      const std::vector<std::string>& uids) {
  const api::ArrayView refs = obj.owner_references();
  if (!refs) return std::nullopt;
  json::array kept;
  bool removed = false;
  for (api::View r : refs) {
    std::string_view uid = api::GetString(r.if_object(), "uid");
    if (std::find(uids.begin(), uids.end(), uid) != uids.end()) {
      removed = true;
      continue;
    }
    kept.push_back(api::ToJson(r));
  }
  if (!removed) return std::nullopt;
  return MetadataPatch(obj, "ownerReferences",
                       kept.empty() ? json::value(nullptr) : json::value(std::move(kept)));
}

std::optional<std::string> UnblockOwnerReferencesPatch(const api::Object& obj) {
  const api::ArrayView refs = obj.owner_references();
  if (!refs) return std::nullopt;
  json::array out = api::ToJson(refs);
  bool changed = false;
  for (json::value& r : out) {
    if (!r.is_object()) continue;
    json::value* b = r.get_object().if_contains("blockOwnerDeletion");
    if (b != nullptr && b->is_bool() && b->get_bool()) {
      *b = false;
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  return MetadataPatch(obj, "ownerReferences", std::move(out));
}

std::optional<std::string> RemoveFinalizerPatch(const api::Object& obj,
                                                std::string_view finalizer) {
  const api::ArrayView fin = obj.finalizers();
  if (!fin) return std::nullopt;
  json::array kept;
  bool removed = false;
  for (api::View f : fin) {
    if (f.if_string() == finalizer) {
      removed = true;
      continue;
    }
    kept.push_back(api::ToJson(f));
  }
  if (!removed) return std::nullopt;
  return MetadataPatch(obj, "finalizers",
                       kept.empty() ? json::value(nullptr) : json::value(std::move(kept)));
}

}  // namespace converge::controllers::garbagecollector
