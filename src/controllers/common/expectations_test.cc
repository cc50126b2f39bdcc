#include "controllers/common/expectations.h"

#include <gtest/gtest.h>

namespace converge::controllers {
namespace {

const api::ObjectKey kRs{"default", "web"};

TEST(ExpectationsTest, NoRecordIsSatisfied) {
  util::FakeClock clock;
  ControllerExpectations e({.clock = &clock});
  EXPECT_TRUE(e.SatisfiedExpectations(kRs));
  EXPECT_FALSE(e.Get(kRs).has_value());
}

TEST(ExpectationsTest, CreationsMustAllBeObserved) {
  util::FakeClock clock;
  ControllerExpectations e({.clock = &clock});
  e.ExpectCreations(kRs, 3);
  EXPECT_FALSE(e.SatisfiedExpectations(kRs));
  e.CreationObserved(kRs);
  e.CreationObserved(kRs);
  EXPECT_FALSE(e.SatisfiedExpectations(kRs));
  e.CreationObserved(kRs);
  EXPECT_TRUE(e.SatisfiedExpectations(kRs));
  // Extra observations (a pod created by someone else) keep it satisfied.
  e.CreationObserved(kRs);
  EXPECT_TRUE(e.SatisfiedExpectations(kRs));
}

TEST(ExpectationsTest, DeletionsCountEachKeyOnce) {
  util::FakeClock clock;
  ControllerExpectations e({.clock = &clock});
  e.ExpectDeletions(kRs, {{"default", "p1"}, {"default", "p2"}});
  EXPECT_EQ(e.Get(kRs)->dels, 2);
  // p1 seen twice (deletionTimestamp set, then the delete): counted once.
  e.DeletionObserved(kRs, {"default", "p1"});
  e.DeletionObserved(kRs, {"default", "p1"});
  EXPECT_EQ(e.Get(kRs)->dels, 1);
  EXPECT_FALSE(e.SatisfiedExpectations(kRs));
  // A pod that was not expected does not count.
  e.DeletionObserved(kRs, {"default", "other"});
  EXPECT_FALSE(e.SatisfiedExpectations(kRs));
  e.DeletionObserved(kRs, {"default", "p2"});
  EXPECT_TRUE(e.SatisfiedExpectations(kRs));
}

TEST(ExpectationsTest, ExpireAfterTtl) {
  util::FakeClock clock;
  ControllerExpectations e({.clock = &clock});
  e.ExpectCreations(kRs, 1);
  clock.Step(kExpectationsTimeout);
  EXPECT_FALSE(e.SatisfiedExpectations(kRs)) << "exactly at the TTL it still holds";
  clock.Step(std::chrono::milliseconds(1));
  EXPECT_TRUE(e.SatisfiedExpectations(kRs));
}

TEST(ExpectationsTest, SetReplacesAndDeleteForgets) {
  util::FakeClock clock;
  ControllerExpectations e({.clock = &clock});
  e.ExpectDeletions(kRs, {{"default", "p1"}});
  e.ExpectCreations(kRs, 2);  // replaces the deletion record
  EXPECT_EQ(e.Get(kRs)->dels, 0);
  EXPECT_EQ(e.Get(kRs)->adds, 2);
  e.DeletionObserved(kRs, {"default", "p1"});
  EXPECT_EQ(e.Get(kRs)->dels, 0) << "keys of a replaced record are forgotten";
  e.LowerExpectations(kRs, 2, 0);
  EXPECT_TRUE(e.SatisfiedExpectations(kRs));
  e.RaiseExpectations(kRs, 1, 0);
  EXPECT_FALSE(e.SatisfiedExpectations(kRs));
  e.DeleteExpectations(kRs);
  EXPECT_TRUE(e.SatisfiedExpectations(kRs));
  EXPECT_FALSE(e.Get(kRs).has_value());
}

}  // namespace
}  // namespace converge::controllers
