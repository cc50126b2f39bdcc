#include "client/backoff.h"

#include <gtest/gtest.h>

namespace converge::client {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(BackoffTest, ReflectorSequenceWithoutJitter) {
  util::FakeClock clock;
  Backoff b({.jitter = 0, .clock = &clock});
  std::vector<milliseconds> got;
  for (int i = 0; i < 9; ++i) got.push_back(std::chrono::duration_cast<milliseconds>(b.Next()));
  EXPECT_EQ(got,
            (std::vector<milliseconds>{milliseconds(800), milliseconds(1600), milliseconds(3200),
                                       milliseconds(6400), milliseconds(12800), milliseconds(25600),
                                       seconds(30), seconds(30), seconds(30)}));
}

TEST(BackoffTest, JitterStretchesEachDelayByUpToItsLength) {
  util::FakeClock clock;
  double r = 0.5;
  Backoff b({.clock = &clock, .random = [&] { return r; }});
  EXPECT_EQ(b.Next(), milliseconds(1200));  // 800 + 0.5·800
  r = 0.0;
  EXPECT_EQ(b.Next(), milliseconds(1600));
  r = 0.999;
  util::Clock::Duration d = b.Next();  // base 3200
  EXPECT_GE(d, milliseconds(3200));
  EXPECT_LT(d, milliseconds(6400));
}

TEST(BackoffTest, AHealthyPeriodResetsTheSequence) {
  util::FakeClock clock;
  Backoff b({.jitter = 0, .clock = &clock});
  EXPECT_EQ(b.Next(), milliseconds(800));
  EXPECT_EQ(b.Next(), milliseconds(1600));
  clock.Step(std::chrono::minutes(2));  // exactly the reset period: not yet
  EXPECT_EQ(b.Next(), milliseconds(3200));
  clock.Step(std::chrono::minutes(2) + milliseconds(1));
  EXPECT_EQ(b.Next(), milliseconds(800));
  EXPECT_EQ(b.Next(), milliseconds(1600));
  b.Reset();
  EXPECT_EQ(b.Next(), milliseconds(800));
}

}  // namespace
}  // namespace converge::client
