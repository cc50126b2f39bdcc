#include "client/rest_client.h"

#include <gtest/gtest.h>

#include <thread>

#include "client/api_errors.h"
#include "client/fake_transport.h"

namespace converge::client {
namespace {

const api::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
const api::GroupVersionResource kDeployments{"apps", "v1", "deployments"};
const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};

std::string Query(const HttpRequest& r) {
  std::string out;
  for (const auto& [k, v] : r.query) out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

api::Object ConfigMap(const std::string& ns, const std::string& name) {
  api::Object o;
  o.SetGvk({"", "v1", "ConfigMap"});
  o.set_namespace(ns);
  o.set_name(name);
  return o;
}

class RestClientTest : public ::testing::Test {
 protected:
  RestClientTest()
      : fake_(std::make_shared<FakeTransport>([this](const HttpRequest& r) { return Answer(r); })),
        client_({.transport = fake_}) {}

  util::StatusOr<HttpResponse> Answer(const HttpRequest& r) {
    if (!answers_.empty()) {
      HttpResponse a = answers_.front();
      answers_.erase(answers_.begin());
      return a;
    }
    (void)r;
    return FakeTransport::Json(200, R"({"kind":"ConfigMap","apiVersion":"v1",)"
                                    R"("metadata":{"name":"x","resourceVersion":"7"}})");
  }

  HttpRequest Last() { return fake_->requests().back(); }

  std::vector<HttpResponse> answers_;  // served first, in order
  std::shared_ptr<FakeTransport> fake_;
  RestClient client_;
};

TEST_F(RestClientTest, PathsForCoreGroupsNamespacesAndSubresources) {
  EXPECT_EQ(ResourcePath(kConfigMaps, "ns", "x"), "/api/v1/namespaces/ns/configmaps/x");
  EXPECT_EQ(ResourcePath(kConfigMaps, ""), "/api/v1/configmaps");
  EXPECT_EQ(ResourcePath(kDeployments, "ns", "d", "scale"),
            "/apis/apps/v1/namespaces/ns/deployments/d/scale");
  EXPECT_EQ(ResourcePath(kNamespaces, "", "kube-system"), "/api/v1/namespaces/kube-system");
}

TEST_F(RestClientTest, GetSendsAcceptAndDecodesTheObject) {
  util::StatusOr<api::Object> o = client_.Get(kConfigMaps, {"ns", "x"}, {.resource_version = "0"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->name(), "x");
  EXPECT_EQ(o->resource_version(), "7");
  HttpRequest r = Last();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path, "/api/v1/namespaces/ns/configmaps/x");
  EXPECT_EQ(Query(r), "resourceVersion=0");
  EXPECT_EQ(FindHeader(r.headers, "accept"), "application/json");
}

TEST_F(RestClientTest, ListFillsItemKindsAndPaging) {
  answers_.push_back(FakeTransport::Json(
      200, R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42",)"
           R"("continue":"tok","remainingItemCount":3},"items":[{"metadata":{"name":"a"}},)"
           R"({"metadata":{"name":"b"}}]})"));
  util::StatusOr<ObjectList> list = client_.List(
      kConfigMaps, "ns", {.label_selector = "app=web", .resource_version = "0", .limit = 500});
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "42");
  EXPECT_EQ(list->continue_token, "tok");
  EXPECT_EQ(list->remaining_item_count, 3);
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[1].name(), "b");
  EXPECT_EQ(list->items[1].kind(), "ConfigMap");
  EXPECT_EQ(list->items[1].api_version(), "v1");
  EXPECT_EQ(Query(Last()), "labelSelector=app=web&resourceVersion=0&limit=500");
}

TEST_F(RestClientTest, WritesUseTheRightVerbsPathsAndBodies) {
  ASSERT_TRUE(
      client_
          .Create(kConfigMaps, "", ConfigMap("ns", "x"), {.dry_run = true, .field_manager = "me"})
          .ok());
  HttpRequest r = Last();
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/api/v1/namespaces/ns/configmaps");
  EXPECT_EQ(Query(r), "dryRun=All&fieldManager=me");
  EXPECT_EQ(FindHeader(r.headers, "content-type"), "application/json");
  EXPECT_NE(r.body.find(R"("name":"x")"), std::string::npos);

  api::Object cm = ConfigMap("ns", "x");
  cm.set_resource_version("7");
  ASSERT_TRUE(client_.Update(kConfigMaps, cm).ok());
  EXPECT_EQ(Last().method, "PUT");
  EXPECT_EQ(Last().path, "/api/v1/namespaces/ns/configmaps/x");
  EXPECT_NE(Last().body.find(R"("resourceVersion":"7")"), std::string::npos);

  ASSERT_TRUE(client_.UpdateStatus(kConfigMaps, cm).ok());
  EXPECT_EQ(Last().path, "/api/v1/namespaces/ns/configmaps/x/status");

  struct PatchCase {
    PatchType type;
    const char* content_type;
  };
  for (PatchCase pc :
       {PatchCase{PatchType::kJson, "application/json-patch+json"},
        PatchCase{PatchType::kMerge, "application/merge-patch+json"},
        PatchCase{PatchType::kStrategicMerge, "application/strategic-merge-patch+json"}}) {
    ASSERT_TRUE(client_.Patch(kConfigMaps, {"ns", "x"}, pc.type, "{}").ok());
    EXPECT_EQ(Last().method, "PATCH");
    EXPECT_EQ(FindHeader(Last().headers, "content-type"), pc.content_type);
  }
  ASSERT_TRUE(client_.Apply(kConfigMaps, cm, {.field_manager = "ctl", .force = true}).ok());
  EXPECT_EQ(FindHeader(Last().headers, "content-type"), "application/apply-patch+yaml");
  EXPECT_EQ(Query(Last()), "fieldManager=ctl&force=true");
  EXPECT_EQ(client_.Apply(kConfigMaps, cm, {}).status().code(), util::Code::kInvalidArgument);

  ASSERT_TRUE(client_
                  .Delete(kConfigMaps, {"ns", "x"},
                          {.grace_period_seconds = 0,
                           .propagation_policy = "Foreground",
                           .precondition_uid = "u1"})
                  .ok());
  EXPECT_EQ(Last().method, "DELETE");
  EXPECT_EQ(Last().body, R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,)"
                         R"("propagationPolicy":"Foreground","preconditions":{"uid":"u1"}})");

  ASSERT_TRUE(client_.DeleteCollection(kConfigMaps, "ns", {.label_selector = "a=b"}).ok());
  EXPECT_EQ(Last().path, "/api/v1/namespaces/ns/configmaps");
  EXPECT_EQ(Query(Last()), "labelSelector=a=b");
}

