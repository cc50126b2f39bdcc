// The cloud API over real HTTP, called the way the operator calls it (the client library's
// HttpTransport).
#include "cloudsim/cloud_sim.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <thread>

#include "client/http_transport.h"

namespace converge::cloudsim {
namespace {

namespace json = boost::json;

class CloudSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim_ = std::make_unique<CloudSim>(CloudSimOptions{.listen = "127.0.0.1:0"});
    ASSERT_TRUE(sim_->Start().ok());
    auto t = client::HttpTransport::New(
        {.config = {.server = "http://127.0.0.1:" + std::to_string(sim_->port())}});
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    transport_ = std::move(*t);
  }
  void TearDown() override { sim_->Stop(); }

  client::HttpResponse Call(std::string method, std::string path, std::string body = "",
                            client::HeaderList headers = {},
                            std::vector<std::pair<std::string, std::string>> query = {}) {
    auto r = TryCall(std::move(method), std::move(path), std::move(body), std::move(headers),
                     std::move(query));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : client::HttpResponse{};
  }
  util::StatusOr<client::HttpResponse> TryCall(
      std::string method, std::string path, std::string body = "", client::HeaderList headers = {},
      std::vector<std::pair<std::string, std::string>> query = {},
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
    client::HttpRequest req;
    req.method = std::move(method);
    req.path = std::move(path);
    req.body = std::move(body);
    req.headers = std::move(headers);
    if (!req.body.empty()) req.headers.emplace_back("content-type", "application/json");
    req.query = std::move(query);
    req.timeout = timeout;
    return transport_->Do(std::move(req));
  }
  json::object Counters() { return json::parse(Call("GET", "/admin/counters").body).as_object(); }

  std::unique_ptr<CloudSim> sim_;
  std::unique_ptr<client::HttpTransport> transport_;
};

constexpr const char* kBody = R"({"name":"web","tags":{"owner":"u1"},"ports":[{"port":80}]})";

TEST_F(CloudSimTest, CreateGetListDelete) {
  client::HttpResponse created = Call("POST", "/v1/loadbalancers", kBody);
  ASSERT_EQ(created.status, 201) << created.body;
  json::object lb = json::parse(created.body).as_object();
  std::string id(lb.at("id").as_string());
  EXPECT_EQ(lb.at("name"), "web");
  EXPECT_EQ(lb.at("state"), "active");
  EXPECT_FALSE(lb.at("address").as_string().empty());

  client::HttpResponse got = Call("GET", "/v1/loadbalancers/" + id);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(json::parse(got.body).at("id"), json::value(id));

  Call("POST", "/v1/loadbalancers", R"({"name":"other","tags":{"owner":"u2"}})");
  client::HttpResponse listed = Call("GET", "/v1/loadbalancers", "", {}, {{"tag", "owner=u1"}});
  ASSERT_EQ(listed.status, 200);
  json::array items = json::parse(listed.body).at("items").as_array();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].at("id"), json::value(id));
  EXPECT_EQ(json::parse(Call("GET", "/v1/loadbalancers").body).at("items").as_array().size(), 2u);
  EXPECT_EQ(Call("GET", "/v1/loadbalancers", "", {}, {{"tag", "nokey"}}).status, 400);

  client::HttpResponse patched =
      Call("PATCH", "/v1/loadbalancers/" + id, R"({"ports":[{"port":443}]})");
  EXPECT_EQ(patched.status, 200);
  EXPECT_EQ(json::parse(patched.body).at("ports").as_array()[0].at("port"), 443);

  EXPECT_EQ(Call("DELETE", "/v1/loadbalancers/" + id).status, 200);
  EXPECT_EQ(Call("DELETE", "/v1/loadbalancers/" + id).status, 404);
  EXPECT_EQ(Call("GET", "/v1/loadbalancers/" + id).status, 404);
  EXPECT_EQ(Counters().at("liveLoadBalancers"), 1);
  EXPECT_EQ(Call("POST", "/v1/loadbalancers", R"({"tags":{}})").status, 400);
}

TEST_F(CloudSimTest, IdempotencyKeyReplaysTheFirstCreate) {
  client::HttpResponse first =
      Call("POST", "/v1/loadbalancers", kBody, {{"idempotency-key", "uid-1"}});
  client::HttpResponse second =
      Call("POST", "/v1/loadbalancers", kBody, {{"idempotency-key", "uid-1"}});
  EXPECT_EQ(first.status, 201);
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(second.Header("idempotent-replayed"), "true");
  EXPECT_EQ(json::parse(first.body).at("id"), json::parse(second.body).at("id"));
  json::object c = Counters();
  EXPECT_EQ(c.at("creates"), 1);
  EXPECT_EQ(c.at("createCalls"), 2);
  EXPECT_EQ(c.at("idempotentReplays"), 1);
}

TEST_F(CloudSimTest, OutageAndBurstsAnswer5xxWithoutActingAndSpareTheAdminApi) {
  ASSERT_EQ(Call("PUT", "/admin/faults", R"({"outage":true})").status, 200);
  EXPECT_EQ(Call("POST", "/v1/loadbalancers", kBody).status, 503);
  EXPECT_EQ(Call("GET", "/v1/loadbalancers").status, 503);
  EXPECT_EQ(Call("GET", "/admin/loadbalancers").status, 200);
  ASSERT_EQ(Call("PUT", "/admin/faults", R"({"outage":false,"errorBurst":2})").status, 200);
  EXPECT_EQ(Call("POST", "/v1/loadbalancers", kBody).status, 500);
  EXPECT_EQ(Call("POST", "/v1/loadbalancers", kBody).status, 502);
  EXPECT_EQ(Call("POST", "/v1/loadbalancers", kBody).status, 201);
  json::object c = Counters();
  EXPECT_EQ(c.at("creates"), 1);
  EXPECT_EQ(c.at("outageRejections"), 2);
  EXPECT_EQ(c.at("injectedErrors"), 2);
  EXPECT_EQ(Call("PUT", "/admin/faults", R"({"bogus":1})").status, 400);
  EXPECT_EQ(json::parse(Call("GET", "/admin/faults").body).at("outage"), false);
}

TEST_F(CloudSimTest, TimeoutAfterActionPerformsTheCreateButTheClientTimesOut) {
  ASSERT_EQ(
      Call("PUT", "/admin/faults", R"({"timeoutAfterActionProbability":1,"hangMs":60000})").status,
      200);
  auto r = TryCall("POST", "/v1/loadbalancers", kBody, {{"idempotency-key", "uid-9"}}, {},
                   std::chrono::milliseconds(300));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), util::Code::kDeadlineExceeded) << r.status().ToString();
  // The create happened although the client never heard of it. (The server may still be on its
  // way to performing it when the client gives up on a slow machine: wait for it, no timing.)
  while (Counters().at("creates") != 1) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  json::array items =
      json::parse(Call("GET", "/admin/loadbalancers", "", {}, {{"tag", "owner=u1"}}).body)
          .at("items")
          .as_array();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(Counters().at("injectedTimeouts"), 1);
  // The stalled call is woken by Stop (TearDown), so the test does not wait out the hang.
}

}  // namespace
}  // namespace converge::cloudsim
