#include "util/heap_optional.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace converge::util {
namespace {

TEST(HeapOptional, BehavesAsAnOptionalWithAPointersFootprint) {
  static_assert(sizeof(HeapOptional<std::string>) == sizeof(void*));
  HeapOptional<std::string> a;
  EXPECT_FALSE(a.has_value());
  EXPECT_FALSE(a);
  a = std::string("exit 1");
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, "exit 1");
  EXPECT_EQ(a->size(), 6u);
  const std::string* held = &*a;
  a = std::string("exit 2");  // assigning a value reuses what is held
  EXPECT_EQ(&*a, held);
  EXPECT_EQ(*a, "exit 2");

  HeapOptional<std::string> b = a;  // copies are deep
  ASSERT_TRUE(b);
  EXPECT_NE(&*b, &*a);
  EXPECT_EQ(a, b);
  *b = "changed";
  EXPECT_EQ(*a, "exit 2");
  EXPECT_FALSE(a == b);

  HeapOptional<std::string> c = std::move(b);  // moves take the pointer
  EXPECT_EQ(*c, "changed");
  b = c;
  const HeapOptional<std::string>& same = b;
  b = same;  // self-assignment keeps the value
  EXPECT_EQ(*b, "changed");

  c.reset();
  EXPECT_FALSE(c);
  EXPECT_FALSE(b == c);
  a = std::nullopt;
  EXPECT_EQ(a, c) << "two empty ones are equal";
  HeapOptional<std::string> d = std::nullopt;
  EXPECT_FALSE(d);
}

}  // namespace
}  // namespace converge::util
