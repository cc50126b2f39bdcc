#include "store/index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace converge::store {
namespace {

RevisionPair IndexRev(Revision main) {
  return RevisionPair{main, 0};
}

// The keys a visit of [start, end) sees live at `at`, in order.
std::vector<std::string> VisibleKeys(const Index& index, std::string_view start,
                                     std::string_view end, Revision at = Index::kLatest) {
  std::vector<std::string> out;
  index.Visit(start, end, at, [&](std::string_view key, const KeyState&) {
    out.emplace_back(key);
    return true;
  });
  return out;
}

// Point lookups (Get, a one-key Visit) and range visits agree through puts, deletes, compaction
// that forgets keys and the same keys written again: the hash index beside the ordered map
// follows every key in and out.
TEST(IndexTest, PointLookupsAndRangesAgreeAsKeysComeAndGo) {
  Index index;
  index.Apply({{"/a", IndexRev(1)}, {"/b", IndexRev(1)}, {"/c", IndexRev(2)}});
  index.Apply({{"/b", IndexRev(3), /*tombstone=*/true}});
  EXPECT_EQ(index.KeyCount(), 3u);
  ASSERT_TRUE(index.Get("/a", Index::kLatest).has_value());
  EXPECT_EQ(index.Get("/a", Index::kLatest)->mod.main, 1);
  EXPECT_FALSE(index.Get("/b", Index::kLatest).has_value());
  EXPECT_EQ(index.Get("/b", 2)->mod.main, 1);  // still in its history
  EXPECT_FALSE(index.Get("/d", Index::kLatest).has_value());
  EXPECT_EQ(VisibleKeys(index, "/c", ""), std::vector<std::string>{"/c"});
  EXPECT_TRUE(VisibleKeys(index, "/b", "").empty());
  EXPECT_EQ(VisibleKeys(index, "/", std::string_view("\0", 1)),
            (std::vector<std::string>{"/a", "/c"}));

  // Compaction past the delete forgets /b entirely (at the delete's own revision it is kept).
  std::vector<RevisionPair> dropped;
  EXPECT_FALSE(index.CompactChunk(4, "", 100, &dropped).has_value());
  EXPECT_EQ(index.KeyCount(), 2u);
  EXPECT_FALSE(index.Get("/b", 2).has_value());
  EXPECT_TRUE(index.RevisionsForTest("/b").empty());

  // Written again, it is a new key with a new generation.
  index.Apply({{"/b", IndexRev(5)}, {"/a", IndexRev(5)}});
  EXPECT_EQ(index.KeyCount(), 3u);
  ASSERT_TRUE(index.Get("/b", Index::kLatest).has_value());
  EXPECT_EQ(index.Get("/b", Index::kLatest)->create_revision, 5);
  EXPECT_EQ(index.Get("/a", Index::kLatest)->version, 2);
  EXPECT_EQ(VisibleKeys(index, "/b", ""), std::vector<std::string>{"/b"});
  EXPECT_EQ(VisibleKeys(index, "/", std::string_view("\0", 1)),
            (std::vector<std::string>{"/a", "/b", "/c"}));
  EXPECT_EQ(index.RevisionsForTest("/b"), std::vector<RevisionPair>{IndexRev(5)});
}

// Many keys, compacted away in chunks and brought back: every lookup still finds its own entry.
TEST(IndexTest, ManyKeysSurviveChunkedCompactionAndReinsertion) {
  Index index;
  constexpr int kKeys = 2000;
  auto key = [](int i) { return "/k/" + std::to_string(i); };
  std::vector<Index::Change> puts, deletes;
  for (int i = 0; i < kKeys; ++i) puts.push_back({key(i), IndexRev(1 + i)});
  index.Apply(puts);
  for (int i = 0; i < kKeys; i += 2) deletes.push_back({key(i), IndexRev(kKeys + 1 + i), true});
  index.Apply(deletes);
  std::vector<RevisionPair> dropped;
  std::optional<std::string> from = "";
  while (from) from = index.CompactChunk(3 * kKeys, *from, 97, &dropped);
  EXPECT_EQ(index.KeyCount(), static_cast<size_t>(kKeys / 2));
  for (int i = 0; i < kKeys; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(index.Get(key(i), Index::kLatest).has_value(), i % 2 == 1);
  }
  std::vector<Index::Change> again;
  for (int i = 0; i < kKeys; i += 2) again.push_back({key(i), IndexRev(4 * kKeys + i)});
  index.Apply(again);
  EXPECT_EQ(index.KeyCount(), static_cast<size_t>(kKeys));
  for (int i = 0; i < kKeys; ++i) {
    SCOPED_TRACE(i);
    auto state = index.Get(key(i), Index::kLatest);
    ASSERT_TRUE(state.has_value());
    EXPECT_EQ(state->mod.main, i % 2 == 0 ? 4 * kKeys + i : 1 + i);
  }
}

}  // namespace
}  // namespace converge::store
