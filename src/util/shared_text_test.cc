#include "util/shared_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace converge::util {
namespace {

TEST(SharedTextTest, EqualTextsShareOneCopy) {
  SharedText a = std::string("registry.k8s.io/pause:3.9");
  SharedText b;
  b = std::string_view("registry.k8s.io/pause:3.9");
  SharedText c = std::string("registry.k8s.io/pause:3.10");
  EXPECT_EQ(a.str(), "registry.k8s.io/pause:3.9");
  EXPECT_EQ(&a.str(), &b.str());  // one copy
  EXPECT_NE(&a.str(), &c.str());
  const std::string& as_string = c;
  EXPECT_EQ(as_string, "registry.k8s.io/pause:3.10");
  SharedText copy = a;
  EXPECT_EQ(&copy.str(), &a.str());
}

TEST(SharedTextTest, EmptyHoldsNothing) {
  SharedText e;
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.str(), "");
  SharedText t = std::string("x");
  EXPECT_FALSE(t.empty());
  t = std::string_view();
  EXPECT_TRUE(t.empty());
}

TEST(SharedTextTest, TextsNobodyHoldsLeaveTheTable) {
  const size_t before = SharedText::TableSizeForTest();
  {
    std::vector<SharedText> held;
    for (int i = 0; i < 1000; ++i)
      held.emplace_back(std::string("unique-text-") + std::to_string(i));
    EXPECT_GE(SharedText::TableSizeForTest(),
              1000u);  // all held (earlier tests' texts may be swept)
  }
  // Every one of them is released: the next sweeps drop them, so the table stays bounded by
  // twice what is in use however many distinct texts come and go.
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 1000; ++i) SharedText t = std::string("passing-") + std::to_string(i);
  }
  EXPECT_LT(SharedText::TableSizeForTest(), before + 2200);
}

}  // namespace
}  // namespace converge::util
