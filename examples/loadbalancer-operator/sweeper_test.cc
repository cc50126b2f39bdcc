#include "sweeper.h"

#include <gtest/gtest.h>

namespace lboperator {
namespace {

ExternalLoadBalancer Lb(std::string id, std::string uid, std::string object) {
  ExternalLoadBalancer lb{.id = std::move(id)};
  lb.tags[kTagManagedBy] = kManagedByValue;
  if (!uid.empty()) lb.tags[kTagUid] = std::move(uid);
  if (!object.empty()) lb.tags[kTagObject] = std::move(object);
  return lb;
}

std::vector<std::string> Ids(const std::vector<ExternalLoadBalancer>& lbs) {
  std::vector<std::string> out;
  for (const ExternalLoadBalancer& lb : lbs) out.push_back(lb.id);
  return out;
}

TEST(FindOrphansTest, OnlyLoadBalancersOfObjectsThatAreGone) {
  std::vector<ExternalLoadBalancer> managed = {
      Lb("lb-1", "live", "a/x"),
      Lb("lb-2", "gone", "a/y"),
      Lb("lb-3", "", "a/z"),  // no UID tag: not provably ours, never touched
      Lb("lb-4", "gone-too", "b/w"),
  };
  EXPECT_EQ(Ids(FindOrphans(managed, {"live"}, "")), (std::vector<std::string>{"lb-2", "lb-4"}));
  // An operator restricted to namespace a judges only a's load balancers.
  EXPECT_EQ(Ids(FindOrphans(managed, {"live"}, "a")), (std::vector<std::string>{"lb-2"}));
  EXPECT_TRUE(FindOrphans(managed, {"live", "gone", "gone-too"}, "").empty());
}

}  // namespace
}  // namespace lboperator
