// PodSource: the kubelet's informer for its pods. A Reflector (list + watch of the pods bound to
// this kubelet's nodes) feeds it; it keeps nothing of the API objects but what the sync loop
// needs — a PodSpecView and a fingerprint of the reported status — and hands changes on as they
// come. Parsed Pods are dropped at once: one process carries 100k pods.
//
// Selection: with one node, the watch itself filters (fieldSelector spec.nodeName=<node>); with
// many, it watches every scheduled pod (spec.nodeName!=) and drops those of other nodes.
//
// Thread-safety: the ReflectorStore methods are called by the reflector's thread; the sink is
// called from there.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "client/store.h"
#include "kubelet/pod_spec.h"

namespace converge::kubelet {

struct PodSnapshot {
  PodSpecView spec;
  uint64_t status_fingerprint = 0;
  std::string pod_scheduled_time;
  // The reported status, only when the pod is new to the kubelet (to adopt what a previous
  // kubelet left running).
  std::shared_ptr<const boost::json::object> initial_status;
};

class PodSink {
 public:
  virtual ~PodSink() = default;
  virtual void PodChanged(PodSnapshot snapshot) = 0;
  virtual void PodDeleted(const api::ObjectKey& key, const std::string& uid) = 0;
  // A (re)list has been delivered in full.
  virtual void PodsListed() {}
};

class PodSource final : public client::ReflectorStore {
 public:
  // `owns(node)` says whether a node is this kubelet's.
  PodSource(std::function<bool(std::string_view node)> owns, PodSink* sink);

  void Add(api::ObjectPtr obj) override;
  void Update(api::ObjectPtr obj) override;
  void Delete(api::ObjectPtr obj) override;
  void Replace(std::vector<api::ObjectPtr> objects, const std::string& resource_version) override;
  void Resync() override {}

 private:
  void Upsert(const api::Object& obj);

  const std::function<bool(std::string_view)> owns_;
  PodSink* const sink_;
  std::unordered_map<api::ObjectKey, std::string> known_;  // key → uid; reflector thread only
};

}  // namespace converge::kubelet
