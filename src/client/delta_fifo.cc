#include "client/delta_fifo.h"

#include <unordered_set>

namespace converge::client {

std::string_view DeltaTypeName(DeltaType t) {
  switch (t) {
    case DeltaType::kAdded: return "Added";
    case DeltaType::kUpdated: return "Updated";
    case DeltaType::kDeleted: return "Deleted";
    case DeltaType::kReplaced: return "Replaced";
    case DeltaType::kSync: return "Sync";
  }
  return "Unknown";
}

DeltaFIFO::DeltaFIFO(DeltaFifoOptions options) : options_(options) {}

void DeltaFIFO::QueueActionLocked(DeltaType type, api::ObjectPtr obj, const api::ObjectKey& key,
                                  bool final_state_unknown) {
  std::vector<Delta>& deltas = items_[key];
  // A Sync for an object about to be deleted would resurrect it in the consumer's cache.
  if (type == DeltaType::kSync && !deltas.empty() && deltas.back().type == DeltaType::kDeleted) {
    return;
  }
  const bool was_queued = !deltas.empty();
  deltas.push_back(Delta{type, std::move(obj), final_state_unknown});
  // Two deletions in a row are one: keep the older, unless it is only a tombstone (an observed
  // deletion carries the object's real final state).
  if (size_t n = deltas.size(); n >= 2 && deltas[n - 1].type == DeltaType::kDeleted &&
                                deltas[n - 2].type == DeltaType::kDeleted) {
    if (deltas[n - 2].final_state_unknown) deltas[n - 2] = std::move(deltas[n - 1]);
    deltas.pop_back();
  }
  if (!was_queued) queue_.push_back(key);
  cv_.notify_one();
}

void DeltaFIFO::Add(api::ObjectPtr obj) {
  api::ObjectKey key = obj->key();
  std::lock_guard lock(mu_);
  populated_ = true;
  QueueActionLocked(DeltaType::kAdded, std::move(obj), key);
}

void DeltaFIFO::Update(api::ObjectPtr obj) {
  api::ObjectKey key = obj->key();
  std::lock_guard lock(mu_);
  populated_ = true;
  QueueActionLocked(DeltaType::kUpdated, std::move(obj), key);
}

void DeltaFIFO::Delete(api::ObjectPtr obj) {
  api::ObjectKey key = obj->key();
  std::lock_guard lock(mu_);
  populated_ = true;
  const bool queued = items_.contains(key);
  const bool known =
      options_.known_objects != nullptr && options_.known_objects->GetByKey(key) != nullptr;
  // Neither queued nor known: a relist already reported this deletion with a tombstone.
  if (!queued && !known) return;
  QueueActionLocked(DeltaType::kDeleted, std::move(obj), key);
}

void DeltaFIFO::Replace(std::vector<api::ObjectPtr> objects, const std::string&) {
  std::lock_guard lock(mu_);
  std::unordered_set<api::ObjectKey> listed;
  listed.reserve(objects.size());
  for (api::ObjectPtr& obj : objects) {
    api::ObjectKey key = obj->key();
    listed.insert(key);
    QueueActionLocked(DeltaType::kReplaced, std::move(obj), key);
  }

  // Tombstones for queued keys missing from the list. Their last known state is the newest
  // queued object (unwrapping an earlier tombstone).
  int64_t queued_deletions = 0;
  std::vector<std::pair<api::ObjectKey, api::ObjectPtr>> missing;
  for (const auto& [key, deltas] : items_) {
    if (listed.contains(key) || deltas.empty()) continue;
    missing.emplace_back(key, deltas.back().object);
  }
  for (auto& [key, last] : missing) {
    ++queued_deletions;
    QueueActionLocked(DeltaType::kDeleted, std::move(last), key, /*final_state_unknown=*/true);
  }

  // Tombstones for keys the consumer knows, with nothing queued, missing from the list.
  if (options_.known_objects != nullptr) {
    for (const api::ObjectKey& key : options_.known_objects->ListKeys()) {
      if (listed.contains(key)) continue;
      if (auto it = items_.find(key); it != items_.end() && !it->second.empty()) continue;
      ++queued_deletions;
      QueueActionLocked(DeltaType::kDeleted, options_.known_objects->GetByKey(key), key,
                        /*final_state_unknown=*/true);
    }
  }

  if (!populated_) {
    populated_ = true;
    initial_population_count_ = static_cast<int64_t>(listed.size()) + queued_deletions;
  }
}

void DeltaFIFO::Resync() {
  std::lock_guard lock(mu_);
  if (options_.known_objects == nullptr) return;
  for (const api::ObjectKey& key : options_.known_objects->ListKeys()) {
    api::ObjectPtr obj = options_.known_objects->GetByKey(key);
    if (obj == nullptr) continue;
    // Something queued for the key already carries a newer state than the cache; a Sync with
    // the cached (older) object would move the consumer backwards.
    if (auto it = items_.find(key); it != items_.end() && !it->second.empty()) continue;
    QueueActionLocked(DeltaType::kSync, std::move(obj), key);
  }
}

util::Status DeltaFIFO::Pop(const std::function<void(Deltas&, bool)>& process, bool* synced_after) {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return !queue_.empty() || closed_; });
    if (queue_.empty()) return util::Cancelled("DeltaFIFO closed");
    if (PopLocked(process, synced_after)) return util::Status();
  }
}

bool DeltaFIFO::TryPop(const std::function<void(Deltas&, bool)>& process, bool* synced_after) {
  std::lock_guard lock(mu_);
  while (!queue_.empty()) {
    if (PopLocked(process, synced_after)) return true;
  }
  return false;
}

bool DeltaFIFO::PopLocked(const std::function<void(Deltas&, bool)>& process, bool* synced_after) {
  const bool is_in_initial_list = !HasSyncedLocked();
  api::ObjectKey key = std::move(queue_.front());
  queue_.pop_front();
  if (initial_population_count_ > 0) --initial_population_count_;
  auto it = items_.find(key);
  if (it == items_.end()) return false;  // cannot happen (see the invariant); skip defensively
  Deltas deltas{std::move(key), std::move(it->second)};
  items_.erase(it);
  process(deltas, is_in_initial_list);
  if (synced_after != nullptr) *synced_after = HasSyncedLocked();
  return true;
}

void DeltaFIFO::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

bool DeltaFIFO::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

bool DeltaFIFO::HasSynced() const {
  std::lock_guard lock(mu_);
  return HasSyncedLocked();
}

std::vector<api::ObjectKey> DeltaFIFO::QueuedKeys() const {
  std::lock_guard lock(mu_);
  return {queue_.begin(), queue_.end()};
}

std::vector<Delta> DeltaFIFO::Pending(const api::ObjectKey& key) const {
  std::lock_guard lock(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? std::vector<Delta>{} : it->second;
}

size_t DeltaFIFO::size() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

}  // namespace converge::client
