#include "client/indexer.h"

#include <algorithm>
#include <mutex>

namespace converge::client {

Indexer::Indexer(Indexers indexers) {
  for (auto& [name, fn] : indexers) {
    indices_[name];
    indexers_.emplace(name, std::move(fn));
  }
}

util::Status Indexer::AddIndexers(Indexers indexers) {
  std::unique_lock lock(mu_);
  for (const auto& [name, fn] : indexers) {
    if (indexers_.contains(name)) {
      return util::InvalidArgument("indexer \"" + name + "\" already exists");
    }
  }
  for (auto& [name, fn] : indexers) {
    IndexAllLocked(name, fn);
    indexers_.emplace(name, std::move(fn));
  }
  return util::Status();
}

void Indexer::IndexAllLocked(const std::string& name, const IndexFunc& fn) {
  IndexMap& index = indices_[name];
  for (const Item& item : items_) {
    for (std::string& v : fn(*item.second)) index[std::move(v)].insert(&item);
  }
}

void Indexer::IndexLocked(const Item* item, const api::Object* old_obj,
                          const api::Object* new_obj) {
  for (const auto& [name, fn] : indexers_) {
    std::vector<std::string> old_values = old_obj ? fn(*old_obj) : std::vector<std::string>{};
    std::vector<std::string> new_values = new_obj ? fn(*new_obj) : std::vector<std::string>{};
    // The common case — one unchanged value (namespace, node name) — touches nothing.
    if (old_values.size() == 1 && new_values.size() == 1 && old_values[0] == new_values[0]) {
      continue;
    }
    IndexMap& index = indices_[name];
    for (const std::string& v : old_values) {
      auto it = index.find(v);
      if (it == index.end()) continue;
      it->second.erase(item);
      if (it->second.empty()) index.erase(it);  // keep the index from growing without bound
    }
    for (std::string& v : new_values) index[std::move(v)].insert(item);
  }
}

api::ObjectPtr Indexer::Upsert(api::ObjectPtr obj) {
  api::ObjectKey key = obj->key();
  std::unique_lock lock(mu_);
  Item& item = *items_.try_emplace(std::move(key)).first;
  api::ObjectPtr old = std::move(item.second);
  IndexLocked(&item, old.get(), obj.get());
  item.second = std::move(obj);
  return old;
}

api::ObjectPtr Indexer::Delete(const api::ObjectKey& key) {
  std::unique_lock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  api::ObjectPtr old = std::move(it->second);
  IndexLocked(&*it, old.get(), nullptr);
  items_.erase(it);
  return old;
}

void Indexer::Replace(std::vector<api::ObjectPtr> objects) {
  Items items;
  items.reserve(objects.size());
  for (api::ObjectPtr& o : objects) {
    api::ObjectKey key = o->key();
    items[std::move(key)] = std::move(o);
  }
  std::unique_lock lock(mu_);
  for (auto& [name, index] : indices_) index.clear();
  items_ = std::move(items);
  for (const auto& [name, fn] : indexers_) IndexAllLocked(name, fn);
}

api::ObjectPtr Indexer::Get(const api::ObjectKey& key) const {
  std::shared_lock lock(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

std::vector<api::ObjectPtr> Indexer::List() const {
  std::shared_lock lock(mu_);
  std::vector<api::ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(obj);
  return out;
}

size_t Indexer::size() const {
  std::shared_lock lock(mu_);
  return items_.size();
}

std::vector<api::ObjectKey> Indexer::ListKeys() const {
  std::shared_lock lock(mu_);
  std::vector<api::ObjectKey> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(key);
  return out;
}

const Indexer::IndexMap* Indexer::FindIndexLocked(std::string_view index) const {
  auto it = indices_.find(std::string(index));
  return it == indices_.end() ? nullptr : &it->second;
}

bool Indexer::HasIndex(std::string_view index) const {
  std::shared_lock lock(mu_);
  return FindIndexLocked(index) != nullptr;
}

util::StatusOr<std::vector<api::ObjectPtr>> Indexer::ByIndex(std::string_view index,
                                                             std::string_view value) const {
  std::shared_lock lock(mu_);
  const IndexMap* idx = FindIndexLocked(index);
  if (idx == nullptr) return util::NotFound("index \"" + std::string(index) + "\" does not exist");
  std::vector<api::ObjectPtr> out;
  auto it = idx->find(std::string(value));
  if (it == idx->end()) return out;
  out.reserve(it->second.size());
  for (const Item* item : it->second) out.push_back(item->second);
  return out;
}

util::StatusOr<std::vector<api::ObjectKey>> Indexer::IndexKeys(std::string_view index,
                                                               std::string_view value) const {
  std::shared_lock lock(mu_);
  const IndexMap* idx = FindIndexLocked(index);
  if (idx == nullptr) return util::NotFound("index \"" + std::string(index) + "\" does not exist");
  auto it = idx->find(std::string(value));
  std::vector<api::ObjectKey> out;
  if (it == idx->end()) return out;
  out.reserve(it->second.size());
  for (const Item* item : it->second) out.push_back(item->first);
  return out;
}

util::StatusOr<std::vector<api::ObjectPtr>> Indexer::Index(std::string_view index,
                                                           const api::Object& obj) const {
  std::shared_lock lock(mu_);
  const IndexMap* idx = FindIndexLocked(index);
  if (idx == nullptr) return util::NotFound("index \"" + std::string(index) + "\" does not exist");
  const IndexFunc& fn = indexers_.at(std::string(index));
  ItemSet items;
  for (const std::string& v : fn(obj)) {
    auto it = idx->find(v);
    if (it != idx->end()) items.insert(it->second.begin(), it->second.end());
  }
  std::vector<api::ObjectPtr> out;
  out.reserve(items.size());
  for (const Item* item : items) out.push_back(item->second);
  return out;
}

util::StatusOr<std::vector<std::string>> Indexer::ListIndexFuncValues(
    std::string_view index) const {
  std::shared_lock lock(mu_);
  const IndexMap* idx = FindIndexLocked(index);
  if (idx == nullptr) return util::NotFound("index \"" + std::string(index) + "\" does not exist");
  std::vector<std::string> out;
  out.reserve(idx->size());
  for (const auto& [v, keys] : *idx) out.push_back(v);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace converge::client
