#include "apiserver/audit.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>

namespace converge::apiserver {
namespace {

namespace json = boost::json;

TEST(BuildAuditEventTest, ImpersonatedForbiddenRequest) {
  Request req;
  req.method = "DELETE";
  req.path = "/apis/apps/v1/namespaces/team/deployments/web";
  req.query = {{"dryRun", "All"}, {"labelSelector", "a=b c"}};
  req.headers = {{"user-agent", "kubectl/v1.30"}};
  req.remote_address = "10.1.2.3:40000";
  RequestInfo ri = ParseRequestInfo(req);
  AuditRecord r;
  r.audit_id = "00000000-0000-4000-8000-000000000000";
  r.request = &req;
  r.info = &ri;
  r.user = {"admin", "u1", {"system:masters"}, true};
  r.impersonated = UserInfo{"alice", "", {"dev"}, true};
  r.code = 403;
  r.response_body =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","message":"no","code":403})";
  r.received = util::WallTime(std::chrono::microseconds(1700000000123456));
  r.stage_time = r.received + std::chrono::microseconds(5);
  json::object ev = json::parse(BuildAuditEvent(r)).as_object();
  EXPECT_EQ(ev.at("kind"), "Event");
  EXPECT_EQ(ev.at("apiVersion"), "audit.k8s.io/v1");
  EXPECT_EQ(ev.at("level"), "Metadata");
  EXPECT_EQ(ev.at("stage"), "ResponseComplete");
  EXPECT_EQ(ev.at("verb"), "delete");
  EXPECT_EQ(ev.at("requestURI"),
            "/apis/apps/v1/namespaces/team/deployments/web?dryRun=All&labelSelector=a%3Db%20c");
  EXPECT_EQ(ev.at("user").at("username"), "admin");
  EXPECT_EQ(ev.at("user").at("uid"), "u1");
  EXPECT_EQ(ev.at("impersonatedUser").at("username"), "alice");
  EXPECT_EQ(ev.at("sourceIPs").as_array().at(0), "10.1.2.3");
  EXPECT_EQ(ev.at("userAgent"), "kubectl/v1.30");
  const json::object& ref = ev.at("objectRef").as_object();
  EXPECT_EQ(ref.at("resource"), "deployments");
  EXPECT_EQ(ref.at("namespace"), "team");
  EXPECT_EQ(ref.at("name"), "web");
  EXPECT_EQ(ref.at("apiGroup"), "apps");
  EXPECT_EQ(ref.at("apiVersion"), "v1");
  EXPECT_FALSE(ref.contains("subresource"));
  const json::object& st = ev.at("responseStatus").as_object();
  EXPECT_EQ(st.at("code"), 403);
  EXPECT_EQ(st.at("status"), "Failure");
  EXPECT_EQ(st.at("reason"), "Forbidden");
  EXPECT_EQ(st.at("message"), "no");
  EXPECT_EQ(ev.at("requestReceivedTimestamp"), "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(ev.at("stageTimestamp"), "2023-11-14T22:13:20.123461Z");
}

TEST(BuildAuditEventTest, SuccessHasOnlyTheCode) {
  Request req;
  req.method = "GET";
  req.path = "/healthz";
  RequestInfo ri = ParseRequestInfo(req);
  AuditRecord r;
  r.request = &req;
  r.info = &ri;
  r.code = 200;
  r.response_body = "ok";
  json::object ev = json::parse(BuildAuditEvent(r)).as_object();
  EXPECT_FALSE(ev.contains("objectRef"));
  EXPECT_FALSE(ev.contains("impersonatedUser"));
  EXPECT_EQ(ev.at("responseStatus").as_object().size(), 2u);  // metadata, code
}

TEST(AuditLogFileTest, WritesEveryQueuedLineBeforeStopReturns) {
  auto path = std::filesystem::temp_directory_path() /
              ("audit-test-" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(path);
  AuditLogFile file({.path = path.string()});
  file.Write("dropped-before-start");
  ASSERT_TRUE(file.Start().ok());
  for (int i = 0; i < 100; ++i) file.Write("{\"n\":" + std::to_string(i) + "}");
  file.Stop();
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    EXPECT_EQ(line, "{\"n\":" + std::to_string(n) + "}");
    ++n;
  }
  EXPECT_EQ(n, 100);
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace converge::apiserver
