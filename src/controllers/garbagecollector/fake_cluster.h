// FakeCluster: an in-memory API server for the garbage collector's sync tests. It keeps objects
// with the storage semantics the collector depends on — uids, resourceVersions and their
// preconditions, deletionTimestamp while finalizers remain, the orphan/foregroundDeletion
// finalizers a propagation policy adds, removal when the last finalizer goes — and records every
// change as the GraphEvent an informer would deliver, for the test to feed to the collector.
//
// Test-only (header-only, included by *_test.cc). Thread-safety: safe for concurrent use.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "api/merge_patch.h"
#include "client/api_errors.h"
#include "controllers/garbagecollector/gc_client.h"
#include "controllers/garbagecollector/owner_graph.h"

namespace converge::controllers::garbagecollector {

class FakeCluster final : public GcClient {
 public:
  struct Kind {
    api::GroupVersionResource gvr;
    std::string kind;
    bool namespaced = true;
  };
  static Kind Pods() { return {{"", "v1", "pods"}, "Pod", true}; }
  static Kind ConfigMaps() { return {{"", "v1", "configmaps"}, "ConfigMap", true}; }
  static Kind ReplicaSets() { return {{"apps", "v1", "replicasets"}, "ReplicaSet", true}; }
  static Kind Namespaces() { return {{"", "v1", "namespaces"}, "Namespace", false}; }
  static Kind ClusterRoles() {
    return {{"rbac.authorization.k8s.io", "v1", "clusterroles"}, "ClusterRole", false};
  }

  // An owner reference to `obj`.
  static boost::json::object Ref(const api::Object& obj, bool block = false,
                                 bool controller = false) {
    boost::json::object r;
    r["apiVersion"] = obj.api_version();
    r["kind"] = obj.kind();
    r["name"] = obj.name();
    r["uid"] = obj.uid();
    if (controller) r["controller"] = true;
    if (block) r["blockOwnerDeletion"] = true;
    return r;
  }

  // Creates an object (uid "uid-<name>" unless given) and records its Add event.
  api::Object Create(const Kind& k, std::string ns, std::string name,
                     std::vector<boost::json::object> owner_refs = {},
                     std::vector<std::string> finalizers = {}, std::string uid = {}) {
    std::lock_guard lock(mu_);
    api::Object o;
    o.SetGvk({k.gvr.group, k.gvr.version, k.kind});
    o.set_name(name);
    if (k.namespaced) o.set_namespace(ns);
    o.set_uid(uid.empty() ? "uid-" + name : uid);
    if (!owner_refs.empty()) {
      boost::json::array refs;
      for (auto& r : owner_refs) refs.push_back(std::move(r));
      o.mutable_metadata()["ownerReferences"] = std::move(refs);
    }
    for (const std::string& f : finalizers) o.AddFinalizer(f);
    o.set_resource_version(std::to_string(++rv_));
    objects_[KeyOf(k.gvr, o.key())] = o;
    Record(GraphEventType::kAdd, o, nullptr);
    return o;
  }

  util::StatusOr<api::Object> Get(const api::GroupVersionResource& gvr,
                                  const api::ObjectKey& key) override {
    std::lock_guard lock(mu_);
    ++gets_;
    auto it = objects_.find(KeyOf(gvr, key));
    if (it == objects_.end()) return NotFound(gvr, key);
    return it->second;
  }

  util::StatusOr<api::Object> MergePatch(const api::GroupVersionResource& gvr,
                                         const api::ObjectKey& key,
                                         std::string_view patch) override {
    std::lock_guard lock(mu_);
    auto it = objects_.find(KeyOf(gvr, key));
    if (it == objects_.end()) return NotFound(gvr, key);
    auto p = boost::json::parse(patch);
    std::string_view pinned = api::FindString(p.as_object(), {"metadata", "resourceVersion"});
    if (!pinned.empty() && pinned != it->second.resource_version()) return Conflict(key);
    auto merged = api::ApplyMergePatch(boost::json::value(it->second.doc()), p);
    if (!merged.ok()) return merged.status();
    api::Object old = it->second;
    api::Object next(merged->as_object());
    next.set_resource_version(std::to_string(++rv_));
    ++patches_;
    if (next.being_deleted() && next.finalizers() == nullptr) {
      objects_.erase(it);
      Record(GraphEventType::kDelete, next, nullptr);
      return next;
    }
    it->second = next;
    Record(GraphEventType::kUpdate, next, &old);
    return next;
  }

