#include "store/key_index.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace converge::store {
namespace {

RevisionPair R(Revision main) {
  return RevisionPair{main, 0};
}

std::vector<Revision> MainRevisions(const std::vector<RevisionPair>& revs) {
  std::vector<Revision> out;
  for (const auto& r : revs) out.push_back(r.main);
  return out;
}

// put@1, put@2, delete@3, put@4: the worked example in key_index.h.
KeyIndex Example() {
  KeyIndex ki;
  ki.Put(R(1));
  ki.Put(R(2));
  EXPECT_TRUE(ki.Tombstone(R(3)));
  ki.Put(R(4));
  return ki;
}

TEST(KeyIndexTest, GetFollowsGenerations) {
  KeyIndex ki = Example();
  struct Case {
    Revision at;
    bool found;
    Revision mod, created;
    int64_t version;
  };
  for (const Case& c : {Case{0, false, 0, 0, 0}, Case{1, true, 1, 1, 1}, Case{2, true, 2, 1, 2},
                        Case{3, false, 0, 0, 0}, Case{4, true, 4, 4, 1}, Case{9, true, 4, 4, 1}}) {
    SCOPED_TRACE(c.at);
    auto s = ki.Get(c.at);
    ASSERT_EQ(s.has_value(), c.found);
    if (!s) continue;
    EXPECT_EQ(s->mod.main, c.mod);
    EXPECT_EQ(s->create_revision, c.created);
    EXPECT_EQ(s->version, c.version);
  }
  KeyIndex never_put;
  EXPECT_FALSE(never_put.Tombstone(R(1))) << "only a live key can be deleted";
}

TEST(KeyIndexTest, CompactionAtEachRevisionOfTheWorkedExample) {
  struct Case {
    Revision at;
    std::vector<Revision> left;
    std::vector<Revision> dropped;
  };
  const Case cases[] = {
      {1, {1, 2, 3, 4}, {}},
      {2, {1, 2, 3, 4}, {}},
      {3, {2, 3, 4}, {1}},
      {4, {4}, {1, 2, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("compact at " + std::to_string(c.at));
    KeyIndex ki = Example();
    std::vector<RevisionPair> dropped;
    ki.Compact(c.at, &dropped);
    EXPECT_EQ(MainRevisions(ki.AllRevisions()), c.left);
    EXPECT_EQ(MainRevisions(dropped), c.dropped);
    // Every read at or after the compact revision is unchanged.
    KeyIndex full = Example();
    for (Revision r = c.at; r <= 5; ++r) {
      auto a = ki.Get(r), b = full.Get(r);
      ASSERT_EQ(a.has_value(), b.has_value()) << r;
      if (a) {
        EXPECT_EQ(a->mod, b->mod);
        EXPECT_EQ(a->version, b->version);
        EXPECT_EQ(a->create_revision, b->create_revision);
      }
    }
    EXPECT_FALSE(ki.IsEmpty());
  }
}

TEST(KeyIndexTest, VersionsSurviveTrimming) {
  KeyIndex ki;
  ki.Put(R(4));
  ki.Put(R(5));
  ki.Put(R(6));
  std::vector<RevisionPair> dropped;
  ki.Compact(6, &dropped);  // keeps 5 (prev of the change at 6) and 6
  EXPECT_EQ(MainRevisions(ki.AllRevisions()), (std::vector<Revision>{5, 6}));
  EXPECT_EQ(ki.Get(6)->version, 3);
  EXPECT_EQ(ki.Latest()->version, 3);
  ki.Compact(7, &dropped);
  EXPECT_EQ(MainRevisions(ki.AllRevisions()), (std::vector<Revision>{6}));
  ki.Put(R(8));
  EXPECT_EQ(ki.Latest()->version, 4);
  EXPECT_EQ(ki.Latest()->create_revision, 4);
}

TEST(KeyIndexTest, DeadKeyIsForgottenAfterItsTombstoneIsCompacted) {
  KeyIndex ki;
  ki.Put(R(1));
  ASSERT_TRUE(ki.Tombstone(R(2)));
  std::vector<RevisionPair> dropped;
  ki.Compact(2, &dropped);
  EXPECT_FALSE(ki.IsEmpty()) << "the tombstone at the compact revision stays for watches";
  ki.Compact(3, &dropped);
  EXPECT_TRUE(ki.IsEmpty());
  EXPECT_EQ(MainRevisions(dropped), (std::vector<Revision>{1, 2}));
}

TEST(KeyIndexTest, RestoreStartsAGenerationMidWay) {
  KeyIndex ki;
  ki.Restore(R(7), /*created=*/3, /*version=*/4);
  ki.Put(R(9));
  auto s = ki.Latest();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->create_revision, 3);
  EXPECT_EQ(s->version, 5);
  EXPECT_FALSE(ki.Get(6).has_value());
  KeyIndex orphan;
  orphan.RestoreTombstone(R(5));
  EXPECT_FALSE(orphan.IsLive());
  EXPECT_FALSE(orphan.Get(5).has_value());
  std::vector<RevisionPair> dropped;
  orphan.Compact(6, &dropped);
  EXPECT_TRUE(orphan.IsEmpty());
}

// A key written once is held without an allocation (the small form) until it is written again
// or deleted; compacting it back to one revision returns it there. The answers must not depend
// on the form: every sequence below is checked against a plain model of the documented rules.
class ModelKey {
 public:
  void Put(RevisionPair r) {
    if (gens_.empty() || !gens_.back().open) gens_.push_back({r.main, 1, {}, true});
    if (gens_.back().revs.empty()) {
      gens_.back().created = r.main;
      gens_.back().first_version = 1;
    }
    gens_.back().revs.push_back(r);
  }
  bool Tombstone(RevisionPair r) {
    if (!IsLive()) return false;
    gens_.back().revs.push_back(r);
    gens_.back().open = false;
    return true;
  }
  bool IsLive() const { return !gens_.empty() && gens_.back().open && !gens_.back().revs.empty(); }
  std::optional<KeyState> Get(Revision at) const {
    for (auto g = gens_.rbegin(); g != gens_.rend(); ++g) {
      if (g->revs.empty() || g->revs.front().main > at) continue;
      if (!g->open && g->revs.back().main <= at) return std::nullopt;
      int64_t j = 0;
      while (j + 1 < static_cast<int64_t>(g->revs.size()) && g->revs[j + 1].main <= at) ++j;
      return KeyState{g->revs[j], g->created, g->first_version + j};
    }
    return std::nullopt;
  }
  void Compact(Revision at, std::vector<RevisionPair>* dropped) {
    while (!gens_.empty() && !gens_.front().open && gens_.front().revs.back().main < at) {
      dropped->insert(dropped->end(), gens_.front().revs.begin(), gens_.front().revs.end());
      gens_.erase(gens_.begin());
    }
    if (gens_.empty()) return;
    Gen& g = gens_.front();
    int64_t j = -1;
    while (j + 1 < static_cast<int64_t>(g.revs.size()) && g.revs[j + 1].main <= at) ++j;
    if (j > 0 && g.revs[j].main == at) --j;
    if (j > 0) {
      dropped->insert(dropped->end(), g.revs.begin(), g.revs.begin() + j);
      g.revs.erase(g.revs.begin(), g.revs.begin() + j);
      g.first_version += j;
    }
  }
  std::vector<RevisionPair> All() const {
    std::vector<RevisionPair> all;
    for (const Gen& g : gens_) all.insert(all.end(), g.revs.begin(), g.revs.end());
    return all;
  }

 private:
  struct Gen {
    Revision created;
    int64_t first_version;
    std::vector<RevisionPair> revs;
    bool open;
  };
  std::vector<Gen> gens_;
};

TEST(KeyIndexTest, AnswersDoNotDependOnHowTheKeyIsHeld) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(round);
    KeyIndex ki;
    ModelKey model;
    Revision next = 1, compacted = 0;
    for (int step = 0; step < 12; ++step) {
      switch (rng() % 4) {
        case 0:
        case 1:
          ki.Put(R(next));
          model.Put(R(next));
          ++next;
          break;
        case 2: {
          const bool live = model.IsLive();
          EXPECT_EQ(ki.Tombstone(R(next)), live);
          model.Tombstone(R(next));
          if (live) ++next;
          break;
        }
        case 3: {
          compacted = std::min<Revision>(next - 1, compacted + static_cast<Revision>(rng() % 4));
          std::vector<RevisionPair> got, want;
          ki.Compact(compacted, &got);
          model.Compact(compacted, &want);
          EXPECT_EQ(got, want);
          break;
        }
      }
      EXPECT_EQ(ki.IsLive(), model.IsLive());
      EXPECT_EQ(ki.AllRevisions(), model.All());
      EXPECT_EQ(ki.IsEmpty(), model.All().empty());
      EXPECT_EQ(ki.LastRevision(), model.All().empty() ? RevisionPair{} : model.All().back());
      for (Revision at = compacted; at <= next; ++at) {
        std::optional<KeyState> a = ki.Get(at), b = model.Get(at);
        ASSERT_EQ(a.has_value(), b.has_value()) << "at " << at;
        if (a) {
          EXPECT_EQ(a->mod, b->mod);
          EXPECT_EQ(a->create_revision, b->create_revision);
          EXPECT_EQ(a->version, b->version);
        }
      }
      std::optional<KeyState> latest = ki.Latest();
      ASSERT_EQ(latest.has_value(), model.IsLive());
      if (latest) {
        EXPECT_EQ(latest->version, model.Get(next)->version);
      }
    }
  }
}

}  // namespace
}  // namespace converge::store
