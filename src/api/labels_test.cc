#include "api/labels.h"

#include <gtest/gtest.h>

namespace converge::api {
namespace {

namespace json = boost::json;

json::object Labels(std::initializer_list<std::pair<const char*, const char*>> kv) {
  json::object o;
  for (auto& [k, v] : kv) o[k] = v;
  return o;
}

struct MatchCase {
  const char* name;
  const char* selector;
  json::object labels;
  bool want;
};

TEST(LabelSelectorTest, ParseAndMatch) {
  const json::object web = Labels({{"app", "web"}, {"tier", "front"}, {"n", "5"}});
  const std::vector<MatchCase> cases = {
      {"empty matches all", "", web, true},
      {"equals", "app=web", web, true},
      {"double equals", "app==web", web, true},
      {"equals other value", "app=db", web, false},
      {"not equals present", "app!=db", web, true},
      {"not equals absent key matches", "missing!=x", web, true},
      {"in", "tier in (back,front)", web, true},
      {"in miss", "tier in (back)", web, false},
      {"notin absent matches", "zone notin (a)", web, true},
      {"notin hit", "tier notin (front)", web, false},
      {"exists", "tier", web, true},
      {"exists absent", "zone", web, false},
      {"does not exist", "!zone", web, true},
      {"does not exist present", "!app", web, false},
      {"and of terms", "app=web,tier=front", web, true},
      {"and fails on one", "app=web,tier=back", web, false},
      {"gt", "n>3", web, true},
      {"lt", "n<3", web, false},
      {"spaces tolerated", " app = web , tier in ( front ) ", web, true},
      {"prefixed key", "example.com/role=x", Labels({{"example.com/role", "x"}}), true},
      {"empty value", "app=", Labels({{"app", ""}}), true},
  };
  for (const auto& c : cases) {
    auto sel = LabelSelector::Parse(c.selector);
    ASSERT_TRUE(sel.ok()) << c.name << ": " << sel.status().ToString();
    EXPECT_EQ(sel->Matches(&c.labels), c.want) << c.name;
  }
}

TEST(LabelSelectorTest, RejectsBadInput) {
  for (const char* bad : {"app=web,", "a b", "!app=x", "app in", "app in (a", "app=a b", "-bad=x",
                          "app="
                          "-x",
                          "n>abc", "x==(", "=x"}) {
    auto sel = LabelSelector::Parse(bad);
    EXPECT_FALSE(sel.ok()) << bad;
    if (!sel.ok()) {
      EXPECT_EQ(sel.status().code(), util::Code::kInvalidArgument) << bad;
    }
  }
}

TEST(LabelSelectorTest, CanonicalString) {
  auto sel = LabelSelector::Parse("tier in (b,a),app=web,!x");
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->ToString(), "app=web,tier in (a,b),!x");
}

TEST(LabelSelectorTest, FromLabelSelectorObject) {
  json::value v = json::parse(
      R"({"matchLabels":{"app":"web"},"matchExpressions":[{"key":"env","operator":"In","values":["prod","dev"]}]})");
  auto sel = LabelSelector::FromLabelSelector(&v);
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->ToString(), "app=web,env in (dev,prod)");
  json::object l = Labels({{"app", "web"}, {"env", "dev"}});
  EXPECT_TRUE(sel->Matches(&l));
  // A null selector matches nothing; an empty one matches everything.
  auto none = LabelSelector::FromLabelSelector(nullptr);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->Matches(&l));
  json::value empty = json::object();
  auto all = LabelSelector::FromLabelSelector(&empty);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->Matches(&l));
  json::value bad = json::parse(R"({"matchExpressions":[{"key":"a","operator":"Near"}]})");
  EXPECT_FALSE(LabelSelector::FromLabelSelector(&bad).ok());
}

}  // namespace
}  // namespace converge::api
