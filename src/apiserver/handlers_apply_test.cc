// managedFields on every write and server-side apply, through APIServer::Handle in-process (the
// same chain HTTP enters) on an embedded store in a temporary directory, with a fake clock so
// the recorded times are exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "apiserver/handler_test_util.h"
#include "apiserver/server.h"
#include "store/embedded_store.h"
#include "store/store_test_util.h"
#include "util/clock.h"
#include "util/time_format.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

constexpr char kConfigMapsPath[] = "/api/v1/namespaces/default/configmaps";
constexpr char kDeploymentsPath[] = "/apis/apps/v1/namespaces/default/deployments";
constexpr char kUserAgent[] = "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07";

class ApplyHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    auto kv = store::OpenEmbeddedStore({.dir = dir_.path()});
    ASSERT_TRUE(kv.ok()) << kv.status().message();
    kv_ = std::move(*kv);
    APIServerOptions options;
    options.kv = kv_.get();
    options.clock = &clock_;
    options.storage.clock = &clock_;
    options.compaction_interval = std::chrono::milliseconds(0);
    server_ = std::make_unique<APIServer>(options);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  struct Reply {
    int code = 0;
    json::value body;
  };
  Reply Do(const std::string& method, const std::string& target, const std::string& body = "",
           const std::string& content_type = "application/json") {
    Request req = AdminRequest(method, target, body, content_type);
    req.headers.emplace_back("user-agent", kUserAgent);
    Response resp = server_->Handle(req);
    Reply r;
    r.code = resp.status;
    boost::system::error_code ec;
    r.body = json::parse(resp.body, ec);
    return r;
  }
  Reply Apply(const std::string& target, const std::string& yaml) {
    return Do("PATCH", target, yaml, "application/apply-patch+yaml");
  }

  // The managedFields entry of `manager` (null when there is none).
  static const json::object* Entry(const json::value& obj, std::string_view manager,
                                   std::string_view operation = "") {
    const json::value* mf = obj.at("metadata").as_object().if_contains("managedFields");
    if (mf == nullptr) return nullptr;
    for (const json::value& e : mf->as_array()) {
      const json::object& o = e.as_object();
      if (o.at("manager").as_string() != manager) continue;
      if (!operation.empty() && o.at("operation").as_string() != operation) continue;
      return &o;
    }
    return nullptr;
  }
  static std::string Fields(const json::object* entry) {
    return entry == nullptr ? "<none>" : json::serialize(entry->at("fieldsV1"));
  }

  store::TempDir dir_;
  util::FakeClock clock_;
  std::unique_ptr<store::KV> kv_;
  std::unique_ptr<APIServer> server_;
};

TEST_F(ApplyHandlerTest, CreateRecordsUserAgentManagerWithTime) {
  Reply r = Do("POST", kConfigMapsPath,
               R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},
                   "data":{"a":"1"}})");
  ASSERT_EQ(r.code, 201) << r.body;
  const json::object* e = Entry(r.body, "kubectl", "Update");
  ASSERT_NE(e, nullptr) << r.body;
  EXPECT_EQ(e->at("apiVersion").as_string(), "v1");
  EXPECT_EQ(e->at("fieldsType").as_string(), "FieldsV1");
  EXPECT_EQ(e->at("time").as_string(), util::FormatRfc3339(clock_.WallNow()));
  EXPECT_EQ(Fields(e), R"({"f:data":{".":{},"f:a":{}}})");
}

TEST_F(ApplyHandlerTest, UpdateByAnotherManagerTakesTheChangedField) {
  ASSERT_EQ(Do("POST", std::string(kConfigMapsPath) + "?fieldManager=creator",
               R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},
                   "data":{"a":"1","b":"2"}})")
                .code,
            201);
  clock_.Step(std::chrono::seconds(5));
  Reply r = Do("PATCH", std::string(kConfigMapsPath) + "/cm?fieldManager=editor",
               R"({"data":{"a":"changed"}})", "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Fields(Entry(r.body, "creator")), R"({"f:data":{".":{},"f:b":{}}})");
  const json::object* editor = Entry(r.body, "editor", "Update");
  EXPECT_EQ(Fields(editor), R"({"f:data":{"f:a":{}}})");
  ASSERT_NE(editor, nullptr);
  EXPECT_EQ(editor->at("time").as_string(), util::FormatRfc3339(clock_.WallNow()));
}

