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

void KeyIndex::Put(RevisionPair rev) {
  if (generations_.empty()) generations_.emplace_back();
  Generation& g = generations_.back();
  assert(g.revs.empty() || g.revs.back() < rev);
  if (g.revs.empty()) {
    g.created = rev.main;
    g.first_version = 1;
  }
  g.revs.push_back(rev);
}

void KeyIndex::Restore(RevisionPair rev, Revision created, int64_t version) {
  if (generations_.empty()) generations_.emplace_back();
  Generation& g = generations_.back();
  assert(g.revs.empty());
  g.created = created;
  g.first_version = version;
  g.revs.push_back(rev);
}

bool KeyIndex::Tombstone(RevisionPair rev) {
  if (!IsLive()) return false;
  generations_.back().revs.push_back(rev);
  generations_.emplace_back();
  return true;
}

void KeyIndex::RestoreTombstone(RevisionPair rev) {
  assert(!IsLive());
  if (generations_.empty()) generations_.emplace_back();
  generations_.back().revs.push_back(rev);
  generations_.emplace_back();
}

std::optional<KeyState> KeyIndex::Get(Revision at) const {
  const int last = static_cast<int>(generations_.size()) - 1;
  for (int gi = last; gi >= 0; --gi) {
    const Generation& g = generations_[gi];
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
  const Generation& g = generations_.back();
  return KeyState{g.revs.back(), g.created,
                  g.first_version + static_cast<int64_t>(g.revs.size()) - 1};
}

RevisionPair KeyIndex::LastRevision() const {
  for (auto it = generations_.rbegin(); it != generations_.rend(); ++it) {
    if (!it->revs.empty()) return it->revs.back();
  }
  return RevisionPair{};
}

void KeyIndex::Compact(Revision at, std::vector<RevisionPair>* dropped) {
  // Closed generations end in ascending tombstones, so the ones ending below `at` are a prefix.
  size_t dead = 0;
  while (dead + 1 < generations_.size() && generations_[dead].revs.back().main < at) {
    const Generation& g = generations_[dead];
    dropped->insert(dropped->end(), g.revs.begin(), g.revs.end());
    ++dead;
  }
  generations_.erase(generations_.begin(), generations_.begin() + static_cast<ptrdiff_t>(dead));
  if (generations_.empty()) return;
  // Only the first remaining generation can hold revisions <= at: every later one started after
  // its tombstone, which is >= at.
  Generation& g = generations_.front();
  int j = NewestAtOrBefore(g.revs, at);
  if (j > 0 && g.revs[j].main == at) --j;  // keep the prev_kv of the change at `at`
  if (j > 0) {
    dropped->insert(dropped->end(), g.revs.begin(), g.revs.begin() + j);
    g.revs.erase(g.revs.begin(), g.revs.begin() + j);
    g.first_version += j;
  }
}

std::vector<RevisionPair> KeyIndex::AllRevisions() const {
  std::vector<RevisionPair> all;
  for (const Generation& g : generations_) all.insert(all.end(), g.revs.begin(), g.revs.end());
  return all;
}

}  // namespace converge::store
