// `kubectl apply --server-side` against a live Converge server: first apply, re-apply with a
// changed field, a conflict with another manager and its --force-conflicts resolution, the
// client-side to server-side migration, and managedFields as kubectl shows them.
#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "testing/kubectl.h"
#include "testing/server.h"

namespace converge {
namespace {

using testing::CommandResult;
using testing::Kubectl;
using testing::ServerProcess;
using testing::TempDir;

class ServerSideApplyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start());
    cache_ = new TempDir();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete cache_;
  }
  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available()) << "kubectl is not on PATH";
    kubectl_ = std::make_unique<Kubectl>(server_->kubeconfig_path(), cache_->path());
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ns_ = "ssa-";
    for (char c : name) {
      ns_ += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    }
    ns_ = ns_.substr(0, 60);
    CommandResult r = kubectl_->Run({"create", "namespace", ns_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // kubectl -n <test namespace> <args>, with `stdin_data` as the manifest for "-f -".
  CommandResult K(std::vector<std::string> args, const std::string& stdin_data = "") {
    args.insert(args.begin(), {"-n", ns_});
    return kubectl_->Run(args, stdin_data);
  }
  std::string JsonPath(const std::string& resource, const std::string& expr) {
    CommandResult r = K({"get", resource, "-o", "jsonpath=" + expr});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  static ServerProcess* server_;
  static TempDir* cache_;
  std::unique_ptr<Kubectl> kubectl_;
  std::string ns_;
};

ServerProcess* ServerSideApplyTest::server_ = nullptr;
TempDir* ServerSideApplyTest::cache_ = nullptr;

std::string Deployment(int replicas, const std::string& image = "nginx:1.27") {
  return R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: )" +
         std::to_string(replicas) + R"(
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: )" +
         image + R"(
        ports:
        - containerPort: 80
)";
}

constexpr char kConflictHelp[] =
    "Please review the fields above--they currently have other managers.";

TEST_F(ServerSideApplyTest, FirstApplyThenReapplyWithAChangedField) {
  CommandResult first = K({"apply", "--server-side", "-f", "-"}, Deployment(2));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "deployment.apps/web serverside-applied\n");
  EXPECT_EQ(JsonPath("deployment/web", "{.spec.replicas}"), "2");
  // The applier is recorded as manager "kubectl", operation Apply, owning what it applied.
  EXPECT_EQ(JsonPath("deployment/web",
                     "{.metadata.managedFields[*].manager}/"
                     "{.metadata.managedFields[*].operation}"),
            "kubectl/Apply");
  // Defaults the server added are owned by nobody.
  const std::string fields =
      JsonPath("deployment/web", "{.metadata.managedFields[0].fieldsV1.f:spec}");
  EXPECT_NE(fields.find("f:replicas"), std::string::npos) << fields;
  EXPECT_EQ(fields.find("f:revisionHistoryLimit"), std::string::npos) << fields;

  CommandResult again = K({"apply", "--server-side", "-f", "-"}, Deployment(3, "nginx:1.27.1"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "deployment.apps/web serverside-applied\n");
  EXPECT_EQ(
      JsonPath("deployment/web", "{.spec.replicas} {.spec.template.spec.containers[0].image}"),
      "3 nginx:1.27.1");
}

