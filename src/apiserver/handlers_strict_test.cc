// fieldValidation (Strict, Warn, Ignore) on every write verb: unknown and duplicate fields in JSON
// and YAML bodies, patches and apply patches, answered with upstream's wording and order (its
// test/integration/apiserver/field_validation_test.go), through APIServer::Handle in-process.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "apiserver/handler_test_util.h"
#include "apiserver/server.h"
#include "store/embedded_store.h"
#include "store/store_test_util.h"
#include "util/clock.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

constexpr char kDeploymentsUrl[] = "/apis/apps/v1/namespaces/default/deployments";
constexpr char kKubectlUserAgent[] = "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07";

// Names "web", with a repeated metadata.name, an unknown metadata field, a repeated label, an
// unknown spec field given twice, spec.replicas given twice and a container with an unknown
// field and its image twice.
constexpr char kBadJson[] = R"({"apiVersion":"apps/v1","kind":"Deployment",
 "metadata":{"name":"first","name":"web","bogusMeta":"x","labels":{"app":"web","app":"web"}},
 "spec":{"bogus":1,"bogus":2,"replicas":2,"replicas":3,
  "selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},
   "spec":{"containers":[{"name":"c","bogusNested":"y","image":"nginx","image":"nginx:1.27"}]}}}})";

constexpr char kBadJsonProblems[] =
    R"(duplicate field "metadata.name", unknown field "metadata.bogusMeta", )"
    R"(duplicate field "metadata.labels.app", unknown field "spec.bogus", )"
    R"(duplicate field "spec.replicas", )"
    R"(unknown field "spec.template.spec.containers[0].bogusNested", )"
    R"(duplicate field "spec.template.spec.containers[0].image")";

constexpr char kBadYaml[] = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: first
  name: web
  labels:
    app: web
  bogusMeta: x
spec:
  replicas: 2
  replicas: 3
  bogus: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: c
        image: nginx
        image: nginx:1.27
        bogusNested: y
)";

constexpr char kGoodJson[] = R"({"apiVersion":"apps/v1","kind":"Deployment",
 "metadata":{"name":"web","labels":{"app":"web"}},
 "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},
   "spec":{"containers":[{"name":"c","image":"nginx"}]}}}})";

class StrictDecodingTest : public ::testing::Test {
 protected:
  void SetUp() override {
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
    std::vector<std::string> warnings;  // the Warning headers' texts
    std::string message() const {
      const json::object* o = body.if_object();
      const json::value* m = o ? o->if_contains("message") : nullptr;
      return m && m->is_string() ? std::string(m->get_string()) : "";
    }
    std::string reason() const {
      const json::object* o = body.if_object();
      const json::value* m = o ? o->if_contains("reason") : nullptr;
      return m && m->is_string() ? std::string(m->get_string()) : "";
    }
  };

  Reply Do(const std::string& method, const std::string& target, const std::string& body = "",
           const std::string& content_type = "application/json") {
    Request req = AdminRequest(method, target, body, content_type);
    req.headers.emplace_back("user-agent", kKubectlUserAgent);
    Response resp = server_->Handle(req);
    Reply r;
    r.code = resp.status;
    boost::system::error_code ec;
    r.body = json::parse(resp.body, ec);
    for (const auto& [name, value] : resp.headers) {
      if (name != "Warning") continue;
      // 299 - "text" with \" and \\ escaped.
      const size_t open = value.find('"');
      std::string text;
      for (size_t i = open + 1; i + 1 < value.size(); ++i) {
        if (value[i] == '\\') ++i;
        text += value[i];
      }
      r.warnings.push_back(text);
    }
    return r;
  }
  int GetCode(const std::string& name) {
    return Do("GET", std::string(kDeploymentsUrl) + "/" + name).code;
  }

  store::TempDir dir_;
  util::FakeClock clock_;
  std::unique_ptr<store::KV> kv_;
  std::unique_ptr<APIServer> server_;
};

std::vector<std::string> Split(const std::string& problems) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < problems.size()) {
    size_t comma = problems.find(", ", start);
    if (comma == std::string::npos) comma = problems.size();
    out.push_back(problems.substr(start, comma - start));
    start = comma + 2;
  }
  return out;
}

// ---- create and update bodies -------------------------------------------------------------------

