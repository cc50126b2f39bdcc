#include "controllers/garbagecollector/absent_owner_cache.h"

namespace converge::controllers::garbagecollector {

void AbsentOwnerCache::Add(const ObjectIdentity& id) {
  Key k = KeyOf(id);
  std::lock_guard lock(mu_);
  auto it = entries_.find(k);
  if (it != entries_.end()) {
    order_.splice(order_.begin(), order_, it->second);
    return;
  }
  order_.push_front(k);
  entries_.emplace(std::move(k), order_.begin());
  while (entries_.size() > capacity_) {
    entries_.erase(order_.back());
    order_.pop_back();
  }
}

bool AbsentOwnerCache::Has(const ObjectIdentity& id) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(KeyOf(id));
  if (it == entries_.end()) return false;
  order_.splice(order_.begin(), order_, it->second);
  return true;
}

}  // namespace converge::controllers::garbagecollector
