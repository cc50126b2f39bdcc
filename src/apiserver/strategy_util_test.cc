#include "apiserver/strategy_util.h"

#include <gtest/gtest.h>

#include "apiserver/strategy_test_util.h"

namespace converge::apiserver::sv {
namespace {

namespace json = boost::json;
using testing::Lines;

TEST(StrategyUtilTest, Paths) {
  EXPECT_EQ(Child("", "spec"), "spec");
  EXPECT_EQ(Child("spec", "replicas"), "spec.replicas");
  EXPECT_EQ(Index("spec.containers", 2), "spec.containers[2]");
  EXPECT_EQ(Key("data", "a.b"), "data[a.b]");
}

TEST(StrategyUtilTest, GoRendering) {
  json::value labels = json::parse(R"({"b":"2","a":"1"})");
  EXPECT_EQ(GoStringMap(&labels), R"(map[string]string{"a":"1", "b":"2"})");
  EXPECT_EQ(GoStringMap(nullptr), "map[string]string(nil)");
  json::value empty = json::object();
  EXPECT_EQ(GoStringMap(&empty), "map[string]string{}");
  json::value list = json::parse(R"(["10.0.0.1","::1"])");
  EXPECT_EQ(GoStringSlice(&list), R"([]string{"10.0.0.1", "::1"})");
  json::value sel = json::parse(R"({"matchLabels":{"app":"web"}})");
  EXPECT_EQ(GoLabelSelector(&sel),
            R"(v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, )"
            R"(MatchExpressions:[]v1.LabelSelectorRequirement(nil)})");
  json::value sel2 =
      json::parse(R"({"matchExpressions":[{"key":"k","operator":"In","values":["a"]}]})");
  EXPECT_EQ(GoLabelSelector(&sel2),
            R"(v1.LabelSelector{MatchLabels:map[string]string(nil), )"
            R"(MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{)"
            R"(Key:"k", Operator:"In", Values:[]string{"a"}}}})");
  json::value pct = "25%";
  EXPECT_EQ(GoIntOrString(&pct), R"(intstr.IntOrString{Type:1, IntVal:0, StrVal:"25%"})");
  json::value zero = 0;
  EXPECT_EQ(GoIntOrString(&zero), R"(intstr.IntOrString{Type:0, IntVal:0, StrVal:""})");
}

TEST(StrategyUtilTest, QuantityCanonicalForms) {
  struct Case {
    const char* name;
    const char* in;
    const char* canonical;
  };
  const Case cases[] = {
      {"plain", "1", "1"},
      {"milli to whole", "1000m", "1"},
      {"fraction to milli", "0.5", "500m"},
      {"milli stays", "1500m", "1500m"},
      {"binary up", "1024Mi", "1Gi"},
      {"binary fraction", "1.5Gi", "1536Mi"},
      {"small binary is decimal", "512Ki", "512Ki"},
      {"tiny binary is decimal", "0.5Ki", "512"},
      {"kilo", "1000k", "1M"},
      {"exponent", "1e3", "1e3"},
      {"nano rounds up", "0.0000000001", "1n"},
      {"zero", "0m", "0"},
      {"negative", "-2", "-2"},
      {"big decimal", "128974848", "128974848"},
  };
  for (const Case& c : cases) {
    auto q = Quantity::Parse(c.in);
    ASSERT_TRUE(q.has_value()) << c.name;
    EXPECT_EQ(q->String(), c.canonical) << c.name;
  }
  for (const char* bad : {"", "abc", "1.2.3", "1Qi", "m", "1e", "1 Gi", "--1"}) {
    EXPECT_FALSE(Quantity::Parse(bad).has_value()) << bad;
  }
}

TEST(StrategyUtilTest, QuantityCompare) {
  auto q = [](const char* s) { return *Quantity::Parse(s); };
  EXPECT_EQ(q("1Gi").Compare(q("1073741824")), 0);
  EXPECT_LT(q("500m").Compare(q("1")), 0);
  EXPECT_GT(q("2").Compare(q("1999m")), 0);
  EXPECT_EQ(q("1k").Compare(q("1000")), 0);
  EXPECT_TRUE(q("-1").IsNegative());
  EXPECT_FALSE(q("1.5").IsInteger());
  EXPECT_TRUE(Quantity::FromJson(json::value(2)).has_value());
}

TEST(StrategyUtilTest, NameFormats) {
  EXPECT_TRUE(IsDns1035Label("web-1").empty());
  ASSERT_EQ(IsDns1035Label("1web").size(), 1u);
  EXPECT_EQ(IsDns1035Label("1web")[0],
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
            "with an alphabetic character, and end with an alphanumeric character (e.g. "
            "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
  EXPECT_EQ(IsConfigMapKey("a b"),
            std::vector<std::string>{
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                "'[-._a-zA-Z0-9]+')"});
  EXPECT_EQ(IsConfigMapKey(".."), std::vector<std::string>{"must not be '..'"});
  EXPECT_EQ(IsConfigMapKey("..a"), std::vector<std::string>{"must not start with '..'"});
  EXPECT_TRUE(IsConfigMapKey("tls.crt").empty());
  EXPECT_EQ(IsValidPortName("http--x"),
            std::vector<std::string>{"must not contain consecutive hyphens (-)"});
  EXPECT_EQ(IsValidPortName("8080"),
            std::vector<std::string>{"must contain at least one letter (a-z)"});
  EXPECT_EQ(IsValidPortName("a-very-long-port-name").front(), "must be no more than 15 characters");
  EXPECT_EQ(IsValidPortNum(0), std::vector<std::string>{"must be between 1 and 65535, inclusive"});
  EXPECT_TRUE(IsEnvVarName("MY_VAR.1").empty());
  EXPECT_EQ(IsEnvVarName("A=B").size(), 1u);
  EXPECT_TRUE(IsValidPercent("25%").empty());
  EXPECT_EQ(IsValidPercent("25").size(), 1u);
  EXPECT_EQ(IsValidPathSegmentName(".."), std::vector<std::string>{"may not be '..'"});
  EXPECT_EQ(IsValidPathSegmentName("a/b%"),
            (std::vector<std::string>{"may not contain '/'", "may not contain '%'"}));
  EXPECT_TRUE(IsValidIp("10.96.0.1").empty());
  EXPECT_TRUE(IsValidIp("fd00::1").empty());
  EXPECT_FALSE(IsValidIp("10.96.0").empty());
}

TEST(StrategyUtilTest, LabelSelectorValidation) {
  json::value sel = json::parse(R"({"matchLabels":{"app":"-bad"},"matchExpressions":[
      {"key":"a","operator":"In"},
      {"key":"b","operator":"Exists","values":["x"]},
      {"key":"c","operator":"Near","values":["x"]}]})");
  EXPECT_EQ(Lines(ValidateLabelSelectorField("spec.selector", &sel)),
            (std::vector<std::string>{
                "spec.selector.matchLabels: Invalid value: \"-bad\": a valid label must be an "
                "empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
                "or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                "spec.selector.matchExpressions[0].values: Required value: must be specified "
                "when `operator` is 'In' or 'NotIn'",
                "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when "
                "`operator` is 'Exists' or 'DoesNotExist'",
                "spec.selector.matchExpressions[2].operator: Invalid value: \"Near\": not a valid "
                "selector operator",
            }));
}

TEST(StrategyUtilTest, IntOrPercent) {
  json::value pct = "30%";
  EXPECT_EQ(IntOrPercentValue(*ParseIntOrString(&pct)), 30);
  json::value bad = "x%";
  EXPECT_EQ(IntOrPercentValue(*ParseIntOrString(&bad)), 0);
  json::value n = 3;
  EXPECT_EQ(IntOrPercentValue(*ParseIntOrString(&n)), 3);
  EXPECT_FALSE(ParseIntOrString(nullptr).has_value());
}

}  // namespace
}  // namespace converge::apiserver::sv
