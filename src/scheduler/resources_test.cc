#include "scheduler/resources.h"

#include <gtest/gtest.h>

#include "scheduler/scheduler_test_util.h"

namespace converge::scheduler {
namespace {

using testing::PodBuilder;
namespace json = boost::json;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kMi = int64_t{1} << 20;

TEST(ResourcesTest, ResourceListParsesEveryKind) {
  json::object list{{"cpu", "1500m"},         {"memory", "2Gi"},
                    {"pods", "110"},          {"ephemeral-storage", "10Gi"},
                    {"example.com/gpu", "2"}, {"hugepages-2Mi", "64Mi"},
                    {"unknown-resource", "5"}};
  Resource r = ResourceListToResource(&list);
  EXPECT_EQ(r.milli_cpu, 1500);
  EXPECT_EQ(r.memory, 2 * kGi);
  EXPECT_EQ(r.allowed_pod_number, 110);
  EXPECT_EQ(r.ephemeral_storage, 10 * kGi);
  EXPECT_EQ(r.Scalar("example.com/gpu"), 2);
  EXPECT_EQ(r.Scalar("hugepages-2Mi"), 64 * kMi);
  EXPECT_EQ(r.Scalar("unknown-resource"), 0);
  EXPECT_EQ(r.scalar.size(), 2u);
}

TEST(ResourcesTest, PodRequests) {
  struct Case {
    const char* name;
    PodBuilder pod;
    int64_t cpu;
    int64_t memory;
    int64_t default_cpu;  // with non-missing defaults
    int64_t default_memory;
  };
  std::vector<Case> cases = {
      {"no requests", PodBuilder("a"), 0, 0, 100, 200 * kMi},
      {"one container", PodBuilder("a").Req("500m", "1Gi"), 500, kGi, 500, kGi},
      {"cpu only gets the default memory", PodBuilder("a").Req("500m"), 500, 0, 500, 200 * kMi},
      {"explicit zero stays zero", PodBuilder("a").Req("0", "0"), 0, 0, 0, 0},
      {"containers add up",
       PodBuilder("a").Req("2", "1G").AddContainer({{"cpu", "1"}, {"memory", "1G"}}), 3000,
       2000000000, 3000, 2000000000},
      // The worked example of resources.h: init max {2, 3G} vs containers {3, 2G}.
      {"init containers are a floor",
       PodBuilder("a")
           .Req("2", "1G")
           .AddContainer({{"cpu", "1"}, {"memory", "1G"}})
           .AddInit({{"cpu", "2"}, {"memory", "1G"}})
           .AddInit({{"cpu", "2"}, {"memory", "3G"}}),
       3000, 3000000000, 3000, 3000000000},
      {"a big init container wins", PodBuilder("a").Req("100m", "100Mi").AddInit({{"cpu", "4"}}),
       4000, 100 * kMi, 4000, 200 * kMi},
      // Sidecar {1} runs with the containers {1}: 2; the later init {2} runs next to it: 3.
      {"sidecars add to containers and to later init containers",
       PodBuilder("a").Req("1").AddInit({{"cpu", "1"}}, /*sidecar=*/true).AddInit({{"cpu", "2"}}),
       3000, 0, 3000, 200 * kMi * 2},
      {"an init container before the sidecar runs alone",
       PodBuilder("a").Req("1").AddInit({{"cpu", "2500m"}}).AddInit({{"cpu", "1"}}, true), 2500, 0,
       2500, 200 * kMi * 2},
      {"overhead is added",
       PodBuilder("a")
           .Req("1", "1Gi")
           .Set("overhead", json::object{{"cpu", "250m"}, {"memory", "120Mi"}}),
       1250, kGi + 120 * kMi, 1250, kGi + 120 * kMi},
  };
  for (const Case& c : cases) {
    api::ObjectPtr pod = c.pod.Object();
    const json::object& spec = pod->doc().at("spec").as_object();
    Resource r = PodRequests(spec);
    EXPECT_EQ(r.milli_cpu, c.cpu) << c.name;
    EXPECT_EQ(r.memory, c.memory) << c.name;
    Resource d = PodRequests(spec, /*non_missing_defaults=*/true);
    EXPECT_EQ(d.milli_cpu, c.default_cpu) << c.name;
    EXPECT_EQ(d.memory, c.default_memory) << c.name;
  }
}

TEST(ResourcesTest, ScalarRequestsUseTheMaxRuleToo) {
  PodBuilder pod("a");
  pod.Req("1").AddContainer({{"example.com/gpu", "1"}}).AddInit({{"example.com/gpu", "2"}});
  Resource r = PodRequests(pod.Object()->doc().at("spec").as_object());
  EXPECT_EQ(r.Scalar("example.com/gpu"), 2);
}

}  // namespace
}  // namespace converge::scheduler