TEST_F(StrictDecodingTest, StrictJsonCreateIsRejectedInDocumentOrder) {
  Reply r = Do("POST", std::string(kDeploymentsUrl) + "?fieldValidation=Strict", kBadJson);
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.reason(), "BadRequest");
  EXPECT_EQ(r.message(),
            std::string(R"(Deployment in version "v1" cannot be handled as a Deployment: )") +
                "strict decoding error: " + kBadJsonProblems);
  EXPECT_EQ(GetCode("web"), 404);
}

TEST_F(StrictDecodingTest, WarnJsonCreateSucceedsWithOneWarningEachAndTheLastValue) {
  for (const char* query : {"?fieldValidation=Warn", ""}) {  // Warn is the default
    Reply r = Do("POST", std::string(kDeploymentsUrl) + query, kBadJson);
    ASSERT_EQ(r.code, 201) << r.body;
    EXPECT_EQ(r.warnings, Split(kBadJsonProblems));
    EXPECT_EQ(r.body.at("metadata").at("name"), "web");
    EXPECT_EQ(r.body.at("spec").at("replicas"), 3);
    EXPECT_EQ(r.body.at("spec").at("template").at("spec").at("containers").at(0).at("image"),
              "nginx:1.27");
    EXPECT_EQ(r.body.at("spec").as_object().if_contains("bogus"), nullptr);
    ASSERT_EQ(Do("DELETE", std::string(kDeploymentsUrl) + "/web").code, 200);
  }
}

TEST_F(StrictDecodingTest, IgnoreJsonCreateIsSilent) {
  Reply r = Do("POST", std::string(kDeploymentsUrl) + "?fieldValidation=Ignore", kBadJson);
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.body.at("spec").at("replicas"), 3);
}

TEST_F(StrictDecodingTest, StrictYamlCreateReportsGoYamlLinesThenSortedUnknownFields) {
  Reply r = Do("POST", std::string(kDeploymentsUrl) + "?fieldValidation=Strict", kBadYaml,
               "application/yaml");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.message(),
            "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding "
            "error: yaml: unmarshal errors:\n"
            "  line 5: key \"name\" already set in map\n"
            "  line 11: key \"replicas\" already set in map\n"
            "  line 24: key \"image\" already set in map, "
            "unknown field \"metadata.bogusMeta\", unknown field \"spec.bogus\", "
            "unknown field \"spec.template.spec.containers[0].bogusNested\"");
  EXPECT_EQ(GetCode("web"), 404);
}

TEST_F(StrictDecodingTest, WarnYamlCreateWarnsLineByLine) {
  Reply r = Do("POST", std::string(kDeploymentsUrl) + "?fieldValidation=Warn", kBadYaml,
               "application/yaml");
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(r.warnings, (std::vector<std::string>{
                            "line 5: key \"name\" already set in map",
                            "line 11: key \"replicas\" already set in map",
                            "line 24: key \"image\" already set in map",
                            "unknown field \"metadata.bogusMeta\"", "unknown field \"spec.bogus\"",
                            "unknown field \"spec.template.spec.containers[0].bogusNested\""}));
  EXPECT_EQ(r.body.at("spec").at("replicas"), 3);
}

TEST_F(StrictDecodingTest, StrictPutIsRejectedAndTheObjectKept) {
  Reply created = Do("POST", kDeploymentsUrl, kGoodJson);
  ASSERT_EQ(created.code, 201) << created.body;
  std::string body = kBadJson;
  Reply r = Do("PUT", std::string(kDeploymentsUrl) + "/web?fieldValidation=Strict", body);
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.message(),
            std::string(R"(Deployment in version "v1" cannot be handled as a Deployment: )") +
                "strict decoding error: " + kBadJsonProblems);
  Reply now = Do("GET", std::string(kDeploymentsUrl) + "/web");
  EXPECT_EQ(now.body.at("spec").at("replicas"), 2);
  EXPECT_EQ(now.body.at("metadata").at("resourceVersion"),
            created.body.at("metadata").at("resourceVersion"));

  r = Do("PUT", std::string(kDeploymentsUrl) + "/web?fieldValidation=Warn", body);
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.warnings, Split(kBadJsonProblems));
  EXPECT_EQ(r.body.at("spec").at("replicas"), 3);
}

// ---- patches ------------------------------------------------------------------------------------

constexpr char kMergePatch[] = R"({"spec":{"bogus":1,"twice":1,"twice":2,"paused":true,
  "paused":false,"template":{"spec":{"containers":[{"name":"c","image":"a","image":"b",
  "bogusNested":"y"}]}}}})";

