#include "util/ids.h"

#include <gtest/gtest.h>

#include <set>

namespace converge::util {
namespace {

TEST(IdsTest, UuidShapeAndUniqueness) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string u = NewUuid();
    ASSERT_EQ(u.size(), 36u);
    EXPECT_EQ(u[8], '-');
    EXPECT_EQ(u[14], '4');                                                      // version
    EXPECT_TRUE(u[19] == '8' || u[19] == '9' || u[19] == 'a' || u[19] == 'b');  // variant
    EXPECT_TRUE(seen.insert(u).second);
  }
}

TEST(IdsTest, RandomStringUsesAlphabet) {
  std::string s = RandomString(200, kNameSuffixAlphabet);
  ASSERT_EQ(s.size(), 200u);
  for (char c : s) EXPECT_NE(kNameSuffixAlphabet.find(c), std::string_view::npos);
}

}  // namespace
}  // namespace converge::util
