#include "util/status.h"

#include <gtest/gtest.h>

namespace converge::util {
namespace {

TEST(StatusTest, OkIsDefaultAndCheap) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = Aborted("conflict");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kAborted);
  EXPECT_EQ(s.ToString(), "ABORTED: conflict");
  EXPECT_EQ(s.WithContext("update").message(), "update: conflict");
}

TEST(StatusTest, ReasonRefinesTheCodeAndSurvivesContext) {
  Status s = OutOfRange("too old resource version").WithReason("Expired");
  EXPECT_EQ(s.code(), Code::kOutOfRange);
  EXPECT_EQ(s.reason(), "Expired");
  EXPECT_EQ(s.message(), "too old resource version");
  Status wrapped = s.WithContext("watch");
  EXPECT_EQ(wrapped.reason(), "Expired");
  EXPECT_EQ(wrapped.message(), "watch: too old resource version");
  EXPECT_EQ(OutOfRange("x").reason(), "");
  EXPECT_TRUE(Status().WithReason("Expired").ok());
  EXPECT_EQ(Status().WithReason("Expired").reason(), "");
}

StatusOr<int> Half(int v) {
  if (v % 2) return InvalidArgument("odd");
  return v / 2;
}

Status UseHalf(int v, int* out) {
  CONVERGE_ASSIGN_OR_RETURN(int h, Half(v));
  *out = h;
  return Status();
}

TEST(StatusOrTest, ValueAndErrorPropagate) {
  int out = 0;
  EXPECT_TRUE(UseHalf(4, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = UseHalf(3, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(out, 2);
}

TEST(StatusOrDeathTest, ValueOfErrorAborts) {
  StatusOr<int> v = NotFound("x");
  EXPECT_DEATH((void)v.value(), "NOT_FOUND: x");
}

}  // namespace
}  // namespace converge::util
