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
  if (!f.labels) {
    f.label_key = "n";  // no labels at all, apart from empty ones
  } else {
    for (const api::Member kv : f.labels) {
      // Label values are strings; anything else (never valid) is keyed by its JSON text.
      const std::optional<std::string_view> s = kv.value().if_string();
      const std::string v = s ? "s" + std::string(*s) : "j" + api::Serialize(kv.value());
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

PodFactsCache::Interned::Handle PodFactsCache::Interned::Acquire(std::string_view s) {
  auto it = slots_.find(s);
  if (it == slots_.end()) {
    uint32_t id = next_id_;
    if (!free_ids_.empty()) {
      id = free_ids_.back();
      free_ids_.pop_back();
    } else {
      ++next_id_;
    }
    it = slots_.emplace(std::string(s), Slot{.id = id, .refs = 0}).first;
  }
  ++it->second.refs;
  return {.id = it->second.id, .text = it->first};
}

void PodFactsCache::Interned::Release(std::string_view s) {
  auto it = slots_.find(s);
  if (it == slots_.end() || --it->second.refs > 0) return;
  free_ids_.push_back(it->second.id);
  slots_.erase(it);
}

PodFactsCache::Entry PodFactsCache::InternLocked(const api::ObjectPtr& object, PodFacts facts) {
  if (facts.controller_uid) facts.controller_uid = controllers_.Acquire(*facts.controller_uid).text;
  Interned::Handle labels = label_sets_.Acquire(facts.label_key);
  facts.label_id = labels.id;
  facts.label_key = std::string();
  return Entry{.object = object, .facts = std::move(facts), .label_key = labels.text};
}

void PodFactsCache::ReleaseLocked(const Entry& entry) {
  if (entry.facts.controller_uid) controllers_.Release(*entry.facts.controller_uid);
  label_sets_.Release(entry.label_key);
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
  Entry entry = InternLocked(pod, std::move(facts));
  if (it != entries_.end()) {
    ReleaseLocked(it->second);  // a dead object's entry at a reused address
    it->second = std::move(entry);
  } else {
    it = entries_.emplace(pod.get(), std::move(entry)).first;
  }
  const PodFacts& out = it->second.facts;
  MaybeSweepLocked();
  return out;
}

void PodFactsCache::MaybeSweepLocked() {
  if (entries_.size() <= 2 * size_after_sweep_ + kSweepSlack) return;
  std::erase_if(entries_, [this](const auto& e) {
    if (!e.second.object.expired()) return false;
    ReleaseLocked(e.second);
    return true;
  });
  size_after_sweep_ = entries_.size();
}

size_t PodFactsCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

size_t PodFactsCache::distinct_controllers() const {
  std::lock_guard lock(mu_);
  return controllers_.size();
}

size_t PodFactsCache::distinct_label_sets() const {
  std::lock_guard lock(mu_);
  return label_sets_.size();
}

bool LabelMemo::Matches(const PodFacts& pod) {
  if (pod.label_id == 0) return selector_.Matches(pod.labels);
  if (pod.label_id >= by_id_.size()) by_id_.resize(pod.label_id + 1, -1);
  int8_t& answer = by_id_[pod.label_id];
  if (answer < 0) answer = selector_.Matches(pod.labels) ? 1 : 0;
  return answer == 1;
}

}  // namespace converge::controllers