  util::Status Delete(const api::GroupVersionResource& gvr, const api::ObjectKey& key,
                      const client::DeleteOptions& options) override {
    std::lock_guard lock(mu_);
    auto it = objects_.find(KeyOf(gvr, key));
    if (it == objects_.end()) return NotFound(gvr, key);
    api::Object& obj = it->second;
    if (!options.precondition_uid.empty() && options.precondition_uid != obj.uid()) {
      return Conflict(key);
    }
    if (!options.precondition_resource_version.empty() &&
        options.precondition_resource_version != obj.resource_version()) {
      return Conflict(key);
    }
    ++deletes_;
    deleted_with_.emplace_back(std::string(obj.name()), options.propagation_policy);
    api::Object old = obj;
    const std::string& policy = options.propagation_policy;
    if (!obj.being_deleted() || !policy.empty()) {
      if (policy == "Orphan") {
        obj.RemoveFinalizer(kForegroundFinalizer);
        obj.AddFinalizer(kOrphanFinalizer);
      } else if (policy == "Foreground") {
        obj.RemoveFinalizer(kOrphanFinalizer);
        obj.AddFinalizer(kForegroundFinalizer);
      } else if (policy == "Background") {
        obj.RemoveFinalizer(kOrphanFinalizer);
        obj.RemoveFinalizer(kForegroundFinalizer);
      }
    }
    if (obj.finalizers() != nullptr && !obj.finalizers()->empty()) {
      if (!obj.being_deleted())
        obj.mutable_metadata()["deletionTimestamp"] = "2024-01-01T00:00:00Z";
      obj.set_resource_version(std::to_string(++rv_));
      Record(GraphEventType::kUpdate, obj, &old);
      return util::Status();
    }
    api::Object gone = obj;
    objects_.erase(it);
    Record(GraphEventType::kDelete, gone, nullptr);
    return util::Status();
  }

  // The events recorded since the last call, oldest first.
  std::vector<GraphEvent> TakeEvents() {
    std::lock_guard lock(mu_);
    std::vector<GraphEvent> out;
    out.swap(events_);
    return out;
  }

  // An Add event per stored object: what a fresh informer's initial list delivers.
  std::vector<GraphEvent> SnapshotEvents() {
    std::lock_guard lock(mu_);
    std::vector<GraphEvent> out;
    for (const auto& [key, obj] : objects_) {
      GraphEvent e;
      e.type = GraphEventType::kAdd;
      e.object = std::make_shared<const api::Object>(obj);
      out.push_back(std::move(e));
    }
    return out;
  }

  bool Has(const Kind& k, const api::ObjectKey& key) {
    std::lock_guard lock(mu_);
    return objects_.count(KeyOf(k.gvr, key)) > 0;
  }
  std::optional<api::Object> Read(const Kind& k, const api::ObjectKey& key) {
    std::lock_guard lock(mu_);
    auto it = objects_.find(KeyOf(k.gvr, key));
    if (it == objects_.end()) return std::nullopt;
    return it->second;
  }
  size_t Count() {
    std::lock_guard lock(mu_);
    return objects_.size();
  }
  int deletes() {
    std::lock_guard lock(mu_);
    return deletes_;
  }
  // (name, propagationPolicy) of every delete call, in order.
  std::vector<std::pair<std::string, std::string>> deleted_with() {
    std::lock_guard lock(mu_);
    return deleted_with_;
  }

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  static Key KeyOf(const api::GroupVersionResource& gvr, const api::ObjectKey& key) {
    return {gvr.group, gvr.resource, key.ns, key.name};
  }
  static util::Status NotFound(const api::GroupVersionResource& gvr, const api::ObjectKey& key) {
    return util::NotFound(gvr.resource + " \"" + key.name + "\" not found");
  }
  static util::Status Conflict(const api::ObjectKey& key) {
    return util::Aborted("Operation cannot be fulfilled on \"" + key.name + "\"")
        .WithReason("Conflict");
  }
  void Record(GraphEventType type, const api::Object& obj, const api::Object* old) {
    GraphEvent e;
    e.type = type;
    e.object = std::make_shared<const api::Object>(obj);
    if (old != nullptr) e.old_object = std::make_shared<const api::Object>(*old);
    events_.push_back(std::move(e));
  }

  std::mutex mu_;
  std::map<Key, api::Object> objects_;                             // guarded by mu_
  std::vector<GraphEvent> events_;                                 // guarded by mu_
  int64_t rv_ = 0;                                                 // guarded by mu_
  int gets_ = 0;                                                   // guarded by mu_
  int patches_ = 0;                                                // guarded by mu_
  int deletes_ = 0;                                                // guarded by mu_
  std::vector<std::pair<std::string, std::string>> deleted_with_;  // guarded by mu_
};

}  // namespace converge::controllers::garbagecollector
