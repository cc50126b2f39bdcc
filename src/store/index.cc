#include "store/index.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <new>

namespace converge::store {

namespace {

std::string Describe(RevisionPair rev, std::string_view key) {
  return "revision " + std::to_string(rev.main) + "." + std::to_string(rev.sub) + " (key \"" +
         std::string(key) + "\")";
}

util::Status Inconsistent(RevisionPair rev, std::string_view key, std::string_view what) {
  return util::DataLoss("store: history is inconsistent at " + Describe(rev, key) + ": " +
                        std::string(what));
}

}  // namespace

Index::Entry* Index::NewEntry(std::string_view key) {
  void* block = ::operator new(sizeof(Entry) + key.size());
  Entry* e = new (block) Entry;
  e->key_size = static_cast<uint32_t>(key.size());
  if (!key.empty()) std::memcpy(static_cast<char*>(block) + sizeof(Entry), key.data(), key.size());
  return e;
}

void Index::FreeEntry(Entry* e) {
  e->~Entry();
  ::operator delete(static_cast<void*>(e));
}

Index::~Index() {
  for (Entry* e : keys_) FreeEntry(e);
}

Index::Entry* Index::FindLocked(std::string_view key) const {
  auto h = by_key_.find(key);
  return h == by_key_.end() ? nullptr : *h;
}

Index::Entry* Index::FindOrAddLocked(std::string_view key) {
  if (auto h = by_key_.find(key); h != by_key_.end()) return *h;
  // The set and the hash hold the same entries: if an insert throws (out of memory), what the
  // other took is undone and the entry freed.
  std::unique_ptr<Entry, decltype(&FreeEntry)> e(NewEntry(key), &FreeEntry);
  const auto at = keys_.insert(e.get()).first;
  try {
    by_key_.insert(e.get());
  } catch (...) {
    keys_.erase(at);
    throw;
  }
  return e.release();
}

std::optional<KeyState> Index::Get(std::string_view key, Revision at) const {
  std::shared_lock lock(mu_);
  const Entry* e = FindLocked(key);
  if (e == nullptr) return std::nullopt;
  return at == kLatest ? e->index.Latest() : e->index.Get(at);
}

void Index::Visit(std::string_view start, std::string_view end, Revision at,
                  const VisitFn& fn) const {
  std::shared_lock lock(mu_);
  if (end.empty()) {
    const Entry* e = FindLocked(start);
    if (e == nullptr) return;
    auto state = at == kLatest ? e->index.Latest() : e->index.Get(at);
    if (state) fn(e->key(), *state);
    return;
  }
  if (RangeIsEmpty(start, end)) return;
  const bool to_end = end.size() == 1 && end[0] == '\0';
  for (auto it = keys_.lower_bound(start); it != keys_.end(); ++it) {
    const Entry* e = *it;
    if (!to_end && e->key() >= end) break;
    auto state = at == kLatest ? e->index.Latest() : e->index.Get(at);
    if (state && !fn(e->key(), *state)) return;
  }
}

void Index::Apply(const std::vector<Change>& changes) {
  std::unique_lock lock(mu_);
  for (const Change& c : changes) {
    KeyIndex& ki = FindOrAddLocked(c.key)->index;
    if (c.tombstone) {
      ki.Tombstone(c.rev);
    } else {
      ki.Put(c.rev);
    }
  }
}

util::Status Index::Restore(RevisionPair rev, const RecordView& r, Revision lenient_upto) {
  std::unique_lock lock(mu_);
  KeyIndex& ki = FindOrAddLocked(r.key)->index;
  const bool lenient = rev.main <= lenient_upto;
  if (rev <= ki.LastRevision()) return Inconsistent(rev, r.key, "revisions out of order");
  const std::optional<KeyState> latest = ki.Latest();
  if (latest) {
    // Continues the live generation: a put is the next version, a tombstone ends the current
    // one; both point back at the previous change.
    const int64_t want_version = r.tombstone ? latest->version : latest->version + 1;
    if (r.create_revision != latest->create_revision || r.version != want_version ||
        r.prev != latest->mod) {
      return Inconsistent(rev, r.key, "does not continue the key's generation");
    }
    if (r.tombstone) {
      ki.Tombstone(rev);
    } else {
      ki.Put(rev);
    }
    return util::Status::Ok();
  }
  if (r.tombstone) {
    if (!lenient) return Inconsistent(rev, r.key, "deletes a key that does not exist");
    ki.RestoreTombstone(rev);
    return util::Status::Ok();
  }
  // First record of a generation: a creation unless older records were compacted away.
  const bool creation = r.version == 1 && r.create_revision == rev.main && r.prev.IsZero();
  if (!creation && !lenient) return Inconsistent(rev, r.key, "generation starts mid-way");
  if (r.version < 1 || r.create_revision < 1 || r.create_revision > rev.main) {
    return Inconsistent(rev, r.key, "bad version or create_revision");
  }
  ki.Restore(rev, r.create_revision, r.version);
  return util::Status::Ok();
}

std::optional<std::string> Index::CompactChunk(Revision at, const std::string& from,
                                               size_t max_keys,
                                               std::vector<RevisionPair>* dropped) {
  std::unique_lock lock(mu_);
  auto it = keys_.lower_bound(from);
  for (size_t n = 0; it != keys_.end() && n < max_keys; ++n) {
    Entry* e = *it;
    e->index.Compact(at, dropped);
    if (e->index.IsEmpty()) {
      by_key_.erase(e);
      it = keys_.erase(it);
      FreeEntry(e);
    } else {
      ++it;
    }
  }
  if (it == keys_.end()) return std::nullopt;
  return std::string((*it)->key());
}

size_t Index::KeyCount() const {
  std::shared_lock lock(mu_);
  return keys_.size();
}

std::vector<RevisionPair> Index::RevisionsForTest(std::string_view key) const {
  std::shared_lock lock(mu_);
  const Entry* e = FindLocked(key);
  return e == nullptr ? std::vector<RevisionPair>{} : e->index.AllRevisions();
}

}  // namespace converge::store
