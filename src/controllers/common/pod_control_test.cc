#include "controllers/common/pod_control.h"

#include <gtest/gtest.h>

#include "client/api_errors.h"
#include "client/fake_transport.h"
#include "controllers/common/fake_pod_control.h"
#include "controllers/common/recording_event_sink.h"
#include "controllers/common/test_objects.h"

namespace converge::controllers {
namespace {

namespace json = boost::json;
using client::FakeTransport;
using client::HttpRequest;
using client::HttpResponse;

json::object WebTemplate() {
  return json::parse(R"({"metadata":{"labels":{"app":"web"},"annotations":{"a":"b"}},
                         "spec":{"containers":[{"name":"c","image":"nginx"}]}})")
      .as_object();
}

TEST(PodControlTest, PodFromTemplate) {
  api::Object rs = testing::MakeOwner("ReplicaSet", "web-abc", "rs-uid");
  OwnerRef ref = NewControllerRef(rs, {"apps", "v1", "ReplicaSet"});
  api::Object pod = PodFromTemplate(WebTemplate(), rs, ref);
  EXPECT_EQ(pod.generate_name(), "web-abc-");
  EXPECT_EQ(pod.label("app"), "web");
  EXPECT_EQ(pod.annotation("a"), "b");
  ASSERT_TRUE(GetControllerOf(pod).has_value());
  EXPECT_EQ(GetControllerOf(pod)->uid, "rs-uid");
  EXPECT_EQ(pod.doc().at("spec").at("containers").as_array().size(), 1u);
  EXPECT_EQ(PodFromTemplate(WebTemplate(), rs, ref, "job-7-").generate_name(), "job-7-");
}

struct Server {
  std::vector<HttpRequest> requests;
  int next_status = 201;
  std::string next_body;
};

TEST(PodControlTest, RealCreatesDeletesAndRecordsEvents) {
  auto server = std::make_shared<Server>();
  auto transport = std::make_shared<FakeTransport>([server](const HttpRequest& r) {
    server->requests.push_back(r);
    if (r.method == "POST") {
      if (server->next_status != 201) {
        return util::StatusOr<HttpResponse>(
            FakeTransport::Json(server->next_status, server->next_body));
      }
      json::object pod = json::parse(r.body).as_object();
      pod["metadata"].as_object()["name"] = "web-abc-x1y2z";
      return util::StatusOr<HttpResponse>(FakeTransport::Json(201, json::serialize(pod)));
    }
    if (r.method == "DELETE") {
      if (r.path.ends_with("/gone")) {
        return util::StatusOr<HttpResponse>(FakeTransport::Json(
            404,
            R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404,"message":"pods \"gone\" not found"})"));
      }
      return util::StatusOr<HttpResponse>(FakeTransport::Json(200, R"({"kind":"Pod"})"));
    }
    return util::StatusOr<HttpResponse>(FakeTransport::Json(200, R"({"kind":"Pod"})"));
  });
  client::RestClient rest({.transport = transport});
  RecordingEventSink sink;
  client::EventRecorder recorder({.source = {"replicaset-controller", ""}, .sink = &sink});
  RealPodControl control(&rest, &recorder);
  api::Object rs = testing::MakeOwner("ReplicaSet", "web-abc", "rs-uid");
  OwnerRef ref = NewControllerRef(rs, {"apps", "v1", "ReplicaSet"});

  ASSERT_TRUE(control.CreatePod("default", WebTemplate(), rs, ref).ok());
  ASSERT_EQ(server->requests.size(), 1u);
  EXPECT_EQ(server->requests[0].path, "/api/v1/namespaces/default/pods");
  json::object sent = json::parse(server->requests[0].body).as_object();
  EXPECT_EQ(api::FindString(sent, {"metadata", "generateName"}), "web-abc-");

  server->next_status = 403;
  server->next_body = R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403,
      "message":"pods \"web-abc-\" is forbidden: exceeded quota"})";
  util::Status s = control.CreatePod("default", WebTemplate(), rs, ref);
  EXPECT_FALSE(s.ok());

  ASSERT_TRUE(control.DeletePod("default", "web-abc-x1y2z", rs).ok());
  EXPECT_EQ(server->requests.back().method, "DELETE");
  EXPECT_TRUE(client::IsNotFound(control.DeletePod("default", "gone", rs)));

  // A template without labels is refused before any request.
  size_t before = server->requests.size();
  json::object bare = json::parse(R"({"spec":{"containers":[]}})").as_object();
  EXPECT_EQ(control.CreatePod("default", bare, rs, ref).code(), util::Code::kInvalidArgument);
  EXPECT_EQ(server->requests.size(), before);

  recorder.Flush();
  EXPECT_EQ(sink.Summaries(),
            (std::vector<std::string>{
                "SuccessfulCreate: Created pod: web-abc-x1y2z",
                "FailedCreate: Error creating: pods \"web-abc-\" is forbidden: exceeded quota",
                "SuccessfulDelete: Deleted pod: web-abc-x1y2z"}));
  EXPECT_EQ(sink.events()[0].object, "ReplicaSet default/web-abc");
}

TEST(PodControlTest, FakeRecordsAndInjects) {
  FakePodControl fake;
  api::Object rs = testing::MakeOwner("ReplicaSet", "web", "rs-uid");
  OwnerRef ref = NewControllerRef(rs, {"apps", "v1", "ReplicaSet"});
  fake.set_create_limit(2);
  EXPECT_TRUE(fake.CreatePod("default", WebTemplate(), rs, ref).ok());
  EXPECT_TRUE(fake.CreatePod("default", WebTemplate(), rs, ref).ok());
  EXPECT_FALSE(fake.CreatePod("default", WebTemplate(), rs, ref).ok());
  EXPECT_EQ(fake.create_attempts(), 3);
  ASSERT_EQ(fake.created().size(), 2u);
  EXPECT_EQ(fake.created()[1].name(), "web-1");
  EXPECT_TRUE(fake.DeletePod("default", "web-0", rs).ok());
  ASSERT_EQ(fake.deleted().size(), 1u);
  EXPECT_EQ(fake.deleted()[0].name, "web-0");
}

}  // namespace
}  // namespace converge::controllers
