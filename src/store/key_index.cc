#include "store/key_index.h"

#include <algorithm>
#include <cassert>

namespace converge::store {

namespace {

// Index of the newest entry in `revs` whose main revision is <= at; -1 if none.
int NewestAtOrBefore(const std::vector<RevisionPair>& revs, Revision at) {
  auto it = std::upper_bound(revs.begin(), revs.end(), at,
                             [](Revision a, const RevisionPair& r) { return a < r.main; });
  return static_cast<int>(it - revs.begin()) - 1;
}

}  // namespace

std::vector<KeyIndex::Generation>& KeyIndex::Large() {
  if (!large_) {
    large_ = std::make_unique<std::vector<Generation>>();
    if (!rev_.IsZero()) {
      // A key rewritten once is usually rewritten again before compaction (a pod's binding and
      // status writes): room for a few revisions at once.
      Generation g{created_, first_version_, {}};
      g.revs.reserve(4);
      g.revs.push_back(rev_);
      large_->push_back(std::move(g));
    }
    created_ = 0;
    first_version_ = 0;
    rev_ = RevisionPair{};
  }
  return *large_;
}

void KeyIndex::Normalize() {
  if (!large_ || large_->size() > 1) return;
  if (!large_->empty()) {
    const Generation& g = large_->front();  // the only one, so open
    if (g.revs.size() > 1) return;
    if (!g.revs.empty()) {
      created_ = g.created;
      first_version_ = g.first_version;
      rev_ = g.revs.front();
    }
  }
  large_.reset();
}

void KeyIndex::Put(RevisionPair rev) {
  if (!large_ && rev_.IsZero()) {  // a new generation, in the small form
    created_ = rev.main;
    first_version_ = 1;
    rev_ = rev;
    return;
  }
  std::vector<Generation>& generations = Large();
  if (generations.empty()) generations.emplace_back();
  Generation& g = generations.back();
  assert(g.revs.empty() || g.revs.back() < rev);
  if (g.revs.empty()) {
    g.created = rev.main;
    g.first_version = 1;
  }
  g.revs.push_back(rev);
}

void KeyIndex::Restore(RevisionPair rev, Revision created, int64_t version) {
  if (!large_) {
    assert(rev_.IsZero());
    created_ = created;
    first_version_ = version;
    rev_ = rev;
    return;
  }
  std::vector<Generation>& generations = *large_;
  if (generations.empty()) generations.emplace_back();
  Generation& g = generations.back();
  assert(g.revs.empty());
  g.created = created;
  g.first_version = version;
  g.revs.push_back(rev);
  Normalize();
}

bool KeyIndex::Tombstone(RevisionPair rev) {
  if (!IsLive()) return false;
  std::vector<Generation>& generations = Large();
  generations.back().revs.push_back(rev);
  generations.emplace_back();
  return true;
}

void KeyIndex::RestoreTombstone(RevisionPair rev) {
  assert(!IsLive());
  std::vector<Generation>& generations = Large();
  if (generations.empty()) generations.emplace_back();
  generations.back().revs.push_back(rev);
  generations.emplace_back();
}

std::optional<KeyState> KeyIndex::Get(Revision at) const {
  if (!large_) {
    if (rev_.IsZero() || rev_.main > at) return std::nullopt;
    return KeyState{rev_, created_, first_version_};
  }
  const std::vector<Generation>& generations = *large_;
  const int last = static_cast<int>(generations.size()) - 1;
  for (int gi = last; gi >= 0; --gi) {
    const Generation& g = generations[gi];
    if (g.revs.empty()) continue;
    if (gi != last && g.revs.back().main <= at) return std::nullopt;  // deleted by then
    if (g.revs.front().main <= at) {
      const int j = NewestAtOrBefore(g.revs, at);
      return KeyState{g.revs[j], g.created, g.first_version + j};
    }
  }
  return std::nullopt;
}

std::optional<KeyState> KeyIndex::Latest() const {
  if (!IsLive()) return std::nullopt;
  if (!large_) return KeyState{rev_, created_, first_version_};
  const Generation& g = large_->back();
  return KeyState{g.revs.back(), g.created,
                  g.first_version + static_cast<int64_t>(g.revs.size()) - 1};
}

RevisionPair KeyIndex::LastRevision() const {
  if (!large_) return rev_;
  for (auto it = large_->rbegin(); it != large_->rend(); ++it) {
    if (!it->revs.empty()) return it->revs.back();
  }
  return RevisionPair{};
}

void KeyIndex::Compact(Revision at, std::vector<RevisionPair>* dropped) {
  // The small form's one revision is the newest of an open generation: always kept.
  if (!large_) return;
  std::vector<Generation>& generations = *large_;
  // Closed generations end in ascending tombstones, so the ones ending below `at` are a prefix.
  size_t dead = 0;
  while (dead + 1 < generations.size() && generations[dead].revs.back().main < at) {
    const Generation& g = generations[dead];
    dropped->insert(dropped->end(), g.revs.begin(), g.revs.end());
    ++dead;
  }
  generations.erase(generations.begin(), generations.begin() + static_cast<ptrdiff_t>(dead));
  if (!generations.empty()) {
    // Only the first remaining generation can hold revisions <= at: every later one started
    // after its tombstone, which is >= at.
    Generation& g = generations.front();
    int j = NewestAtOrBefore(g.revs, at);
    if (j > 0 && g.revs[j].main == at) --j;  // keep the prev_kv of the change at `at`
    if (j > 0) {
      dropped->insert(dropped->end(), g.revs.begin(), g.revs.begin() + j);
      g.revs.erase(g.revs.begin(), g.revs.begin() + j);
      g.first_version += j;
    }
  }
  Normalize();
}

std::vector<RevisionPair> KeyIndex::AllRevisions() const {
  if (!large_) return rev_.IsZero() ? std::vector<RevisionPair>{} : std::vector<RevisionPair>{rev_};
  std::vector<RevisionPair> all;
  for (const Generation& g : *large_) all.insert(all.end(), g.revs.begin(), g.revs.end());
  return all;
}

}  // namespace converge::store
