#include "store/key_index.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace converge::store
