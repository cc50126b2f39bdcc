#include "cloudsim/load_balancers.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace converge::cloudsim {
namespace {

LoadBalancer Spec(const std::string& name, Tags tags = {}) {
  return {.name = name, .tags = std::move(tags), .ports = {{.port = 80}}};
}

TEST(LoadBalancerStoreTest, SameIdempotencyKeySameLoadBalancer) {
  util::FakeClock clock;
  LoadBalancerStore store({.clock = &clock});
  auto first = store.Create(Spec("a"), "key-1");
  auto again = store.Create(Spec("a"), "key-1");
  EXPECT_TRUE(first.created);
  EXPECT_FALSE(again.created);
  EXPECT_EQ(first.lb.id, again.lb.id);
  EXPECT_EQ(first.lb.address, again.lb.address);
  auto other = store.Create(Spec("a"), "key-2");
  EXPECT_TRUE(other.created);
  EXPECT_NE(other.lb.id, first.lb.id);
  EXPECT_NE(other.lb.address, first.lb.address);
  // Without a key every create is a new load balancer.
  EXPECT_NE(store.Create(Spec("b"), "").lb.id, store.Create(Spec("b"), "").lb.id);
  LoadBalancerStore::Counters c = store.counters();
  EXPECT_EQ(c.creates, 4);
  EXPECT_EQ(c.idempotent_replays, 1);
  EXPECT_EQ(c.live, 4);
}

TEST(LoadBalancerStoreTest, DeleteFreesTheKeyAndIsNotFoundTheSecondTime) {
  LoadBalancerStore store({});
  auto first = store.Create(Spec("a"), "key");
  EXPECT_TRUE(store.Delete(first.lb.id));
  EXPECT_FALSE(store.Delete(first.lb.id));
  EXPECT_FALSE(store.Get(first.lb.id).has_value());
  auto second = store.Create(Spec("a"), "key");
  EXPECT_TRUE(second.created);
  EXPECT_NE(second.lb.id, first.lb.id);
  EXPECT_EQ(store.counters().deletes, 1);
  EXPECT_EQ(store.counters().live, 1);
}

TEST(LoadBalancerStoreTest, ListFiltersByEveryTagInCreationOrder) {
  LoadBalancerStore store({});
  std::string a = store.Create(Spec("a", {{"team", "x"}, {"env", "prod"}}), "").lb.id;
  std::string b = store.Create(Spec("b", {{"team", "x"}, {"env", "dev"}}), "").lb.id;
  store.Create(Spec("c", {{"team", "y"}}), "");
  auto ids = [](const std::vector<LoadBalancer>& lbs) {
    std::vector<std::string> out;
    for (const LoadBalancer& lb : lbs) out.push_back(lb.id);
    return out;
  };
  EXPECT_EQ(ids(store.List({{"team", "x"}})), (std::vector<std::string>{a, b}));
  EXPECT_EQ(ids(store.List({{"team", "x"}, {"env", "dev"}})), (std::vector<std::string>{b}));
  EXPECT_TRUE(store.List({{"team", "z"}}).empty());
  EXPECT_EQ(store.List({}).size(), 3u);
}

TEST(LoadBalancerStoreTest, ProvisioningUntilTheDelayPasses) {
  util::FakeClock clock;
  LoadBalancerStore store({.provisioning_delay = std::chrono::seconds(2), .clock = &clock});
  auto c = store.Create(Spec("a"), "");
  EXPECT_EQ(c.lb.state, "provisioning");
  clock.Step(std::chrono::seconds(1));
  EXPECT_EQ(store.Get(c.lb.id)->state, "provisioning");
  clock.Step(std::chrono::seconds(1));
  EXPECT_EQ(store.Get(c.lb.id)->state, "active");
}

TEST(LoadBalancerStoreTest, UpdatePortsReplacesThem) {
  LoadBalancerStore store({});
  auto c = store.Create(Spec("a"), "");
  auto updated = store.UpdatePorts(c.lb.id, {{.port = 443, .protocol = "TCP"}});
  ASSERT_TRUE(updated.has_value());
  EXPECT_EQ(store.Get(c.lb.id)->ports, (std::vector<Port>{{443, "TCP"}}));
  EXPECT_FALSE(store.UpdatePorts("lb-missing", {}).has_value());
}

TEST(ParseCreateBodyTest, Table) {
  struct Case {
    const char* name;
    const char* body;
    bool ok;
  };
  const Case cases[] = {
      {"minimal", R"({"name":"a"})", true},
      {"full",
       R"({"name":"a","tags":{"k":"v"},"ports":[{"port":80},{"port":53,"protocol":"UDP"}]})", true},
      {"no name", R"({"tags":{}})", false},
      {"tag value not a string", R"({"name":"a","tags":{"k":1}})", false},
      {"port out of range", R"({"name":"a","ports":[{"port":70000}]})", false},
      {"bad protocol", R"({"name":"a","ports":[{"port":80,"protocol":"SCTP"}]})", false},
      {"ports not an array", R"({"name":"a","ports":{}})", false},
  };
  for (const Case& c : cases) {
    auto lb = ParseCreateBody(boost::json::parse(c.body).as_object());
    EXPECT_EQ(lb.ok(), c.ok) << c.name << ": " << lb.status().ToString();
  }
  auto lb = ParseCreateBody(boost::json::parse(cases[1].body).as_object());
  ASSERT_TRUE(lb.ok());
  EXPECT_EQ(lb->ports, (std::vector<Port>{{80, "TCP"}, {53, "UDP"}}));
  EXPECT_EQ(lb->tags, (Tags{{"k", "v"}}));
}

}  // namespace
}  // namespace converge::cloudsim
