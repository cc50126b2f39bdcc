#include <gtest/gtest.h>

#include "apiserver/strategy.h"
#include "apiserver/strategy_test_util.h"

namespace converge::apiserver {
namespace {

using testing::Create;
using testing::Info;
using testing::Obj;
using testing::Update;
using Lines = std::vector<std::string>;

TEST(LeaseStrategyTest, Validation) {
  auto s = MakeStrategy(Info("coordination.k8s.io", "v1", "leases", "Lease"));
  struct Case {
    const char* name;
    const char* spec;
    Lines want;
  };
  const Case cases[] = {
      {"node lease",
       R"({"holderIdentity":"node-1","leaseDurationSeconds":40,"renewTime":"2026-01-01T00:00:00.000000Z"})",
       {}},
      {"empty spec", "{}", {}},
      {"zero duration",
       R"({"leaseDurationSeconds":0})",
       {"spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"}},
      {"negative transitions",
       R"({"leaseTransitions":-1})",
       {"spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"}},
      {"unknown strategy",
       R"({"strategy":"Newest"})",
       {R"(spec.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion")"}},
      {"qualified strategy", R"({"strategy":"example.com/mine"})", {}},
      {"preferred holder needs a strategy",
       R"({"preferredHolder":"a"})",
       {"spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"}},
  };
  for (const Case& c : cases) {
    api::Object lease = Obj(R"({"metadata":{"name":"node-1","namespace":"kube-node-lease"}})");
    lease.mutable_doc()["spec"] = boost::json::parse(c.spec);
    EXPECT_EQ(Create(*s, lease), c.want) << c.name;
  }
  api::Object old =
      Obj(R"({"metadata":{"name":"l","namespace":"d"},"spec":{"holderIdentity":"a"}})");
  api::Object upd = Obj(
      R"({"metadata":{"name":"l","namespace":"d"},"spec":{"holderIdentity":"b","leaseDurationSeconds":-5}})");
  EXPECT_EQ(Update(*s, upd, old),
            Lines{"spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0"});
}

}  // namespace
}  // namespace converge::apiserver
