#include "kubelet/pod_source.h"

#include "kubelet/pod_status.h"

namespace converge::kubelet {

PodSource::PodSource(std::function<bool(std::string_view)> owns, PodSink* sink)
    : owns_(std::move(owns)), sink_(sink) {}

void PodSource::Upsert(const api::Object& obj) {
  std::string_view node = api::FindString(obj.view(), {"spec", "nodeName"});
  if (node.empty() || !owns_(node)) return;
  PodSnapshot snap;
  snap.spec = MakePodSpecView(obj);
  const api::ObjectView status = api::FindObject(obj.view(), {"status"});
  snap.status_fingerprint = StatusFingerprint(status);
  snap.pod_scheduled_time = PodScheduledTime(status);
  auto it = known_.find(snap.spec.key);
  if (it == known_.end() || it->second != snap.spec.uid) {
    if (it != known_.end()) sink_->PodDeleted(it->first, it->second);
    known_[snap.spec.key] = snap.spec.uid;
    snap.initial_status = std::make_shared<const boost::json::object>(api::ToJson(status));
  }
  sink_->PodChanged(std::move(snap));
}

void PodSource::Add(api::ObjectPtr obj) {
  Upsert(*obj);
}
void PodSource::Update(api::ObjectPtr obj) {
  Upsert(*obj);
}

void PodSource::Delete(api::ObjectPtr obj) {
  auto it = known_.find(obj->key());
  if (it == known_.end()) return;
  std::string uid = it->second;
  known_.erase(it);
  sink_->PodDeleted(obj->key(), uid);
}

void PodSource::Replace(std::vector<api::ObjectPtr> objects, const std::string&) {
  std::unordered_set<api::ObjectKey> present;
  for (const api::ObjectPtr& o : objects) present.insert(o->key());
  for (auto it = known_.begin(); it != known_.end();) {
    if (!present.count(it->first)) {
      api::ObjectKey key = it->first;
      std::string uid = it->second;
      it = known_.erase(it);
      sink_->PodDeleted(key, uid);
    } else {
      ++it;
    }
  }
  for (const api::ObjectPtr& o : objects) Upsert(*o);
  sink_->PodsListed();
}

}  // namespace converge::kubelet