TEST_F(ApplyHandlerTest, ApplyCreatesThenNoOpKeepsResourceVersion) {
  const std::string cm = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},
                             "data":{"a":"1"}})";
  Reply created = Apply(std::string(kConfigMapsPath) + "/cm?fieldManager=ci", cm);
  ASSERT_EQ(created.code, 201) << created.body;
  EXPECT_EQ(Fields(Entry(created.body, "ci", "Apply")), R"({"f:data":{"f:a":{}}})");
  Reply again = Apply(std::string(kConfigMapsPath) + "/cm?fieldManager=ci", cm);
  ASSERT_EQ(again.code, 200) << again.body;
  EXPECT_EQ(again.body.at("metadata").at("resourceVersion"),
            created.body.at("metadata").at("resourceVersion"));
}

TEST_F(ApplyHandlerTest, FieldsDroppedFromTheConfigAreRemoved) {
  ASSERT_EQ(Apply(std::string(kConfigMapsPath) + "/cm?fieldManager=ci",
                  R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},
                      "data":{"a":"1","b":"2"}})")
                .code,
            201);
  Reply r = Apply(std::string(kConfigMapsPath) + "/cm?fieldManager=ci",
                  R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},
                      "data":{"a":"1"}})");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(json::serialize(r.body.at("data")), R"({"a":"1"})");
}

TEST_F(ApplyHandlerTest, ConflictThenForce) {
  const std::string url = std::string(kConfigMapsPath) + "/cm";
  ASSERT_EQ(Apply(url + "?fieldManager=first",
                  R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},
                      "data":{"a":"1"}})")
                .code,
            201);
  const std::string second =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"2"}})";
  Reply conflict = Apply(url + "?fieldManager=second&force=false", second);
  ASSERT_EQ(conflict.code, 409) << conflict.body;
  EXPECT_EQ(conflict.body.at("reason").as_string(), "Conflict");
  EXPECT_EQ(conflict.body.at("message").as_string(),
            R"(Apply failed with 1 conflict: conflict with "first": .data.a)");
  EXPECT_EQ(
      json::serialize(conflict.body.at("details")),
      R"({"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"first\"","field":".data.a"}]})");
  EXPECT_EQ(Do("GET", url).body.at("data").at("a").as_string(), "1");

  Reply forced = Apply(url + "?fieldManager=second&force=true", second);
  ASSERT_EQ(forced.code, 200) << forced.body;
  EXPECT_EQ(forced.body.at("data").at("a").as_string(), "2");
  EXPECT_EQ(Entry(forced.body, "first"), nullptr) << forced.body;
  EXPECT_EQ(Fields(Entry(forced.body, "second", "Apply")), R"({"f:data":{"f:a":{}}})");
}

TEST_F(ApplyHandlerTest, UpdateOwnerConflictNamesItsVersion) {
  ASSERT_EQ(Do("POST", std::string(kDeploymentsPath) + "?fieldManager=kubectl-create",
               R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
                   "spec":{"selector":{"matchLabels":{"app":"web"}},
                   "template":{"metadata":{"labels":{"app":"web"}},
                   "spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}})")
                .code,
            201);
  Reply r = Apply(std::string(kDeploymentsPath) + "/web?fieldManager=ci",
                  R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
                      "spec":{"replicas":3}})");
  ASSERT_EQ(r.code, 409) << r.body;
  EXPECT_EQ(
      r.body.at("message").as_string(),
      R"(Apply failed with 1 conflict: conflict with "kubectl-create" using apps/v1: .spec.replicas)");
}

TEST_F(ApplyHandlerTest, ScaleIsRecordedUnderItsSubresource) {
  ASSERT_EQ(Apply(std::string(kDeploymentsPath) + "/web?fieldManager=ci",
                  R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
                      "spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},
                      "template":{"metadata":{"labels":{"app":"web"}},
                      "spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}})")
                .code,
            201);
  Reply scaled = Do("PATCH", std::string(kDeploymentsPath) + "/web/scale",
                    R"({"spec":{"replicas":4}})", "application/merge-patch+json");
  ASSERT_EQ(scaled.code, 200) << scaled.body;
  Reply r = Apply(std::string(kDeploymentsPath) + "/web?fieldManager=ci",
                  R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
                      "spec":{"replicas":1}})");
  ASSERT_EQ(r.code, 409) << r.body;
  EXPECT_EQ(
      r.body.at("message").as_string(),
      R"(Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas)");
}

// Who owns spec.replicas, as upstream's TestScaleAllResources asserts it.
std::vector<std::string> ReplicasOwners(const json::value& obj) {
  std::vector<std::string> owners;
  const json::value* mf = obj.at("metadata").as_object().if_contains("managedFields");
  if (mf == nullptr) return owners;
  for (const json::value& e : mf->as_array()) {
    const json::value* spec = e.at("fieldsV1").as_object().if_contains("f:spec");
    if (spec != nullptr && spec->as_object().contains("f:replicas")) {
      owners.emplace_back(e.at("manager").as_string());
    }
  }
  std::sort(owners.begin(), owners.end());
  return owners;
}

constexpr char kScaleBody[] =
    R"({"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"test","namespace":"default"},"spec":{"replicas":%d}})";

