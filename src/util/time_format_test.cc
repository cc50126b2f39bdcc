#include "util/time_format.h"

#include <gtest/gtest.h>

namespace converge::util {
namespace {

using namespace std::chrono_literals;

TEST(TimeFormatTest, Rfc3339RoundTrip) {
  WallTime t = std::chrono::sys_days{std::chrono::year{2025} / 3 / 4} + 5h + 6min + 7s + 123456us;
  EXPECT_EQ(FormatRfc3339(t), "2025-03-04T05:06:07Z");
  EXPECT_EQ(FormatRfc3339Micro(t), "2025-03-04T05:06:07.123456Z");
  auto parsed = ParseRfc3339("2025-03-04T05:06:07.123456Z");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, t);
  auto offset = ParseRfc3339("2025-03-04T07:06:07+02:00");
  ASSERT_TRUE(offset);
  EXPECT_EQ(FormatRfc3339(*offset), "2025-03-04T05:06:07Z");
  for (const char* bad : {"", "2025-03-04", "2025-13-04T05:06:07Z", "2025-03-04T05:06:07",
                          "2025-03-04T05:06:07Zjunk"}) {
    EXPECT_FALSE(ParseRfc3339(bad)) << bad;
  }
}

TEST(TimeFormatTest, Rfc3339CalendarEdges) {
  using std::chrono::sys_days, std::chrono::year;
  const WallTime epoch{};
  EXPECT_EQ(FormatRfc3339(epoch), "1970-01-01T00:00:00Z");
  // Before the epoch the second is floored, and the fraction counts up from it.
  EXPECT_EQ(FormatRfc3339(epoch - 1s), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatRfc3339Micro(epoch - 500ms), "1969-12-31T23:59:59.500000Z");
  EXPECT_EQ(FormatRfc3339(sys_days{year{2024} / 2 / 29} + 23h + 59min + 59s),
            "2024-02-29T23:59:59Z");
  EXPECT_EQ(FormatRfc3339Micro(sys_days{year{1999} / 12 / 31} + 23h + 59min + 59s + 999999us),
            "1999-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatRfc3339(sys_days{year{2100} / 3 / 1}), "2100-03-01T00:00:00Z");
}

TEST(TimeFormatTest, HumanDuration) {
  struct Case {
    std::chrono::nanoseconds d;
    const char* want;
  } cases[] = {
      {-5s, "<invalid>"},
      {-1s, "0s"},
      {0s, "0s"},
      {59s, "59s"},
      {119s, "119s"},
      {2min, "2m"},
      {2min + 5s, "2m5s"},
      {10min, "10m"},
      {179min, "179m"},
      {3h, "3h"},
      {3h + 30min, "3h30m"},
      {8h, "8h"},
      {47h, "47h"},
      {48h, "2d"},
      {51h, "2d3h"},
      {8 * 24h, "8d"},
      {730 * 24h, "2y"},
      {731 * 24h, "2y1d"},
      {9 * 365 * 24h, "9y"},
  };
  for (const auto& c : cases) EXPECT_EQ(HumanDuration(c.d), c.want) << c.want;
}

TEST(TimeFormatTest, ShortHumanDuration) {
  EXPECT_EQ(ShortHumanDuration(7s), "7s");
  EXPECT_EQ(ShortHumanDuration(61s), "1m");
  EXPECT_EQ(ShortHumanDuration(2h), "2h");
  EXPECT_EQ(ShortHumanDuration(49h), "2d");
  EXPECT_EQ(ShortHumanDuration(400 * 24h), "1y");
}

}  // namespace
}  // namespace converge::util
