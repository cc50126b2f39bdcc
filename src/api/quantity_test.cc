#include "api/quantity.h"

#include <gtest/gtest.h>

#include <limits>

namespace converge::api {
namespace {

TEST(QuantityTest, ValueAndMilliValueRoundAwayFromZero) {
  struct Case {
    const char* in;
    int64_t value;
    int64_t milli;
  };
  const Case cases[] = {
      {"0", 0, 0},
      {"1", 1, 1000},
      {"100m", 1, 100},
      {"1500m", 2, 1500},
      {"0.5", 1, 500},
      {"1n", 1, 1},
      {"1Ki", 1024, 1024000},
      {"1Gi", 1073741824, 1073741824000},
      {"128974848", 128974848, 128974848000},
      {"129e6", 129000000, 129000000000},
      {"123Mi", 128974848, 128974848000},
      {"-1500m", -2, -1500},
      {"-1n", -1, -1},
  };
  for (const Case& c : cases) {
    auto q = Quantity::Parse(c.in);
    ASSERT_TRUE(q.has_value()) << c.in;
    EXPECT_EQ(q->Value(), c.value) << c.in;
    EXPECT_EQ(q->MilliValue(), c.milli) << c.in;
  }
}

TEST(QuantityTest, ValueSaturates) {
  auto q = Quantity::Parse("100E");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->Value(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(q->MilliValue(), std::numeric_limits<int64_t>::max());
}

TEST(QuantityTest, FromJsonNumbers) {
  auto q = Quantity::FromJson(boost::json::value(3));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->MilliValue(), 3000);
  EXPECT_FALSE(Quantity::FromJson(boost::json::value(nullptr)).has_value());
}

}  // namespace
}  // namespace converge::api