std::string ScaleBody(int replicas) {
  std::string s = kScaleBody;
  s.replace(s.find("%d"), 2, std::to_string(replicas));
  return s;
}

class ScaleApplyTest : public ApplyHandlerTest, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string Collection() const { return "/apis/apps/v1/namespaces/default/" + GetParam(); }
  std::string Workload(int replicas) const {
    const std::string kind = GetParam() == "deployments" ? "Deployment" : "ReplicaSet";
    return R"({"apiVersion":"apps/v1","kind":")" + kind +
           R"(","metadata":{"name":"test"},"spec":{"replicas":)" + std::to_string(replicas) +
           R"(,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":)"
           R"({"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:latest"}]}}}})";
  }
  json::value Get() { return Do("GET", Collection() + "/test").body; }
};

// Upstream's TestScaleAllResources step by step: apply, scale, conflicts both ways, forced
// takeovers, replace and co-ownership through /scale.
TEST_P(ScaleApplyTest, OwnershipMovesBetweenTheWorkloadAndItsScale) {
  const std::string obj = Collection() + "/test";
  ASSERT_EQ(Apply(obj + "?fieldManager=apply_test", Workload(1)).code, 201);
  EXPECT_EQ(ReplicasOwners(Get()), std::vector<std::string>{"apply_test"});

  clock_.Step(std::chrono::seconds(10));
  Reply r = Do("PATCH", obj + "/scale?fieldManager=scale_test", R"({"spec":{"replicas":5}})",
               "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.body.at("kind"), "Scale");
  EXPECT_EQ(r.body.at("metadata").as_object().if_contains("managedFields"), nullptr);
  json::value now = Get();
  EXPECT_EQ(now.at("spec").at("replicas"), 5);
  EXPECT_EQ(ReplicasOwners(now), std::vector<std::string>{"scale_test"});
  // The scaler's entry: Update in the parent's version under subresource scale, without a time
  // (upstream's ScaleHandler takes entry times from the parent, which had none for it).
  const json::object* scaler = Entry(now, "scale_test");
  ASSERT_NE(scaler, nullptr);
  EXPECT_EQ(json::serialize(*scaler),
            R"({"manager":"scale_test","operation":"Update","apiVersion":"apps/v1",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}},)"
            R"("subresource":"scale"})");

  r = Apply(obj + "?fieldManager=apply_test", Workload(1));
  ASSERT_EQ(r.code, 409) << r.body;
  EXPECT_EQ(
      r.body.at("message").as_string(),
      R"(Apply failed with 1 conflict: conflict with "scale_test" with subresource "scale" using apps/v1: .spec.replicas)");
  ASSERT_EQ(Apply(obj + "?fieldManager=apply_test&force=true", Workload(1)).code, 200);
  EXPECT_EQ(ReplicasOwners(Get()), std::vector<std::string>{"apply_test"});

  // Apply of a Scale with another count conflicts with the workload's applier.
  r = Apply(obj + "/scale?fieldManager=apply_scale", ScaleBody(17));
  ASSERT_EQ(r.code, 409) << r.body;
  EXPECT_EQ(r.body.at("reason"), "Conflict");
  EXPECT_EQ(r.body.at("message").as_string(),
            R"(Apply failed with 1 conflict: conflict with "apply_test": .spec.replicas)");
  EXPECT_EQ(r.body.at("details").at("causes").at(0).at("reason"), "FieldManagerConflict");
  EXPECT_EQ(r.body.at("details").at("causes").at(0).at("field"), ".spec.replicas");
  EXPECT_EQ(Get().at("spec").at("replicas"), 1);
  r = Apply(obj + "/scale?fieldManager=apply_scale&force=true", ScaleBody(17));
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.body.at("kind"), "Scale");
  EXPECT_EQ(r.body.at("spec").at("replicas"), 17);
  now = Get();
  EXPECT_EQ(now.at("spec").at("replicas"), 17);
  EXPECT_EQ(ReplicasOwners(now), std::vector<std::string>{"apply_scale"});
  const json::object* applier = Entry(now, "apply_scale", "Apply");
  ASSERT_NE(applier, nullptr);
  EXPECT_EQ(applier->at("subresource"), "scale");
  EXPECT_EQ(applier->at("apiVersion"), "apps/v1");
  // The workload's applier keeps the rest of what it applied.
  EXPECT_NE(Fields(Entry(now, "apply_test", "Apply")).find("f:template"), std::string::npos);

  // Replace through /scale, then an apply of the same count: both own it.
  r = Do("PUT", obj + "/scale?fieldManager=replace_test", ScaleBody(7));
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(ReplicasOwners(Get()), std::vector<std::string>{"replace_test"});
  r = Apply(obj + "/scale?fieldManager=co_owning_test", ScaleBody(7));
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(ReplicasOwners(Get()), (std::vector<std::string>{"co_owning_test", "replace_test"}));

  // Scaling again makes the scaler the only owner.
  r = Do("PATCH", obj + "/scale?fieldManager=scale_test", R"({"spec":{"replicas":5}})",
         "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  now = Get();
  EXPECT_EQ(now.at("spec").at("replicas"), 5);
  EXPECT_EQ(ReplicasOwners(now), std::vector<std::string>{"scale_test"});
}

INSTANTIATE_TEST_SUITE_P(Workloads, ScaleApplyTest,
                         ::testing::Values("deployments", "replicasets"));

TEST_F(ApplyHandlerTest, ScaleStatusOnlyPatchChangesNothing) {
  // Upstream's TestScaleUpdateOnlyStatus.
  const std::string obj = std::string(kDeploymentsPath) + "/test";
  ASSERT_EQ(Apply(obj + "?fieldManager=apply_test",
                  R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"test"},
                      "spec":{"replicas":1,"selector":{"matchLabels":{"app":"nginx"}},
                      "template":{"metadata":{"labels":{"app":"nginx"}},
                      "spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}})")
                .code,
            201);
  Reply r = Do("PATCH", obj + "/scale?fieldManager=scale_test", R"({"status":{"replicas":42}})",
               "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  json::value now = Do("GET", obj).body;
  EXPECT_EQ(now.at("spec").at("replicas"), 1);
  EXPECT_EQ(ReplicasOwners(now), std::vector<std::string>{"apply_test"});
}

TEST_F(ApplyHandlerTest, ScaleApplyErrors) {
  const std::string obj = std::string(kDeploymentsPath) + "/test";
  // No workload: 404, nothing created.
  Reply r = Apply(obj + "/scale?fieldManager=m", ScaleBody(2));
  EXPECT_EQ(r.code, 404) << r.body;
  EXPECT_EQ(r.body.at("message"), R"(deployments.apps "test" not found)");
  ASSERT_EQ(Apply(obj + "?fieldManager=m",
                  R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"test"},
                      "spec":{"selector":{"matchLabels":{"app":"nginx"}},
                      "template":{"metadata":{"labels":{"app":"nginx"}},
                      "spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}})")
                .code,
            201);
  // The workload's own kind is not what /scale applies.
  r = Apply(obj + "/scale?fieldManager=m",
            R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"test"}})");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.body.at("message"),
            "Incorrect version specified in apply patch. Specified patch version: apps/v1, "
            "expected: autoscaling/v1");
  r = Apply(obj + "/scale?fieldManager=m",
            R"({"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"test"},
                "spec":{"replicas":2,"foo":1}})");
  EXPECT_EQ(r.code, 500) << r.body;
  EXPECT_EQ(r.body.at("message"),
            "failed to create typed patch object (/test; autoscaling/v1, Kind=Scale): "
            ".spec.foo: field not declared in schema");
  r = Apply(obj + "/scale?fieldManager=m",
            R"({"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"other"}})");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.body.at("message"),
            "the name of the object (other) does not match the name on the URL (test)");
  r = Apply(obj + "/scale", ScaleBody(2));
  EXPECT_EQ(r.code, 422) << r.body;
  // Nobody owns the workload's replicas (the apply above left them to the default), so the
  // Scale's field manager first records its current fields as "before-first-apply" (upstream's
  // skipNonApplied), and changing the count conflicts with that.
  r = Apply(obj + "/scale?fieldManager=m", ScaleBody(2));
  EXPECT_EQ(r.code, 409) << r.body;
  EXPECT_EQ(r.body.at("message"),
            R"(Apply failed with 1 conflict: conflict with "before-first-apply" with )"
            R"(subresource "scale" using autoscaling/v1: .spec.replicas)");
  r = Apply(obj + "/scale?fieldManager=m&force=true",
            R"({"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"test"},
                "spec":{"replicas":-1}})");
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_EQ(r.body.at("message"),
            R"(Scale.autoscaling "test" is invalid: spec.replicas: Invalid value: -1: must be )"
            "greater than or equal to 0");
  // A uid that is not the workload's is a failed precondition.
  r = Do("PUT", obj + "/scale",
         R"({"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"test","uid":"nope"},
             "spec":{"replicas":3}})");
  EXPECT_EQ(r.code, 409) << r.body;
  const std::string uid(Do("GET", obj).body.at("metadata").at("uid").as_string());
  EXPECT_EQ(r.body.at("message").as_string(),
            R"(Operation cannot be fulfilled on deployments/scale.apps "test": Precondition )"
            "failed: UID in precondition: nope, UID in object meta: " +
                uid);
  // dryRun: answered, not stored.
  r = Apply(obj + "/scale?fieldManager=m&dryRun=All&force=true", ScaleBody(9));
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.body.at("spec").at("replicas"), 9);
  EXPECT_EQ(Do("GET", obj).body.at("spec").at("replicas"), 1);
}

