#include "controllers/common/pod_facts.h"

#include "controllers/common/owner_refs.h"
#include "controllers/common/pod_util.h"

namespace converge::controllers {

namespace {

// Entries tolerated beyond twice the size after the last sweep (small memos never sweep).
constexpr size_t kSweepSlack = 1024;

bool SameObject(const std::weak_ptr<const api::Object>& a, const api::ObjectPtr& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

}  // namespace

PodFacts ComputePodFacts(const api::Object& pod) {
  PodFacts f;
  f.being_deleted = pod.being_deleted();
  f.active = IsPodActive(pod);
  f.ready = IsPodReady(pod);
  f.ready_since = PodReadyTime(pod);
  f.controller_uid = ControllerUidOf(pod);
  f.labels = pod.labels();
  if (f.labels == nullptr) {
    f.label_key = "n";  // no labels at all, apart from empty ones
  } else {
    for (const auto& kv : *f.labels) {
      // Label values are strings; anything else (never valid) is keyed by its JSON text.
      const std::string v = kv.value().is_string() ? "s" + std::string(kv.value().get_string())
                                                   : "j" + boost::json::serialize(kv.value());
      f.label_key += std::to_string(kv.key().size()) + ':';
      f.label_key += kv.key();
      f.label_key += std::to_string(v.size()) + ':';
      f.label_key += v;
    }
  }
  return f;
}

bool IsPodAvailable(const PodFacts& pod, int64_t min_ready_seconds, util::Clock::WallTime now) {
  if (!pod.ready) return false;
  if (min_ready_seconds <= 0) return true;
  return pod.ready_since.has_value() &&
         *pod.ready_since + std::chrono::seconds(min_ready_seconds) < now;
}

const PodFacts& PodFactsCache::Get(const api::ObjectPtr& pod) {
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(pod.get());
    if (it != entries_.end() && SameObject(it->second.object, pod)) return it->second.facts;
  }
  PodFacts facts = ComputePodFacts(*pod);
  std::lock_guard lock(mu_);
  auto it = entries_.find(pod.get());
  if (it != entries_.end() && SameObject(it->second.object, pod)) return it->second.facts;
  // Unordered_map nodes never move: the reference stays valid until this entry is erased, which
  // happens only once `pod` is gone (sweep) or replaced by a later object at the same address.
  it = entries_.insert_or_assign(pod.get(), Entry{pod, std::move(facts)}).first;
  const PodFacts& out = it->second.facts;
  MaybeSweepLocked();
  return out;
}

void PodFactsCache::MaybeSweepLocked() {
  if (entries_.size() <= 2 * size_after_sweep_ + kSweepSlack) return;
  std::erase_if(entries_, [](const auto& e) { return e.second.object.expired(); });
  size_after_sweep_ = entries_.size();
}

size_t PodFactsCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace converge::controllers