TEST_F(ServerSideApplyTest, ManagedFieldsAreHiddenUnlessAsked) {
  ASSERT_EQ(K({"apply", "--server-side", "-f", "-"}, Deployment(1)).exit_code, 0);
  CommandResult plain = K({"get", "deployment", "web", "-o", "yaml"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("managedFields"), std::string::npos) << plain.out;
  CommandResult shown = K({"get", "deployment", "web", "-o", "yaml", "--show-managed-fields"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("  managedFields:\n  - apiVersion: apps/v1\n    fieldsType: FieldsV1\n"),
            std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("    manager: kubectl\n    operation: Apply\n"), std::string::npos)
      << shown.out;
}

TEST_F(ServerSideApplyTest, ConflictWithAnotherManagerThenForceConflicts) {
  ASSERT_EQ(K({"apply", "--server-side", "-f", "-"}, Deployment(2)).exit_code, 0);

  CommandResult conflict =
      K({"apply", "--server-side", "--field-manager=ci", "-f", "-"}, Deployment(5));
  EXPECT_EQ(conflict.exit_code, 1);
  EXPECT_EQ(
      conflict.err.rfind(
          "error: Apply failed with 1 conflict: conflict with \"kubectl\": .spec.replicas\n", 0),
      0u)
      << conflict.err;
  EXPECT_NE(conflict.err.find(kConflictHelp), std::string::npos) << conflict.err;
  EXPECT_EQ(JsonPath("deployment/web", "{.spec.replicas}"), "2");

  CommandResult forced =
      K({"apply", "--server-side", "--field-manager=ci", "--force-conflicts", "-f", "-"},
        Deployment(5));
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.out, "deployment.apps/web serverside-applied\n");
  EXPECT_EQ(JsonPath("deployment/web", "{.spec.replicas}"), "5");
  // ci took .spec.replicas over; both still share the fields they set to the same values.
  const std::string kubectl_fields = JsonPath(
      "deployment/web", R"({.metadata.managedFields[?(@.manager=="kubectl")].fieldsV1.f:spec})");
  EXPECT_EQ(kubectl_fields.find("f:replicas"), std::string::npos) << kubectl_fields;
  EXPECT_NE(kubectl_fields.find("f:template"), std::string::npos) << kubectl_fields;
  const std::string ci_fields = JsonPath(
      "deployment/web", R"({.metadata.managedFields[?(@.manager=="ci")].fieldsV1.f:spec})");
  EXPECT_NE(ci_fields.find("f:replicas"), std::string::npos) << ci_fields;
}

TEST_F(ServerSideApplyTest, ScaleThenApplyConflictsWithTheScaleSubresource) {
  ASSERT_EQ(K({"apply", "--server-side", "-f", "-"}, Deployment(2)).exit_code, 0);
  CommandResult scaled = K({"scale", "deployment", "web", "--replicas=4"});
  ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
  CommandResult conflict = K({"apply", "--server-side", "-f", "-"}, Deployment(2));
  EXPECT_EQ(conflict.exit_code, 1);
  EXPECT_EQ(conflict.err.rfind("error: Apply failed with 1 conflict: conflict with \"kubectl\" "
                               "with subresource \"scale\" using apps/v1: .spec.replicas\n",
                               0),
            0u)
      << conflict.err;
  EXPECT_EQ(JsonPath("deployment/web", "{.spec.replicas}"), "4");
}

constexpr char kScaleManifest[] =
    "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: web\nspec:\n  replicas: 5\n";

// Server-side apply of an autoscaling/v1 Scale to deployments/web/scale (what client-go's
// ApplyScale sends): the Scale's spec.replicas is the Deployment's, owned by whoever applied or
// wrote it, with conflicts both ways.
TEST_F(ServerSideApplyTest, ApplyToTheScaleSubresource) {
  ASSERT_EQ(K({"apply", "--server-side", "-f", "-"}, Deployment(2)).exit_code, 0);
  std::unique_ptr<testing::TestClient> client = server_->Client();
  const std::string scale = "/apis/apps/v1/namespaces/" + ns_ + "/deployments/web/scale";
  const std::string body = R"({"apiVersion":"autoscaling/v1","kind":"Scale",)"
                           R"("metadata":{"name":"web"},"spec":{"replicas":5}})";
  testing::HttpResponse r =
      client->Patch(scale + "?fieldManager=autoscaler", body, "application/apply-patch+yaml");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(r.Json().at("message"),
            R"(Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas)");
  EXPECT_EQ(JsonPath("deployment/web", "{.spec.replicas}"), "2");

  r = client->Patch(scale + "?fieldManager=autoscaler&force=true", body,
                    "application/apply-patch+yaml");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json().at("kind"), "Scale");
  EXPECT_EQ(r.Json().at("spec").at("replicas"), 5);
  EXPECT_EQ(JsonPath("deployment/web", "{.spec.replicas}"), "5");
  EXPECT_EQ(JsonPath("deployment/web",
                     "{range .metadata.managedFields[?(@.manager==\"autoscaler\")]}"
                     "{.operation}/{.subresource}/{.apiVersion}/{.fieldsV1}{end}"),
            R"(Apply/scale/apps/v1/{"f:spec":{"f:replicas":{}}})");

  // The Deployment's applier now conflicts with the Scale's, as kubectl prints it.
  CommandResult conflict = K({"apply", "--server-side", "-f", "-"}, Deployment(2));
  EXPECT_EQ(conflict.exit_code, 1);
  EXPECT_EQ(conflict.err.rfind("error: Apply failed with 1 conflict: conflict with \"autoscaler\" "
                               "with subresource \"scale\": .spec.replicas\n",
                               0),
            0u)
      << conflict.err;
  ASSERT_EQ(K({"apply", "--server-side", "--force-conflicts", "-f", "-"}, Deployment(3)).exit_code,
            0);
  EXPECT_EQ(JsonPath("deployment/web", "{.spec.replicas}"), "3");

  // kubectl 1.32's apply --subresource=scale cannot send a Scale: kubectl finds no resource for
  // the kind (on any cluster); with the Deployment's manifest the server refuses the version.
  CommandResult scale_file =
      K({"apply", "--server-side", "--subresource=scale", "--validate=false", "-f", "-"},
        kScaleManifest);
  EXPECT_EQ(scale_file.exit_code, 1);
  EXPECT_NE(scale_file.err.find("no matches for kind \"Scale\" in version \"autoscaling/v1\""),
            std::string::npos)
      << scale_file.err;
  CommandResult workload_file =
      K({"apply", "--server-side", "--subresource=scale", "-f", "-"}, Deployment(4));
  EXPECT_EQ(workload_file.exit_code, 1);
  EXPECT_EQ(workload_file.err,
            "Error from server (BadRequest): Incorrect version specified in apply patch. "
            "Specified patch version: apps/v1, expected: autoscaling/v1\n");
  EXPECT_EQ(JsonPath("deployment/web", "{.spec.replicas}"), "3");
}