TEST_F(ApplyHandlerTest, DryRunCreatesNothing) {
  Reply r =
      Apply(std::string(kConfigMapsPath) + "/cm?fieldManager=ci&dryRun=All",
            R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"1"}})");
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_NE(Entry(r.body, "ci", "Apply"), nullptr);
  EXPECT_EQ(Do("GET", std::string(kConfigMapsPath) + "/cm").code, 404);
}

struct BadApplyRequest {
  const char* name;
  const char* query;
  const char* body;
  int code;
  const char* message;
};

class ApplyErrorTest : public ApplyHandlerTest,
                       public ::testing::WithParamInterface<BadApplyRequest> {};

TEST_P(ApplyErrorTest, AnswersAsUpstreamAndStoresNothing) {
  const BadApplyRequest& c = GetParam();
  Reply r = Apply(std::string(kConfigMapsPath) + "/cm" + c.query, c.body);
  EXPECT_EQ(r.code, c.code) << r.body;
  // The message starts with c.message (a YAML parser's detail follows "error decoding YAML: ").
  EXPECT_EQ(std::string(r.body.at("message").as_string()).rfind(c.message, 0), 0u) << r.body;
  EXPECT_EQ(Do("GET", std::string(kConfigMapsPath) + "/cm").code, 404);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ApplyErrorTest,
    ::testing::Values(
        BadApplyRequest{
            "NoFieldManager", "", R"({"apiVersion":"v1","kind":"ConfigMap"})", 422,
            R"(PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch)"},
        BadApplyRequest{"WrongVersion", "?fieldManager=ci",
                        R"({"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"cm"}})", 400,
                        "Incorrect version specified in apply patch. Specified patch version: v2, "
                        "expected: v1"},
        BadApplyRequest{
            "UnknownField", "?fieldManager=ci",
            R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"foo":1})", 500,
            "failed to create typed patch object (/cm; /v1, Kind=ConfigMap): .foo: field "
            "not declared in schema"},
        BadApplyRequest{"NameMismatch", "?fieldManager=ci",
                        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}})",
                        400,
                        "the name of the object (other) does not match the name on the URL (cm)"},
        BadApplyRequest{"NotYaml", "?fieldManager=ci", "a: [", 400, "error decoding YAML: "}),
    [](const ::testing::TestParamInfo<BadApplyRequest>& info) { return info.param.name; });

}  // namespace
}  // namespace converge::apiserver