TEST_F(StrictDecodingTest, MergePatchReportsItsDuplicatesThenTheResultsSortedUnknownFields) {
  ASSERT_EQ(Do("POST", kDeploymentsUrl, kGoodJson).code, 201);
  const std::string problems = R"(duplicate field "spec.twice", duplicate field "spec.paused", )"
                               R"(duplicate field "spec.template.spec.containers[0].image", )"
                               R"(unknown field "spec.bogus", )"
                               R"(unknown field "spec.template.spec.containers[0].bogusNested", )"
                               R"(unknown field "spec.twice")";
  Reply r = Do("PATCH", std::string(kDeploymentsUrl) + "/web?fieldValidation=Strict", kMergePatch,
               "application/merge-patch+json");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.reason(), "BadRequest");
  EXPECT_EQ(r.message(), "strict decoding error: " + problems);

  r = Do("PATCH", std::string(kDeploymentsUrl) + "/web", kMergePatch,
         "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.warnings, Split(problems));
  EXPECT_EQ(r.body.at("spec").at("paused"), false);

  r = Do("PATCH", std::string(kDeploymentsUrl) + "/web?fieldValidation=Ignore", kMergePatch,
         "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_TRUE(r.warnings.empty());
}

// A strategic merge patch of /status (the kubelet's and controllers' kind of write): its result
// is checked where the patch reaches (PruneUnknownFieldsWhere), directives aside, down into list
// items and structs; the unknown fields are reported and never stored.
TEST_F(StrictDecodingTest, StatusStrategicMergePatchReportsAndDropsUnknownFields) {
  ASSERT_EQ(Do("POST", kDeploymentsUrl, kGoodJson).code, 201);
  const std::string url = std::string(kDeploymentsUrl) + "/web/status";
  const std::string patch =
      R"({"status":{"$setElementOrder/conditions":[{"type":"Available"}],"replicas":2,)"
      R"("bogus":1,"conditions":[{"type":"Available","status":"True","nope":"x"}]},)"
      R"("metadata":{"labels":{"tier":"fe"},"odd":true}})";
  const std::string problems = R"(unknown field "metadata.odd", unknown field "status.bogus", )"
                               R"(unknown field "status.conditions[0].nope")";
  Reply r =
      Do("PATCH", url + "?fieldValidation=Strict", patch, "application/strategic-merge-patch+json");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.message(), "strict decoding error: " + problems);

  r = Do("PATCH", url, patch, "application/strategic-merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.warnings, Split(problems));
  Reply got = Do("GET", std::string(kDeploymentsUrl) + "/web");
  ASSERT_EQ(got.code, 200);
  const json::object& status = got.body.at("status").as_object();
  EXPECT_EQ(status.at("replicas"), 2);
  EXPECT_FALSE(status.contains("bogus"));
  EXPECT_EQ(status.at("conditions").at(0).at("status"), "True");
  EXPECT_FALSE(status.at("conditions").at(0).as_object().contains("nope"));
  EXPECT_FALSE(got.body.at("metadata").as_object().contains("odd"));
}

TEST_F(StrictDecodingTest, StrategicMergePatchWithOnlyDuplicates) {
  ASSERT_EQ(Do("POST", kDeploymentsUrl, kGoodJson).code, 201);
  const std::string patch =
      R"({"spec":{"paused":true,"paused":false,"template":{"spec":{"containers":[)"
      R"({"name":"c","imagePullPolicy":"Always","imagePullPolicy":"Never"}]}}}})";
  Reply r = Do("PATCH", std::string(kDeploymentsUrl) + "/web?fieldValidation=Strict", patch,
               "application/strategic-merge-patch+json");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.message(), R"(strict decoding error: duplicate field "spec.paused", )"
                         R"(duplicate field "spec.template.spec.containers[0].imagePullPolicy")");
  r = Do("PATCH", std::string(kDeploymentsUrl) + "/web?fieldValidation=Warn", patch,
         "application/strategic-merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(
      r.body.at("spec").at("template").at("spec").at("containers").at(0).at("imagePullPolicy"),
      "Never");
}

