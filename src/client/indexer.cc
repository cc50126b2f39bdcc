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
    for (std::string& v : fn(*item.obj)) index[std::move(v)].insert(&item);
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

size_t Indexer::ItemHash::operator()(KeyView k) const {
  return api::HashObjectKey(k.ns, k.name);
}

api::ObjectPtr Indexer::Upsert(api::ObjectPtr obj) {
  std::unique_lock lock(mu_);
  auto it = items_.find(KeyView{obj->namespace_(), obj->name()});
  if (it == items_.end()) {
    const Item& item = *items_.insert(Item{obj}).first;
    IndexLocked(&item, nullptr, obj.get());
    return nullptr;
  }
  api::ObjectPtr old = std::move(it->obj);
  IndexLocked(&*it, old.get(), obj.get());
  it->obj = std::move(obj);  // the same key: the entry stays where it is
  return old;
}

api::ObjectPtr Indexer::Delete(const api::ObjectKey& key) {
  std::unique_lock lock(mu_);
  auto it = items_.find(KeyView{key.ns, key.name});
  if (it == items_.end()) return nullptr;
  api::ObjectPtr old = it->obj;
  IndexLocked(&*it, old.get(), nullptr);
  items_.erase(it);
  return old;
}

void Indexer::Replace(std::vector<api::ObjectPtr> objects) {
  Items items;
  items.reserve(objects.size());
  for (api::ObjectPtr& o : objects) {
    auto [it, inserted] = items.insert(Item{o});
    if (!inserted) it->obj = std::move(o);  // a repeated key: the last one wins
  }
  std::unique_lock lock(mu_);
  for (auto& [name, index] : indices_) index.clear();
  items_ = std::move(items);
  for (const auto& [name, fn] : indexers_) IndexAllLocked(name, fn);
}

api::ObjectPtr Indexer::Get(const api::ObjectKey& key) const {
  std::shared_lock lock(mu_);
  auto it = items_.find(KeyView{key.ns, key.name});
  return it == items_.end() ? nullptr : it->obj;
}

std::vector<api::ObjectPtr> Indexer::List() const {
  std::shared_lock lock(mu_);
  std::vector<api::ObjectPtr> out;
  out.reserve(items_.size());
  for (const Item& item : items_) out.push_back(item.obj);
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
  for (const Item& item : items_) out.push_back(item.obj->key());
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
  for (const Item* item : it->second) out.push_back(item->obj);
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
  for (const Item* item : it->second) out.push_back(item->obj->key());
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
  for (const Item* item : items) out.push_back(item->obj);
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
