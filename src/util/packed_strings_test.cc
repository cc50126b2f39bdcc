#include "util/packed_strings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace converge::util {
namespace {

std::vector<std::string> Unpack(std::string_view packed) {
  std::vector<std::string> items;
  size_t at = 0;
  std::string_view item;
  while (NextPacked(packed, &at, &item)) items.emplace_back(item);
  return items;
}

TEST(PackedStrings, RoundTripsEmptyShortAndLongItems) {
  // 127 bytes is the longest one-byte length, 128 the shortest two-byte one, 16,384 three.
  const std::vector<std::string> items = {"",
                                          "Pod",
                                          std::string(127, 'a'),
                                          std::string(128, 'b'),
                                          "",
                                          std::string(16384, 'c'),
                                          "spec.containers{web}"};
  std::string appended;
  size_t expected_size = 0;
  for (const std::string& item : items) {
    AppendPacked(&appended, item);
    expected_size += PackedSize(item);
  }
  EXPECT_EQ(appended.size(), expected_size);
  EXPECT_EQ(Unpack(appended), items);
  EXPECT_EQ(PackedSize(std::string(127, 'a')), 128u);
  EXPECT_EQ(PackedSize(std::string(128, 'a')), 130u);
  EXPECT_EQ(PackedSize(std::string(16384, 'a')), 16387u);

  std::string packed =
      PackStrings({items[0], items[1], items[2], items[3], items[4], items[5], items[6]});
  EXPECT_EQ(packed, appended);
  EXPECT_EQ(packed.capacity(), packed.size()) << "packed at exactly its size";
}

TEST(PackedStrings, StopsAtTruncatedOrOverlongInput) {
  std::string packed = PackStrings({"first", std::string(300, 'x')});
  std::string_view item;
  for (size_t cut = 7; cut < packed.size(); ++cut) {  // the second item cut short anywhere
    size_t at = 0;
    ASSERT_TRUE(NextPacked(std::string_view(packed).substr(0, cut), &at, &item));
    EXPECT_EQ(item, "first");
    EXPECT_FALSE(NextPacked(std::string_view(packed).substr(0, cut), &at, &item)) << cut;
  }
  // A length whose continuation bytes never end.
  size_t at = 0;
  EXPECT_FALSE(NextPacked(std::string(12, '\xff'), &at, &item));
}

}  // namespace
}  // namespace converge::util
