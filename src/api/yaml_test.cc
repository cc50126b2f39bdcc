#include "api/yaml.h"

#include <gtest/gtest.h>

namespace converge::api {
namespace {

namespace json = boost::json;

TEST(YamlTest, ConvertsCoreSchema) {
  auto v = YamlToJson(R"(
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  paused: false
  ratio: 0.5
  hex: 0x10
  quoted: "3"
  nothing: ~
  list:
  - a
  - 'true'
)");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(
      json::serialize(*v),
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},"spec":{"replicas":3,"paused":false,"ratio":5E-1,"hex":16,"quoted":"3","nothing":null,"list":["a","true"]}})");
}

TEST(YamlTest, JsonIsYaml) {
  auto v = YamlToJson(R"({"a":[1,2,{"b":"c"}],"d":null})");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(json::serialize(*v), R"({"a":[1,2,{"b":"c"}],"d":null})");
}

TEST(YamlTest, BillionLaughsFailsFast) {
  std::string doc =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c) {
    doc += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) doc += std::string(i ? "," : "") + "*" + prev;
    doc += "]\n";
    prev = c;
  }
  auto v = YamlToJson(doc);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("aliasing"), std::string::npos);
}

TEST(YamlTest, DeepNestingRejected) {
  std::string doc(100000, '[');
  EXPECT_FALSE(YamlToJson(doc).ok());
}

// Found by yaml_fuzz: an alias inside its own anchor's node is a cycle in yaml-cpp's node graph.
TEST(YamlTest, SelfReferentialAliasRejected) {
  auto v = YamlToJson("a: &a [1, 2]\nd: &d [*d, *a]\ne: [*d]\n");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("own anchor"), std::string::npos);
  auto m = YamlToJson("m: &m {self: *m}\n");
  ASSERT_FALSE(m.ok());
}

TEST(YamlTest, DeepButLegalNestingConverts) {
  std::string doc(400, '[');
  doc += std::string(400, ']');
  EXPECT_TRUE(YamlToJson(doc).ok());
}

TEST(YamlTest, MalformedRejected) {
  EXPECT_FALSE(YamlToJson("a: [1, 2").ok());
  EXPECT_FALSE(YamlToJson("a: b: c").ok());
}

}  // namespace
}  // namespace converge::api
