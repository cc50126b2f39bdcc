#include "apiserver/crd_status.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace converge::apiserver {
namespace {

namespace json = boost::json;

json::object Crd(const std::string& name, const std::string& names_json,
                 const std::string& accepted_json = "") {
  json::object o;
  o["metadata"] = json::object{{"name", name}};
  o["spec"] = json::object{{"group", "lb.converge.io"}, {"names", json::parse(names_json)}};
  if (!accepted_json.empty()) {
    o["status"] = json::object{{"acceptedNames", json::parse(accepted_json)}};
  }
  return o;
}

struct NamesCase {
  const char* name;
  const char* requested;
  const char* existing;  // another CRD's accepted names, or "" for none
  const char* want_status;
  const char* want_reason;
  const char* want_message;
};

class CrdNamesTest : public ::testing::TestWithParam<NamesCase> {};

TEST_P(CrdNamesTest, Decides) {
  const NamesCase& c = GetParam();
  json::object crd = Crd("x.lb.converge.io", c.requested);
  std::vector<json::object> others;
  if (*c.existing) others.push_back(Crd("other.lb.converge.io", "{}", c.existing));
  // A CRD of another group never conflicts.
  json::object foreign = Crd("y.other.io", "{}", c.requested);
  foreign["spec"].as_object()["group"] = "other.io";
  others.push_back(foreign);
  std::vector<const json::object*> ptrs;
  for (const auto& o : others) ptrs.push_back(&o);
  CrdNamesDecision d = DecideCrdNames(crd, ptrs);
  EXPECT_EQ(d.names_accepted.status, c.want_status);
  EXPECT_EQ(d.names_accepted.reason, c.want_reason);
  EXPECT_EQ(d.names_accepted.message, c.want_message);
  if (std::string(c.want_status) == "True") {
    EXPECT_EQ(d.established.reason, "Installing");
  } else {
    EXPECT_EQ(d.established.reason, "NotAccepted");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CrdNamesTest,
    ::testing::Values(
        NamesCase{"fresh", R"({"plural":"xs","singular":"x","kind":"X","listKind":"XList"})", "",
                  "True", "NoConflicts", "no conflicts found"},
        NamesCase{"plural_taken", R"({"plural":"xs","kind":"X"})", R"({"plural":"xs","kind":"Y"})",
                  "False", "PluralConflict", "\"xs\" is already in use"},
        NamesCase{"singular_taken_by_plural", R"({"plural":"xs","singular":"ys","kind":"X"})",
                  R"({"plural":"ys","kind":"Y"})", "False", "SingularConflict",
                  "\"ys\" is already in use"},
        NamesCase{"short_name_taken", R"({"plural":"xs","kind":"X","shortNames":["a","b"]})",
                  R"({"plural":"ys","kind":"Y","shortNames":["b"]})", "False", "ShortNamesConflict",
                  "\"b\" is already in use"},
        NamesCase{"kind_taken", R"({"plural":"xs","kind":"Y"})", R"({"plural":"ys","kind":"Y"})",
                  "False", "KindConflict", "\"Y\" is already in use"},
        NamesCase{"list_kind_taken", R"({"plural":"xs","kind":"X","listKind":"YList"})",
                  R"({"plural":"ys","kind":"Y","listKind":"YList"})", "False", "ListKindConflict",
                  "\"YList\" is already in use"}),
    [](const ::testing::TestParamInfo<NamesCase>& info) { return info.param.name; });

TEST(CrdNamesTest, ConflictKeepsTheNamesAlreadyAccepted) {
  json::object crd =
      Crd("x.lb.converge.io", R"({"plural":"ys","kind":"X"})", R"({"plural":"xs","kind":"X"})");
  json::object other = Crd("o.lb.converge.io", "{}", R"({"plural":"ys","kind":"Y"})");
  CrdNamesDecision d = DecideCrdNames(crd, {&other});
  EXPECT_EQ(d.accepted_names.at("plural"), "xs");
  EXPECT_EQ(d.names_accepted.reason, "PluralConflict");
}

TEST(CrdConditionTest, TransitionTimeMovesOnlyWithTheStatus) {
  json::object crd;
  SetCrdCondition(crd, {"Established", "False", "Installing", "m"}, "t1");
  SetCrdCondition(crd, {"Established", "False", "Other", "m2"}, "t2");
  const json::object* c = FindCrdCondition(crd, "Established");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->at("lastTransitionTime"), "t1");
  EXPECT_EQ(c->at("reason"), "Other");
  EXPECT_FALSE(IsCrdConditionTrue(crd, "Established"));
  SetCrdCondition(crd, {"Established", "True", "InitialNamesAccepted", "m3"}, "t3");
  EXPECT_EQ(FindCrdCondition(crd, "Established")->at("lastTransitionTime"), "t3");
  EXPECT_TRUE(IsCrdConditionTrue(crd, "Established"));
  EXPECT_EQ(FindCrdCondition(crd, "Terminating"), nullptr);
}

}  // namespace
}  // namespace converge::apiserver
