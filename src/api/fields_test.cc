#include "api/fields.h"

#include <gtest/gtest.h>

#include <map>

namespace converge::api {
namespace {

TEST(FieldSelectorTest, ParseAndMatch) {
  std::map<std::string, std::string, std::less<>> obj = {
      {"metadata.name", "web"}, {"status.phase", "Running"}, {"spec.nodeName", "a,b"}};
  auto get = [&](std::string_view f) {
    auto it = obj.find(f);
    return it == obj.end() ? std::string() : it->second;
  };
  struct Case {
    const char* sel;
    bool want;
  } cases[] = {
      {"", true},
      {"metadata.name=web", true},
      {"metadata.name==web", true},
      {"metadata.name!=web", false},
      {"metadata.name=web,status.phase=Running", true},
      {"metadata.name=web,status.phase!=Running", false},
      {"spec.nodeName=a\\,b", true},
      {"spec.nodeName=", false},
      {"other=", true},
  };
  for (const auto& c : cases) {
    auto sel = FieldSelector::Parse(c.sel);
    ASSERT_TRUE(sel.ok()) << c.sel;
    EXPECT_EQ(sel->Matches(get), c.want) << c.sel;
  }
}

TEST(FieldSelectorTest, RejectsBadInput) {
  for (const char* bad : {"metadata.name", "a=b=c", "a=b\\"}) {
    EXPECT_FALSE(FieldSelector::Parse(bad).ok()) << bad;
  }
}

TEST(FieldSelectorTest, RequiredValueAndString) {
  auto sel = FieldSelector::Parse("involvedObject.name=web,involvedObject.uid!=x");
  ASSERT_TRUE(sel.ok());
  ASSERT_NE(sel->RequiredValue("involvedObject.name"), nullptr);
  EXPECT_EQ(*sel->RequiredValue("involvedObject.name"), "web");
  EXPECT_EQ(sel->RequiredValue("involvedObject.uid"), nullptr);
  EXPECT_EQ(sel->ToString(), "involvedObject.name=web,involvedObject.uid!=x");
}

}  // namespace
}  // namespace converge::api
