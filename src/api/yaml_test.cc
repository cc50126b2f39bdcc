#include "api/yaml.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

TEST(YamlTest, DuplicateKeysKeepTheLastValueAndAreReportedAsGoYamlDoes) {
  std::vector<std::string> dups;
  auto v = YamlToJson(R"(a: 1
b:
  x: 1
  x: 2
a: 2
b:
  y: 3
1: one
1: uno
true: t
true: T
"q\"k": 1
"q\"k": 2
)",
                      &dups);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(json::serialize(*v), R"({"a":2,"b":{"y":3},"1":"uno","true":"T","q\"k":2})");
  // A repeated key's value is decoded (its own repetitions reported) before the key is found
  // taken; the line is the value's (a block mapping starts at its first key).
  EXPECT_EQ(dups, (std::vector<std::string>{
                      "line 4: key \"x\" already set in map",
                      "line 5: key \"a\" already set in map",
                      "line 7: key \"b\" already set in map",
                      "line 9: key 1 already set in map",
                      "line 11: key true already set in map",
                      "line 13: key \"q\\\"k\" already set in map",
                  }));
}

TEST(YamlTest, JsonDuplicateKeysAsYaml) {
  const std::string text = R"({
  "a": {"x": 1,
        "x": 2},
  "a":
    [1, {"y": 1, "y": 2}],
  "s": "with \"quotes\" and \n",
  "s": 1
})";
  auto dups = JsonDuplicateKeysAsYaml(text);
  ASSERT_TRUE(dups.ok()) << dups.status().ToString();
  EXPECT_EQ(*dups, (std::vector<std::string>{
                       "line 3: key \"x\" already set in map",
                       "line 5: key \"y\" already set in map",
                       "line 5: key \"a\" already set in map",
                       "line 7: key \"s\" already set in map",
                   }));
  // The same text through the YAML parser reports the same.
  std::vector<std::string> yaml;
  ASSERT_TRUE(YamlToJson(text, &yaml).ok());
  EXPECT_EQ(yaml, *dups);
  EXPECT_FALSE(JsonDuplicateKeysAsYaml("{\"a\":").ok());
  // Keys compare decoded, as the parser that keeps the last of them decodes them.
  auto escaped = JsonDuplicateKeysAsYaml(R"({"A":1,"\u0041":2,"\ud83d\ude00":1,"😀":2})");
  ASSERT_TRUE(escaped.ok());
  EXPECT_EQ(*escaped, (std::vector<std::string>{"line 1: key \"A\" already set in map",
                                                "line 1: key \"😀\" already set in map"}));
  EXPECT_EQ(YamlUnmarshalErrors(*dups).substr(0, 41),
            "yaml: unmarshal errors:\n  line 3: key \"x\"");
}

}  // namespace
}  // namespace converge::api