TEST_F(RestClientTest, ErrorResponsesBecomeStatuses) {
  answers_.push_back(FakeTransport::Json(
      409,
      R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409,)"
      R"("message":"Operation cannot be fulfilled on configmaps \"x\": the object has been modified"})"));
  util::StatusOr<api::Object> o = client_.Update(kConfigMaps, ConfigMap("ns", "x"));
  EXPECT_TRUE(IsConflict(o.status()));
  EXPECT_EQ(o.status().reason(), "Conflict");
  EXPECT_NE(o.status().message().find("has been modified"), std::string::npos);
}

TEST_F(RestClientTest, RetryAfterIsHonouredOnTheClock) {
  util::FakeClock clock;
  RestClient client({.transport = fake_, .max_retries = 2, .clock = &clock});
  HttpResponse throttled = FakeTransport::Json(429, "{}");
  throttled.headers.emplace_back("retry-after", "3");
  answers_ = {throttled, throttled, throttled, throttled};
  std::jthread stepper([&](std::stop_token stop) {
    while (!stop.stop_requested()) {
      if (clock.Waiters() > 0) clock.Step(std::chrono::seconds(3));
      std::this_thread::yield();
    }
  });
  util::StatusOr<api::Object> o = client.Get(kConfigMaps, {"ns", "x"});
  stepper.request_stop();
  EXPECT_TRUE(IsTooManyRequests(o.status())) << o.status().ToString();
  EXPECT_EQ(fake_->requests().size(), 3u);  // the first try and two retries
}

TEST_F(RestClientTest, WatchDecodesTheStreamAndSetsTheDeadline) {
  auto body = std::make_shared<FakeStream>();
  auto fake = std::make_shared<FakeTransport>(
      [](const HttpRequest&) { return FakeTransport::Json(500, ""); },
      [&](const HttpRequest&) -> util::StatusOr<FakeTransport::StreamAnswer> {
        return FakeTransport::StreamAnswer{200, body};
      });
  RestClient client({.transport = fake});
  util::StatusOr<std::unique_ptr<Watcher>> w = client.Watch(
      kConfigMaps, "ns",
      {.resource_version = "10", .timeout_seconds = 300, .allow_watch_bookmarks = true});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  HttpRequest r = fake->requests().back();
  EXPECT_EQ(Query(r), "watch=true&resourceVersion=10&timeoutSeconds=300&allowWatchBookmarks=true");
  EXPECT_EQ(r.timeout, std::chrono::seconds(330));
  body->Push(R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"11"}}})");
  util::StatusOr<std::optional<WatchEvent>> ev = (*w)->Next();
  ASSERT_TRUE(ev.ok());
  ASSERT_TRUE(ev->has_value());
  EXPECT_EQ((*ev)->object->resource_version(), "11");
}

TEST_F(RestClientTest, WatchRejectedUpFrontIsAnError) {
  answers_.push_back(FakeTransport::Json(
      410, R"({"kind":"Status","reason":"Expired","code":410,"message":"too old"})"));
  util::StatusOr<std::unique_ptr<Watcher>> w = client_.Watch(kConfigMaps, "", {});
  EXPECT_TRUE(IsExpired(w.status()));
}

TEST(ResourceForKindTest, MapsBuiltinKinds) {
  util::StatusOr<api::GroupVersionResource> gvr = ResourceForKind({"apps", "v1", "Deployment"});
  ASSERT_TRUE(gvr.ok());
  EXPECT_EQ(*gvr, kDeployments);
  EXPECT_EQ(ResourceForKind({"", "v1", "Lease"}).status().code(), util::Code::kNotFound);
  EXPECT_TRUE(ResourceForKind({"coordination.k8s.io", "v1", "Lease"}).ok());
}

}  // namespace
}  // namespace converge::client
