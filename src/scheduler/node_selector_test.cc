#include "scheduler/node_selector.h"

#include <gtest/gtest.h>

namespace converge::scheduler {
namespace {

namespace json = boost::json;

json::object Req(std::string key, std::string op, json::array values = {}) {
  json::object r{{"key", key}, {"operator", op}};
  if (!values.empty()) r["values"] = std::move(values);
  return r;
}

TEST(NodeSelectorTest, Requirements) {
  json::object node_labels{{"zone", "a"}, {"cores", "16"}, {"name", "x"}, {"bad-number", "1x"}};
  Labels labels = ParseLabels(&node_labels);
  struct Case {
    const char* name;
    json::object requirement;
    bool matches;
  };
  const Case cases[] = {
      {"In matches", Req("zone", "In", {"a", "b"}), true},
      {"In misses", Req("zone", "In", {"b"}), false},
      {"In on a missing label", Req("rack", "In", {"a"}), false},
      {"NotIn with another value", Req("zone", "NotIn", {"b"}), true},
      {"NotIn with the value", Req("zone", "NotIn", {"a"}), false},
      {"NotIn on a missing label", Req("rack", "NotIn", {"a"}), true},
      {"Exists", Req("zone", "Exists"), true},
      {"Exists on a missing label", Req("rack", "Exists"), false},
      {"DoesNotExist", Req("rack", "DoesNotExist"), true},
      {"DoesNotExist on a present label", Req("zone", "DoesNotExist"), false},
      {"Gt larger", Req("cores", "Gt", {"8"}), true},
      {"Gt equal", Req("cores", "Gt", {"16"}), false},
      {"Lt smaller", Req("cores", "Lt", {"32"}), true},
      {"Lt larger", Req("cores", "Lt", {"4"}), false},
      {"Gt on a non-number label", Req("bad-number", "Gt", {"0"}), false},
      {"Gt on a missing label", Req("rack", "Gt", {"0"}), false},
      {"Gt with a non-number value is invalid", Req("cores", "Gt", {"eight"}), false},
      {"Gt with two values is invalid", Req("cores", "Gt", {"1", "2"}), false},
      {"In without values is invalid", Req("zone", "In"), false},
      {"Exists with values is invalid", Req("zone", "Exists", {"a"}), false},
      {"unknown operator is invalid", Req("zone", "Like", {"a"}), false},
  };
  for (const Case& c : cases) {
    json::object term{{"matchExpressions", json::array{c.requirement}}};
    std::optional<NodeSelectorTerm> t = ParseNodeSelectorTerm(term);
    ASSERT_TRUE(t.has_value()) << c.name;
    EXPECT_EQ(t->Matches("node-1", labels), c.matches) << c.name;
  }
}

TEST(NodeSelectorTest, MatchFieldsOnlyMetadataName) {
  Labels none;
  struct Case {
    const char* name;
    json::object requirement;
    bool matches;
  };
  const Case cases[] = {
      {"In the name", Req("metadata.name", "In", {"node-1"}), true},
      {"In another name", Req("metadata.name", "In", {"node-2"}), false},
      {"NotIn the name", Req("metadata.name", "NotIn", {"node-1"}), false},
      {"NotIn another name", Req("metadata.name", "NotIn", {"node-2"}), true},
      {"two values are invalid", Req("metadata.name", "In", {"node-1", "node-2"}), false},
      {"other fields are invalid", Req("metadata.uid", "In", {"node-1"}), false},
      {"Exists is invalid", Req("metadata.name", "Exists"), false},
  };
  for (const Case& c : cases) {
    json::object term{{"matchFields", json::array{c.requirement}}};
    std::optional<NodeSelectorTerm> t = ParseNodeSelectorTerm(term);
    ASSERT_TRUE(t.has_value()) << c.name;
    EXPECT_EQ(t->Matches("node-1", none), c.matches) << c.name;
  }
}

TEST(NodeSelectorTest, TermsAreOredAndRequirementsAnded) {
  json::object node_labels{{"zone", "a"}, {"disk", "ssd"}};
  Labels labels = ParseLabels(&node_labels);
  auto selector = [](json::array terms) {
    return ParseNodeSelector(json::object{{"nodeSelectorTerms", std::move(terms)}});
  };
  json::object zone_b{{"matchExpressions", json::array{Req("zone", "In", {"b"})}}};
  json::object zone_a_ssd{
      {"matchExpressions", json::array{Req("zone", "In", {"a"}), Req("disk", "In", {"ssd"})}}};
  json::object zone_a_hdd{
      {"matchExpressions", json::array{Req("zone", "In", {"a"}), Req("disk", "In", {"hdd"})}}};
  EXPECT_TRUE(selector({zone_b, zone_a_ssd}).Matches("n", labels));
  EXPECT_FALSE(selector({zone_b, zone_a_hdd}).Matches("n", labels));
  // An empty term selects nothing, and so does a selector without terms.
  EXPECT_FALSE(selector({json::object{}}).Matches("n", labels));
  EXPECT_FALSE(selector({}).Matches("n", labels));
  // A term with labels and fields needs both.
  json::object both{{"matchExpressions", json::array{Req("zone", "In", {"a"})}},
                    {"matchFields", json::array{Req("metadata.name", "In", {"other"})}}};
  EXPECT_FALSE(selector({both}).Matches("n", labels));
}

TEST(NodeSelectorTest, RequiredNodeAffinityCombinesNodeSelectorAndAffinity) {
  json::object node_labels{{"zone", "a"}, {"disk", "ssd"}};
  Labels labels = ParseLabels(&node_labels);
  json::object spec{{"nodeSelector", json::object{{"disk", "ssd"}}}};
  EXPECT_TRUE(ParseRequiredNodeAffinity(spec).Matches("n", labels));
  spec["nodeSelector"] = json::object{{"disk", "hdd"}};
  EXPECT_FALSE(ParseRequiredNodeAffinity(spec).Matches("n", labels));
  spec["nodeSelector"] = json::object{{"disk", "ssd"}};
  spec["affinity"] = json::object{
      {"nodeAffinity",
       json::object{{"requiredDuringSchedulingIgnoredDuringExecution",
                     json::object{{"nodeSelectorTerms",
                                   json::array{json::object{
                                       {"matchExpressions",
                                        json::array{Req("zone", "NotIn", {"a"})}}}}}}}}}};
  EXPECT_FALSE(ParseRequiredNodeAffinity(spec).Matches("n", labels));
  EXPECT_TRUE(ParseRequiredNodeAffinity(json::object{}).empty());
}

TEST(NodeSelectorTest, PreferredTermsDropZeroWeightsAndEmptyTerms) {
  json::array terms{
      json::object{{"weight", 10},
                   {"preference",
                    json::object{{"matchExpressions", json::array{Req("zone", "In", {"a"})}}}}},
      json::object{{"weight", 0},
                   {"preference",
                    json::object{{"matchExpressions", json::array{Req("zone", "In", {"a"})}}}}},
      json::object{{"weight", 5}, {"preference", json::object{}}}};
  std::vector<PreferredSchedulingTerm> parsed = ParsePreferredSchedulingTerms(&terms);
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].weight, 10);
}

}  // namespace
}  // namespace converge::scheduler
