#include "api/special_types.h"

#include <gtest/gtest.h>

#include <limits>

namespace converge::api {
namespace {

TEST(FormatDuration, MatchesGo) {
  struct Case {
    int64_t ns;
    const char* want;
  };
  // Expected strings are what Go's time.Duration.String() prints.
  const Case cases[] = {
      {0, "0s"},
      {1, "1ns"},
      {1100, "1.1\xc2\xb5s"},
      {2'200'000, "2.2ms"},
      {3'300'000'000, "3.3s"},
      {245'000'000'000, "4m5s"},
      {245'001'000'000, "4m5.001s"},
      {18'367'001'000'000, "5h6m7.001s"},
      {480'000'000'001, "8m0.000000001s"},
      {3'600'000'000'000, "1h0m0s"},
      {-1, "-1ns"},
      {std::numeric_limits<int64_t>::max(), "2562047h47m16.854775807s"},
      {std::numeric_limits<int64_t>::min(), "-2562047h47m16.854775808s"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatDuration(c.ns), c.want) << c.ns;
    auto back = ParseDuration(c.want);
    ASSERT_TRUE(back.has_value()) << c.want;
    EXPECT_EQ(*back, c.ns) << c.want;
  }
}

TEST(ParseDuration, AcceptsGoSyntaxRejectsTheRest) {
  EXPECT_EQ(ParseDuration("1.5h"), 5'400'000'000'000);
  EXPECT_EQ(ParseDuration("300ms"), 300'000'000);
  EXPECT_EQ(ParseDuration("-2us"), -2000);
  EXPECT_EQ(ParseDuration("+1m30s"), 90'000'000'000);
  EXPECT_EQ(ParseDuration(".5s"), 500'000'000);
  EXPECT_EQ(ParseDuration("0"), 0);
  for (const char* bad : {"", "1", "1x", "h", "1h-2m", "-", ".s", "99999999999999999999s"}) {
    EXPECT_FALSE(ParseDuration(bad).has_value()) << bad;
  }
}

TEST(FormatTime, Rfc3339Utc) {
  EXPECT_EQ(FormatTime(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatTime(1714979289), "2024-05-06T07:08:09Z");
  EXPECT_EQ(FormatTime(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatTime(951782400), "2000-02-29T00:00:00Z");
  EXPECT_EQ(FormatMicroTime(1714979289, 123456789), "2024-05-06T07:08:09.123456Z");
  EXPECT_EQ(FormatMicroTime(1714979289, 0), "2024-05-06T07:08:09.000000Z");
}

TEST(ParseTime, OffsetsFractionsAndErrors) {
  auto t = ParseTime("2024-05-06T09:08:09.5+02:00");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->seconds, 1714979289);
  EXPECT_EQ(t->nanos, 500'000'000);
  EXPECT_EQ(ParseTime("2024-05-06t07:08:09z")->seconds, 1714979289);
  EXPECT_EQ(ParseTime("1969-12-31T23:59:59Z")->seconds, -1);
  for (const char* bad : {"", "2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z",
                          "2024-05-06 07:08:09Z", "2024-05-06T07:08:09", "2024-05-06T24:00:00Z",
                          "2024-05-06T07:08:09.Z", "2024-05-06T07:08:09+0200", "x"}) {
    EXPECT_FALSE(ParseTime(bad).has_value()) << bad;
  }
}

TEST(Base64, StdEncodingWithPadding) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode(std::string("\x00\xff\x10", 3)), "AP8Q");
  EXPECT_EQ(Base64Decode("Zm8="), "fo");
  EXPECT_EQ(Base64Decode("AP8Q"), std::string("\x00\xff\x10", 3));
  for (const char* bad : {"Zg=", "Z===", "Zg==Zg==", "Zm9*", "Zm=v"}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
}

TEST(Utf8, ValidatesAndReplacesLikeGo) {
  EXPECT_TRUE(IsValidUtf8("plain \xc2\xb5 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));  // surrogate
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));      // truncated
  EXPECT_EQ(SanitizeUtf8("a\xffz"), "a\xef\xbf\xbdz");
  EXPECT_EQ(SanitizeUtf8("ok"), "ok");
}

}  // namespace
}  // namespace converge::api
