#include "client/api_errors.h"

#include <gtest/gtest.h>

namespace converge::client {
namespace {

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
         message + R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + "}";
}

TEST(ApiErrorsTest, StatusBodiesMapToCodesAndKeepTheirReason) {
  struct Case {
    int http;
    const char* reason;
    util::Code code;
    bool (*predicate)(const util::Status&);
  };
  const Case cases[] = {
      {404, "NotFound", util::Code::kNotFound, IsNotFound},
      {409, "AlreadyExists", util::Code::kAlreadyExists, IsAlreadyExists},
      {409, "Conflict", util::Code::kAborted, IsConflict},
      {422, "Invalid", util::Code::kInvalidArgument, IsInvalid},
      {400, "BadRequest", util::Code::kInvalidArgument, IsBadRequest},
      {410, "Expired", util::Code::kOutOfRange, IsExpired},
      {410, "Gone", util::Code::kOutOfRange, IsGone},
      {429, "TooManyRequests", util::Code::kUnavailable, IsTooManyRequests},
      {500, "ServerTimeout", util::Code::kUnavailable, IsServerTimeout},
      {503, "ServiceUnavailable", util::Code::kUnavailable, IsServiceUnavailable},
      {504, "Timeout", util::Code::kDeadlineExceeded, IsTimeout},
      {401, "Unauthorized", util::Code::kUnauthenticated, IsUnauthorized},
      {403, "Forbidden", util::Code::kPermissionDenied, IsForbidden},
      {405, "MethodNotAllowed", util::Code::kUnimplemented, IsMethodNotSupported},
      {500, "InternalError", util::Code::kInternal, IsInternalError},
  };
  for (const Case& c : cases) {
    util::Status s = StatusFromResponse(c.http, StatusBody(c.http, c.reason, "msg"));
    EXPECT_EQ(s.code(), c.code) << c.reason;
    EXPECT_EQ(s.reason(), c.reason);
    EXPECT_EQ(s.message(), "msg");
    EXPECT_TRUE(c.predicate(s)) << c.reason;
  }
}

TEST(ApiErrorsTest, PredicatesDoNotConfuseReasonsThatShareACode) {
  util::Status conflict = StatusFromResponse(409, StatusBody(409, "Conflict", "x"));
  util::Status exists = StatusFromResponse(409, StatusBody(409, "AlreadyExists", "x"));
  EXPECT_FALSE(IsAlreadyExists(conflict));
  EXPECT_FALSE(IsConflict(exists));
  util::Status throttled = StatusFromResponse(429, StatusBody(429, "TooManyRequests", "x"));
  EXPECT_FALSE(IsServiceUnavailable(throttled));
  util::Status invalid = StatusFromResponse(422, StatusBody(422, "Invalid", "x"));
  EXPECT_FALSE(IsBadRequest(invalid));
  EXPECT_TRUE(IsExpired(StatusFromResponse(410, StatusBody(410, "Gone", "x"))));
  EXPECT_FALSE(IsGone(StatusFromResponse(410, StatusBody(410, "Expired", "x"))));
}

TEST(ApiErrorsTest, NonStatusBodiesGetTheReasonOfTheirHttpCode) {
  util::Status s = StatusFromResponse(404, "404 page not found");
  EXPECT_TRUE(IsNotFound(s));
  EXPECT_EQ(s.reason(), "NotFound");
  EXPECT_NE(s.message().find("404 page not found"), std::string::npos);
  EXPECT_TRUE(IsTooManyRequests(StatusFromResponse(429, "")));
  EXPECT_EQ(StatusFromResponse(418, "").code(), util::Code::kInvalidArgument);
  EXPECT_EQ(StatusFromResponse(502, "").code(), util::Code::kInternal);
}

TEST(ApiErrorsTest, TooLargeResourceVersionIsFoundInTheCauses) {
  std::string body =
      R"({"kind":"Status","status":"Failure","message":"Timeout: too large",)"
      R"("reason":"Timeout","code":504,"details":{"causes":[)"
      R"({"reason":"ResourceVersionTooLarge","message":"Too large resource version"}]}})";
  util::Status s = StatusFromResponse(504, body);
  EXPECT_TRUE(IsTimeout(s));
  EXPECT_TRUE(IsTooLargeResourceVersion(s));
  EXPECT_FALSE(IsTooLargeResourceVersion(StatusFromResponse(504, StatusBody(504, "Timeout", "x"))));
}

TEST(ApiErrorsTest, RetriableWatchErrors) {
  EXPECT_TRUE(IsRetriableWatchError(util::Unavailable("connection refused")));
  EXPECT_TRUE(IsRetriableWatchError(StatusFromResponse(429, "")));
  EXPECT_TRUE(IsRetriableWatchError(StatusFromResponse(503, "")));
  EXPECT_FALSE(IsRetriableWatchError(StatusFromResponse(410, StatusBody(410, "Expired", "x"))));
  EXPECT_FALSE(IsRetriableWatchError(StatusFromResponse(403, "")));
  EXPECT_FALSE(
      IsRetriableWatchError(StatusFromResponse(500, StatusBody(500, "ServerTimeout", ""))));
  EXPECT_TRUE(IsRetriable(StatusFromResponse(500, StatusBody(500, "ServerTimeout", ""))));
}

}  // namespace
}  // namespace converge::client