TEST_F(StrictDecodingTest, JsonPatchReportsItsOperationsThenTheResultsUnknownFields) {
  ASSERT_EQ(Do("POST", kDeploymentsUrl, kGoodJson).code, 201);
  const std::string patch = R"([
    {"op":"add","path":"/spec/bogus","value":"v","extra":"x"},
    {"op":"add","path":"/spec/bogus2","path":"/spec/bogus3","value":"v"},
    {"op":"replace","path":"/spec/replicas","value":5}])";
  const std::string problems =
      R"(json patch unknown field "[0].extra", json patch duplicate field "[1].path", )"
      R"(unknown field "spec.bogus", unknown field "spec.bogus3")";
  Reply r = Do("PATCH", std::string(kDeploymentsUrl) + "/web?fieldValidation=Strict", patch,
               "application/json-patch+json");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.message(), "strict decoding error: " + problems);
  r = Do("PATCH", std::string(kDeploymentsUrl) + "/web?fieldValidation=Warn", patch,
         "application/json-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.warnings, Split(problems));
  EXPECT_EQ(r.body.at("spec").at("replicas"), 5);
}

// ---- apply --------------------------------------------------------------------------------------

// kubectl sends apply bodies as JSON; upstream reads them with its YAML decoder. Line numbers are
// those of the repeated key's value.
constexpr char kApplyDuplicates[] = R"({
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {"name": "web", "labels": {"app": "web"}},
  "spec": {
    "paused": false,
    "paused": true,
    "selector": {"matchLabels": {"app": "web"}},
    "template": {
      "metadata": {"labels": {"app": "web"}},
      "spec": {"containers": [{
        "name": "c",
        "image": "nginx",
        "image":
          "nginx:1.27"
      }]}
    }
  }
})";

TEST_F(StrictDecodingTest, ApplyWithDuplicateKeys) {
  const std::string target = std::string(kDeploymentsUrl) + "/web?fieldManager=mgr";
  Reply r = Do("PATCH", target + "&fieldValidation=Strict", kApplyDuplicates,
               "application/apply-patch+yaml");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.reason(), "BadRequest");
  EXPECT_EQ(r.message(),
            "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n"
            "  line 7: key \"paused\" already set in map\n"
            "  line 15: key \"image\" already set in map");
  EXPECT_EQ(GetCode("web"), 404);

  r = Do("PATCH", target, kApplyDuplicates, "application/apply-patch+yaml");
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(r.warnings, (std::vector<std::string>{"line 7: key \"paused\" already set in map",
                                                  "line 15: key \"image\" already set in map"}));
  EXPECT_EQ(r.body.at("spec").at("paused"), true);

  // An update apply: the same answers; Ignore is silent.
  r = Do("PATCH", target + "&fieldValidation=Strict", kApplyDuplicates,
         "application/apply-patch+yaml");
  EXPECT_EQ(r.code, 400) << r.body;
  r = Do("PATCH", target + "&fieldValidation=Ignore", kApplyDuplicates,
         "application/apply-patch+yaml");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_TRUE(r.warnings.empty());
}

TEST_F(StrictDecodingTest, YamlApplyWithDuplicateKeys) {
  const std::string yaml = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: c
        image: nginx
)";
  Reply r =
      Do("PATCH", std::string(kDeploymentsUrl) + "/web?fieldManager=mgr&fieldValidation=Strict",
         yaml, "application/apply-patch+yaml");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.message(),
            "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n"
            "  line 7: key \"replicas\" already set in map");
}

// ---- /scale -------------------------------------------------------------------------------------

TEST_F(StrictDecodingTest, ScaleBodiesAreDecodedAsScales) {
  ASSERT_EQ(Do("POST", kDeploymentsUrl, kGoodJson).code, 201);
  const std::string scale = std::string(kDeploymentsUrl) + "/web/scale";
  Reply r = Do("PUT", scale + "?fieldValidation=Strict",
               R"({"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},
                   "spec":{"replicas":4,"replicas":5,"bogus":1}})");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.message(),
            R"(Scale in version "v1" cannot be handled as a Scale: strict decoding error: )"
            R"(duplicate field "spec.replicas", unknown field "spec.bogus")");
  r = Do("PUT", scale, R"({"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},
                           "spec":{"replicas":4,"replicas":5,"bogus":1}})");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.warnings, (std::vector<std::string>{R"(duplicate field "spec.replicas")",
                                                  R"(unknown field "spec.bogus")"}));
  EXPECT_EQ(r.body.at("spec").at("replicas"), 5);

  r = Do("PATCH", scale + "?fieldValidation=Strict", R"({"spec":{"replicas":6,"bogus":1}})",
         "application/merge-patch+json");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(r.message(), R"(strict decoding error: unknown field "spec.bogus")");
  r = Do("PATCH", scale + "?fieldValidation=Strict", R"({"spec":{"replicas":6}})",
         "application/strategic-merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.body.at("spec").at("replicas"), 6);
}

}  // namespace
}  // namespace converge::apiserver
