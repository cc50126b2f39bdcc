#include "controllers/common/template_hash.h"

#include <gtest/gtest.h>

namespace converge::controllers {
namespace {

namespace json = boost::json;

json::object Template(std::string_view text) {
  return json::parse(text).as_object();
}

TEST(TemplateHashTest, Fnv32aKnownValues) {
  // The FNV-1a test vectors.
  EXPECT_EQ(Fnv32a(""), 0x811c9dc5u);
  EXPECT_EQ(Fnv32a("a"), 0xe40c292cu);
  EXPECT_EQ(Fnv32a("foobar"), 0xbf9cf968u);
}

TEST(TemplateHashTest, SafeEncodeStringUsesUpstreamsAlphabet) {
  EXPECT_EQ(SafeEncodeString("0123456789"), "456789bcdf");
  EXPECT_EQ(SafeEncodeString("3546925611"), "798bf69b55");
}

TEST(TemplateHashTest, StableUnderKeyOrderAndEmptyFields) {
  auto a = Template(R"({"metadata":{"labels":{"app":"web","tier":"fe"}},
                        "spec":{"containers":[{"name":"n","image":"nginx:1.27"}]}})");
  auto b = Template(R"({"spec":{"containers":[{"image":"nginx:1.27","name":"n"}],"volumes":[]},
                        "metadata":{"annotations":{},"labels":{"tier":"fe","app":"web"}}})");
  EXPECT_EQ(ComputeHash(a, std::nullopt), ComputeHash(b, std::nullopt));
  EXPECT_TRUE(SemanticEqual(json::value(a), json::value(b)));
  std::string h = ComputeHash(a, std::nullopt);
  EXPECT_FALSE(h.empty());
  EXPECT_LE(h.size(), 10u);
  EXPECT_EQ(h.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos) << h;
}

TEST(TemplateHashTest, ChangesWithTemplateAndCollisionCount) {
  auto a = Template(R"({"spec":{"containers":[{"name":"n","image":"nginx:1.27"}]}})");
  auto b = Template(R"({"spec":{"containers":[{"name":"n","image":"nginx:1.28"}]}})");
  EXPECT_NE(ComputeHash(a, std::nullopt), ComputeHash(b, std::nullopt));
  EXPECT_NE(ComputeHash(a, std::nullopt), ComputeHash(a, 1));
  EXPECT_NE(ComputeHash(a, 1), ComputeHash(a, 2));
  EXPECT_EQ(ComputeHash(a, 1), ComputeHash(a, 1));
}

TEST(TemplateHashTest, EqualIgnoreHash) {
  auto d =
      Template(R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"n"}]}})");
  auto rs = Template(R"({"metadata":{"labels":{"app":"web","pod-template-hash":"abc"}},
                         "spec":{"containers":[{"name":"n"}]}})");
  auto other = Template(R"({"metadata":{"labels":{"app":"web","pod-template-hash":"abc"}},
                            "spec":{"containers":[{"name":"m"}]}})");
  EXPECT_TRUE(EqualIgnoreHash(d, rs));
  EXPECT_FALSE(EqualIgnoreHash(d, other));
  // Numbers compare by value.
  EXPECT_TRUE(SemanticEqual(json::parse(R"({"a":3})"), json::parse(R"({"a":3.0})")));
}

}  // namespace
}  // namespace converge::controllers
