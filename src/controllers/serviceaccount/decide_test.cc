#include "controllers/serviceaccount/decide.h"

#include <gtest/gtest.h>

#include <set>

namespace converge::controllers::serviceaccount {
namespace {

api::Object Namespace(const std::string& phase, bool deleting = false) {
  api::Object ns;
  ns.SetGvk({"", "v1", "Namespace"});
  ns.set_name("team");
  ns.mutable_doc()["status"] = boost::json::object{{"phase", phase}};
  if (deleting) ns.mutable_metadata()["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  return ns;
}

TEST(MissingServiceAccountsTest, CreatesWhatAnActiveNamespaceLacks) {
  std::set<std::string> have = {"builder"};
  auto exists = [&](const std::string& n) { return have.count(n) > 0; };
  EXPECT_EQ(MissingServiceAccounts(Namespace("Active"), {"default", "builder"}, exists),
            std::vector<std::string>{"default"});
  have.insert("default");
  EXPECT_TRUE(MissingServiceAccounts(Namespace("Active"), {"default"}, exists).empty());
}

TEST(MissingServiceAccountsTest, NothingForATerminatingNamespace) {
  auto none = [](const std::string&) { return false; };
  EXPECT_TRUE(MissingServiceAccounts(Namespace("Terminating"), {"default"}, none).empty());
  EXPECT_TRUE(MissingServiceAccounts(Namespace("Active", true), {"default"}, none).empty());
}

TEST(NewServiceAccountTest, NamesAndKind) {
  api::Object sa = NewServiceAccount("team", "default");
  EXPECT_EQ(sa.name(), "default");
  EXPECT_EQ(sa.namespace_(), "team");
  EXPECT_EQ(sa.Gvk().kind, "ServiceAccount");
}

}  // namespace
}  // namespace converge::controllers::serviceaccount