// Repeated keys in apply bodies: kubectl resolves them while reading a manifest (the last wins),
// so only other clients send them; the server answers as upstream's strict YAML decoder.
TEST_F(ServerSideApplyTest, DuplicateKeysInApplyBodies) {
  const std::string manifest =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n"
      "data:\n  a: \"1\"\n  a: \"2\"\n";
  CommandResult r = K({"apply", "--server-side", "-f", "-"}, manifest);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonPath("configmap/cfg", "{.data.a}"), "2");

  std::unique_ptr<testing::TestClient> client = server_->Client();
  const std::string target = "/api/v1/namespaces/" + ns_ + "/configmaps/cfg?fieldManager=m";
  testing::HttpResponse resp =
      client->Patch(target + "&fieldValidation=Strict", manifest, "application/apply-patch+yaml");
  EXPECT_EQ(resp.status, 400) << resp.body;
  EXPECT_EQ(resp.Json().at("reason"), "BadRequest");
  EXPECT_EQ(resp.Json().at("message"),
            "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n"
            "  line 7: key \"a\" already set in map");
  resp = client->Patch(target, manifest, "application/apply-patch+yaml");
  ASSERT_EQ(resp.status, 200) << resp.body;
  EXPECT_EQ(resp.headers["warning"], R"(299 - "line 7: key \"a\" already set in map")");
  resp =
      client->Patch(target + "&fieldValidation=Ignore", manifest, "application/apply-patch+yaml");
  ASSERT_EQ(resp.status, 200) << resp.body;
  EXPECT_EQ(resp.headers.count("warning"), 0u);
}

TEST_F(ServerSideApplyTest, ClientSideApplyMigratesToServerSide) {
  CommandResult csa = K({"apply", "-f", "-"}, Deployment(2));
  ASSERT_EQ(csa.exit_code, 0) << csa.err;
  EXPECT_EQ(csa.out, "deployment.apps/web created\n");
  EXPECT_EQ(JsonPath("deployment/web", "{.metadata.managedFields[*].manager}"),
            "kubectl-client-side-apply");

  // kubectl hands the client-side apply's fields to its server-side manager, so changing a
  // field the old manifest set does not conflict.
  CommandResult ssa = K({"apply", "--server-side", "-f", "-"}, Deployment(3));
  ASSERT_EQ(ssa.exit_code, 0) << ssa.err;
  EXPECT_EQ(ssa.out, "deployment.apps/web serverside-applied\n");
  EXPECT_EQ(JsonPath("deployment/web", "{.spec.replicas}"), "3");
  const std::string managers =
      JsonPath("deployment/web", "{range .metadata.managedFields[*]}{.manager}/{.operation} {end}");
  EXPECT_NE(managers.find("kubectl/Apply"), std::string::npos) << managers;
  EXPECT_EQ(managers.find("kubectl-client-side-apply"), std::string::npos) << managers;
}

TEST_F(ServerSideApplyTest, ImperativeCommandsRecordTheirManagers) {
  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1.27"}).exit_code, 0);
  ASSERT_EQ(K({"label", "deployment", "web", "tier=front"}).exit_code, 0);
  EXPECT_EQ(
      JsonPath("deployment/web", "{range .metadata.managedFields[*]}{.manager}/{.operation} {end}"),
      "kubectl-create/Update kubectl-label/Update ");
}

TEST_F(ServerSideApplyTest, ServerDryRunCreatesNothing) {
  CommandResult r = K({"apply", "--server-side", "--dry-run=server", "-f", "-"}, Deployment(2));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "deployment.apps/web serverside-applied (server dry run)\n");
  CommandResult get = K({"get", "deployment", "web"});
  EXPECT_EQ(get.exit_code, 1);
  EXPECT_EQ(get.err, "Error from server (NotFound): deployments.apps \"web\" not found\n");
}

TEST_F(ServerSideApplyTest, FieldDroppedFromTheManifestIsRemoved) {
  const std::string two_keys =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n"
      "data:\n  a: \"1\"\n  b: \"2\"\n";
  const std::string one_key =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n"
      "data:\n  a: \"1\"\n";
  ASSERT_EQ(K({"apply", "--server-side", "-f", "-"}, two_keys).exit_code, 0);
  EXPECT_EQ(JsonPath("configmap/cfg", "{.data}"), R"({"a":"1","b":"2"})");
  CommandResult r = K({"apply", "--server-side", "-f", "-"}, one_key);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "configmap/cfg serverside-applied\n");
  EXPECT_EQ(JsonPath("configmap/cfg", "{.data}"), R"({"a":"1"})");
}

}  // namespace
}  // namespace converge
