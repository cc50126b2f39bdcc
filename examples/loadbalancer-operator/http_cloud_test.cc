// HttpCloud speaks the cloud-sim API and maps its answers to cloud.h's codes.
#include "http_cloud.h"

#include <gtest/gtest.h>

#include "client/fake_transport.h"

namespace lboperator {
namespace {

using client::FakeTransport;
using client::HttpRequest;
using client::HttpResponse;

constexpr const char* kLb =
    R"({"id":"lb-1","name":"default-web","tags":{"lb.converge.io/uid":"u"},
        "ports":[{"port":80,"protocol":"TCP"}],"address":"100.64.0.1","state":"active"})";

TEST(HttpCloudTest, CreateSendsTheIdempotencyKeyAndParsesTheAnswer) {
  auto fake =
      std::make_shared<FakeTransport>([](const HttpRequest&) -> util::StatusOr<HttpResponse> {
        return FakeTransport::Json(201, kLb);
      });
  HttpCloud cloud({.transport = fake, .timeout = std::chrono::milliseconds(1500)});
  util::StatusOr<ExternalLoadBalancer> lb = cloud.Create({.name = "default-web",
                                                          .tags = {{"k", "v"}},
                                                          .ports = {{80, "TCP"}},
                                                          .idempotency_key = "lb-u"},
                                                         {});
  ASSERT_TRUE(lb.ok()) << lb.status().ToString();
  EXPECT_EQ(lb->id, "lb-1");
  EXPECT_EQ(lb->address, "100.64.0.1");
  EXPECT_EQ(lb->ports, (std::vector<Port>{{80, "TCP"}}));
  std::vector<HttpRequest> sent = fake->requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].method, "POST");
  EXPECT_EQ(sent[0].path, "/v1/loadbalancers");
  EXPECT_EQ(client::FindHeader(sent[0].headers, "idempotency-key"), "lb-u");
  EXPECT_EQ(sent[0].timeout, std::chrono::milliseconds(1500));
  auto body = boost::json::parse(sent[0].body).as_object();
  EXPECT_EQ(body.at("tags").at("k"), "v");
}

TEST(HttpCloudTest, ListFiltersByTag) {
  auto fake =
      std::make_shared<FakeTransport>([](const HttpRequest&) -> util::StatusOr<HttpResponse> {
        return FakeTransport::Json(200, std::string(R"({"items":[)") + kLb + "]}");
      });
  HttpCloud cloud({.transport = fake});
  auto lbs = cloud.ListByTag("lb.converge.io/uid", "u", {});
  ASSERT_TRUE(lbs.ok());
  ASSERT_EQ(lbs->size(), 1u);
  EXPECT_EQ((*lbs)[0].tags.at("lb.converge.io/uid"), "u");
  ASSERT_EQ(fake->requests()[0].query.size(), 1u);
  EXPECT_EQ(fake->requests()[0].query[0],
            (std::pair<std::string, std::string>{"tag", "lb.converge.io/uid=u"}));
}

TEST(HttpCloudTest, ErrorsMapToWhatTheCallerShouldDo) {
  struct Case {
    const char* name;
    util::StatusOr<HttpResponse> answer;
    util::Code want;
  };
  const Case cases[] = {
      {"503", FakeTransport::Json(503, R"({"error":{"code":"ServiceUnavailable","message":"x"}})"),
       util::Code::kUnavailable},
      {"500", FakeTransport::Json(500, "{}"), util::Code::kUnavailable},
      {"404", FakeTransport::Json(404, "{}"), util::Code::kNotFound},
      {"400", FakeTransport::Json(400, "{}"), util::Code::kInvalidArgument},
      {"timeout: outcome unknown", util::DeadlineExceeded("deadline"),
       util::Code::kDeadlineExceeded},
      {"connection refused", util::Unavailable("refused"), util::Code::kUnavailable},
  };
  for (const Case& c : cases) {
    auto fake = std::make_shared<FakeTransport>(
        [&](const HttpRequest&) -> util::StatusOr<HttpResponse> { return c.answer; });
    HttpCloud cloud({.transport = fake});
    EXPECT_EQ(cloud.Delete("lb-1", {}).code(), c.want) << c.name;
    EXPECT_EQ(cloud.Create({.name = "n"}, {}).status().code(), c.want) << c.name;
    EXPECT_TRUE(IsCloudUnavailable(util::Status(c.want, "")) ==
                (c.want == util::Code::kUnavailable || c.want == util::Code::kDeadlineExceeded))
        << c.name;
  }
}

}  // namespace
}  // namespace lboperator
