#include "kubelet/flow_backoff.h"

#include <gtest/gtest.h>

namespace converge::kubelet {
namespace {

using namespace std::chrono_literals;

TEST(FlowBackoffTest, DoublesToTheCapAndExpires) {
  FlowBackoff b(10s, 300s);
  WallTime t0{};
  struct Step {
    Duration at;
    Duration want;
  };
  for (const Step& s : std::vector<Step>{{0s, 10s},
                                         {20s, 20s},
                                         {50s, 40s},
                                         {100s, 80s},
                                         {200s, 160s},
                                         {400s, 300s},
                                         {700s, 300s},
                                         // More than 2·max after the last update: starts over.
                                         {1301s, 10s}}) {
    EXPECT_EQ(b.Next("k", t0 + s.at), s.want) << s.at.count();
  }
  EXPECT_EQ(b.Get("other"), Duration{0});
}

TEST(FlowBackoffTest, InBackOffChecks) {
  FlowBackoff b(10s, 300s);
  WallTime t0{};
  EXPECT_FALSE(b.IsInBackOffSince("k", t0, t0 + 1s)) << "no entry, no backoff";
  b.Next("k", t0);
  EXPECT_TRUE(b.IsInBackOffSince("k", t0, t0 + 9s));
  EXPECT_FALSE(b.IsInBackOffSince("k", t0, t0 + 10s));
  EXPECT_TRUE(b.IsInBackOffSinceUpdate("k", t0 + 9s));
  EXPECT_FALSE(b.IsInBackOffSinceUpdate("k", t0 + 10s));
  WallTime end;
  ASSERT_TRUE(b.EndOfBackOff("k", &end));
  EXPECT_EQ(end, t0 + 10s);
  b.GC(t0 + 601s);
  EXPECT_TRUE(b.empty());
}

}  // namespace
}  // namespace converge::kubelet
