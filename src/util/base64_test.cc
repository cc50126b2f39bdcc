#include "util/base64.h"

#include <gtest/gtest.h>

namespace converge::util {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  const std::pair<const char*, const char*> cases[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (auto [plain, enc] : cases) {
    EXPECT_EQ(Base64Encode(plain), enc);
    auto dec = Base64Decode(enc);
    ASSERT_TRUE(dec) << enc;
    EXPECT_EQ(*dec, plain);
  }
}

TEST(Base64Test, RejectsMalformed) {
  for (const char* bad : {"Zg=", "Z===", "Zm9v!A==", "Zg==Zg==", "=Zg="}) {
    EXPECT_FALSE(Base64Decode(bad)) << bad;
  }
}

}  // namespace
}  // namespace converge::util
