// CustomResourceDefinitions through the real kubectl against a live apiserver: a CRD is applied,
// becomes Established and served (discovery, OpenAPI for explain), its objects are created,
// listed with the CRD's printer columns, validated by its schema (errors as kubectl prints them
// for a real cluster), pruned, defaulted, updated through the status and scale subresources,
// server-side applied and edited; deleting the CRD deletes its objects and the kind; a restart
// serves everything again from the same data dir.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "testing/kubectl.h"
#include "testing/process.h"
#include "testing/server.h"

namespace converge::testing {
namespace {

namespace json = boost::json;

constexpr const char* kCrd = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: loadbalancers.lb.converge.io
spec:
  group: lb.converge.io
  scope: Namespaced
  names:
    plural: loadbalancers
    singular: loadbalancer
    kind: LoadBalancer
    shortNames: [clb]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - name: Port
      type: integer
      jsonPath: .spec.port
    - name: Address
      type: string
      jsonPath: .status.address
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        description: A LoadBalancer asks the cloud for one external load balancer.
        type: object
        properties:
          spec:
            description: What the load balancer should look like.
            type: object
            required: [port]
            properties:
              port:
                description: The port the load balancer listens on.
                type: integer
                minimum: 1
                maximum: 65535
              size:
                type: string
                enum: [small, large]
                default: small
              replicas:
                type: integer
                default: 1
              zones:
                type: array
                items: {type: string}
                x-kubernetes-list-type: set
          status:
            type: object
            properties:
              address: {type: string}
              replicas: {type: integer}
              selector: {type: string}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
)";

std::string LoadBalancer(const std::string& name, const std::string& spec) {
  return "apiVersion: lb.converge.io/v1\nkind: LoadBalancer\nmetadata:\n  name: " + name +
         "\nspec:\n" + spec;
}

class CrdTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start());
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available()) << "kubectl is not on PATH";
    cache_ = std::make_unique<TempDir>();
    kubectl_ = std::make_unique<Kubectl>(server_->kubeconfig_path(), cache_->path());
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ns_ = "crd-";
    for (char c : name) {
      ns_ += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    }
    ns_ = ns_.substr(0, 60);
    CommandResult r = kubectl_->Run({"create", "namespace", ns_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    InstallCrd();
  }

  void InstallCrd() {
    CommandResult r = kubectl_->Run({"apply", "-f", "-"}, kCrd);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = kubectl_->Run({"wait", "--for=condition=Established", "--timeout=30s",
                       "crd/loadbalancers.lb.converge.io"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  CommandResult K(std::vector<std::string> args, const std::string& stdin_data = "") {
    args.insert(args.begin(), {"-n", ns_});
    return kubectl_->Run(args, stdin_data);
  }
  std::string JsonPath(const std::string& what, const std::string& expr) {
    CommandResult r = K({"get", what, "-o", "jsonpath=" + expr});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  json::object GetJson(const std::string& what) {
    CommandResult r = K({"get", what, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    boost::system::error_code ec;
    json::value v = json::parse(r.out, ec);
    return v.is_object() ? v.get_object() : json::object();
  }

  static ServerProcess* server_;
  std::unique_ptr<TempDir> cache_;
  std::unique_ptr<Kubectl> kubectl_;
  std::string ns_;
};

ServerProcess* CrdTest::server_ = nullptr;

TEST_F(CrdTest, EstablishedAndDiscoverable) {
  EXPECT_EQ(kubectl_
                ->Run({"get", "crd", "loadbalancers.lb.converge.io", "-o",
                       "jsonpath={.status.conditions[?(@.type==\"NamesAccepted\")].reason}"})
                .out,
            "NoConflicts");
  EXPECT_EQ(kubectl_
                ->Run({"get", "crd", "loadbalancers.lb.converge.io", "-o",
                       "jsonpath={.status.acceptedNames.kind}"})
                .out,
            "LoadBalancer");
  CommandResult r = kubectl_->Run({"api-resources", "--api-group=lb.converge.io"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("loadbalancers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("clb"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lb.converge.io/v1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LoadBalancer"), std::string::npos) << r.out;
  r = kubectl_->Run({"api-versions"});
  EXPECT_NE(r.out.find("lb.converge.io/v1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lb.converge.io/v1beta1\n"), std::string::npos) << r.out;
}

TEST_F(CrdTest, CreateGetWithPrinterColumnsAndDefaults) {
  CommandResult r = K({"apply", "-f", "-"}, LoadBalancer("web", "  port: 8080\n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "loadbalancer.lb.converge.io/web created\n");
  r = K({"get", "loadbalancers"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // NAME, then the CRD's columns; an absent status.address is an empty cell.
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "NAME   PORT   ADDRESS   AGE") << r.out;
  EXPECT_EQ(r.out.find("web    8080             "), r.out.find('\n') + 1) << r.out;
  // Short name and category.
  EXPECT_EQ(K({"get", "clb", "web", "-o", "name"}).out, "loadbalancer.lb.converge.io/web\n");
  r = K({"get", "all"});
  EXPECT_NE(r.out.find("loadbalancer.lb.converge.io/web"), std::string::npos) << r.out;
  // Defaults from the schema; generation starts at 1.
  EXPECT_EQ(JsonPath("loadbalancer/web", "{.spec.size}/{.spec.replicas}/{.metadata.generation}"),
            "small/1/1");
}

TEST_F(CrdTest, ExplainReadsTheSchema) {
  CommandResult r = kubectl_->Run({"explain", "loadbalancers.spec"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GROUP:      lb.converge.io"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("KIND:       LoadBalancer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("What the load balancer should look like."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("port\t<integer> -required-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("The port the load balancer listens on."), std::string::npos) << r.out;
}

TEST_F(CrdTest, ValidationErrorsAsKubectlPrintsThem) {
  CommandResult r = K({"create", "-f", "-"}, LoadBalancer("bad", "  port: eighty\n  size: huge\n"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "The LoadBalancer \"bad\" is invalid: \n"
            "* spec.port: Invalid value: \"string\": spec.port in body must be of type integer: "
            "\"string\"\n"
            "* spec.size: Unsupported value: \"huge\": supported values: \"small\", \"large\"\n");
  r = K({"create", "-f", "-"}, LoadBalancer("bad", "  port: 70000\n"));
  EXPECT_EQ(r.err,
            "The LoadBalancer \"bad\" is invalid: spec.port: Invalid value: 70000: spec.port in "
            "body should be less than or equal to 65535\n");
  r = K({"create", "-f", "-"}, LoadBalancer("bad", "  size: small\n"));
  EXPECT_EQ(r.err, "The LoadBalancer \"bad\" is invalid: spec.port: Required value\n");
  r = K({"create", "-f", "-"}, LoadBalancer("bad", "  port: 1\n  zones: [a, a]\n"));
  EXPECT_EQ(r.err, "The LoadBalancer \"bad\" is invalid: spec.zones[1]: Duplicate value: \"a\"\n");
  // Nothing was stored.
  EXPECT_NE(K({"get", "loadbalancer", "bad"}).exit_code, 0);
}

TEST_F(CrdTest, UnknownFieldsArePrunedOrRejectedUnderStrict) {
  // kubectl apply validates strictly by default (fieldValidation=Strict).
  CommandResult r = K({"apply", "-f", "-"}, LoadBalancer("strict", "  port: 1\n  bogus: 2\n"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "Error from server (BadRequest): error when creating \"STDIN\": LoadBalancer in "
            "version \"v1\" cannot be handled as a LoadBalancer: strict decoding error: unknown "
            "field \"spec.bogus\"\n");
  // The same shape as a built-in kind's.
  r = K({"apply", "-f", "-"}, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\nbogus: 1\n");
  EXPECT_EQ(r.err,
            "Error from server (BadRequest): error when creating \"STDIN\": ConfigMap in "
            "version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown "
            "field \"bogus\"\n");
  // Without strict validation the field is dropped silently.
  r = K({"apply", "--validate=false", "-f", "-"},
        LoadBalancer("lenient", "  port: 1\n  bogus: 2\n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonPath("loadbalancer/lenient", "{.spec}"),
            R"({"port":1,"replicas":1,"size":"small"})");
}

TEST_F(CrdTest, StatusSubresourceAndGeneration) {
  ASSERT_EQ(K({"apply", "-f", "-"}, LoadBalancer("st", "  port: 80\n")).exit_code, 0);
  CommandResult r = K({"patch", "loadbalancer", "st", "--subresource=status", "--type=merge", "-p",
                       R"({"status":{"address":"10.0.0.7"}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonPath("loadbalancer/st", "{.status.address}/{.metadata.generation}"), "10.0.0.7/1");
  // Status through the main resource is ignored; a spec change moves the generation.
  r = K({"patch", "loadbalancer", "st", "--type=merge", "-p",
         R"({"spec":{"port":81},"status":{"address":"6.6.6.6"}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonPath("loadbalancer/st", "{.spec.port}/{.status.address}/{.metadata.generation}"),
            "81/10.0.0.7/2");
  r = K({"get", "loadbalancer", "st"});
  EXPECT_NE(r.out.find("10.0.0.7"), std::string::npos) << r.out;
  // Strategic merge patches are not for custom resources.
  r = K({"patch", "loadbalancer", "st", "--type=strategic", "-p", R"({"spec":{"port":82}})"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("application/strategic-merge-patch+json is not supported by "
                       "lb.converge.io/v1, Kind=LoadBalancer"),
            std::string::npos)
      << r.err;
}

TEST_F(CrdTest, ScaleSubresource) {
  ASSERT_EQ(K({"apply", "-f", "-"}, LoadBalancer("sc", "  port: 80\n")).exit_code, 0);
  CommandResult r = K({"scale", "loadbalancer", "sc", "--replicas=3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "loadbalancer.lb.converge.io/sc scaled\n");
  EXPECT_EQ(JsonPath("loadbalancer/sc", "{.spec.replicas}"), "3");
  r = K({"get", "--raw", "/apis/lb.converge.io/v1/namespaces/" + ns_ + "/loadbalancers/sc/scale"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json::object scale = json::parse(r.out).as_object();
  EXPECT_EQ(scale["kind"], "Scale");
  EXPECT_EQ(scale["spec"].as_object()["replicas"], 3);
}

// Server-side apply of a Scale to a custom resource's /scale: the CRD's specReplicasPath is the
// Scale's spec.replicas, owned through the scale subresource.
TEST_F(CrdTest, ApplyToTheScaleSubresource) {
  ASSERT_EQ(
      K({"apply", "--server-side", "-f", "-"}, LoadBalancer("sa", "  port: 80\n  replicas: 2\n"))
          .exit_code,
      0);
  std::unique_ptr<TestClient> client = server_->Client();
  const std::string scale = "/apis/lb.converge.io/v1/namespaces/" + ns_ + "/loadbalancers/sa/scale";
  const std::string body = R"({"apiVersion":"autoscaling/v1","kind":"Scale",)"
                           R"("metadata":{"name":"sa"},"spec":{"replicas":4}})";
  HttpResponse r =
      client->Patch(scale + "?fieldManager=autoscaler", body, "application/apply-patch+yaml");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(r.Json().at("message"),
            R"(Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas)");
  r = client->Patch(scale + "?fieldManager=autoscaler&force=true", body,
                    "application/apply-patch+yaml");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json().at("spec").at("replicas"), 4);
  EXPECT_EQ(JsonPath("loadbalancer/sa", "{.spec.replicas}"), "4");
  EXPECT_EQ(JsonPath("loadbalancer/sa",
                     "{range .metadata.managedFields[?(@.manager==\"autoscaler\")]}"
                     "{.operation}/{.subresource}/{.apiVersion}/{.fieldsV1}{end}"),
            R"(Apply/scale/lb.converge.io/v1/{"f:spec":{"f:replicas":{}}})");
  // kubectl's own apply of the object now conflicts with the autoscaler.
  CommandResult conflict =
      K({"apply", "--server-side", "-f", "-"}, LoadBalancer("sa", "  port: 80\n  replicas: 2\n"));
  EXPECT_EQ(conflict.exit_code, 1);
  EXPECT_NE(conflict.err.find("conflict with \"autoscaler\" with subresource \"scale\": "
                              ".spec.replicas"),
            std::string::npos)
      << conflict.err;
}

// Repeated keys of custom resource bodies and patches: repeated keys first, then the unknown
// fields (upstream's order for custom resources), under each fieldValidation.
TEST_F(CrdTest, DuplicateFieldsUnderEachFieldValidation) {
  TempDir dir;
  const std::string file = dir.path() + "/lb.json";
  {
    std::ofstream f(file);
    f << R"({"apiVersion":"lb.converge.io/v1","kind":"LoadBalancer","metadata":{"name":"dup"},)"
      << R"("spec":{"bogus":1,"port":80,"port":81,"zones":["a"],"bogus":2}})";
  }
  const std::string collection = "/apis/lb.converge.io/v1/namespaces/" + ns_ + "/loadbalancers";
  CommandResult r =
      kubectl_->Run({"create", "--raw", collection + "?fieldValidation=Strict", "-f", file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "Error from server (BadRequest): LoadBalancer in version \"v1\" cannot be handled as "
            "a LoadBalancer: strict decoding error: duplicate field \"spec.port\", duplicate field "
            "\"spec.bogus\", unknown field \"spec.bogus\"\n");
  EXPECT_NE(K({"get", "loadbalancer", "dup"}).exit_code, 0);
  r = kubectl_->Run({"create", "--raw", collection, "-f", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "Warning: duplicate field \"spec.port\"\nWarning: duplicate field \"spec.bogus\"\n"
            "Warning: unknown field \"spec.bogus\"\n");
  EXPECT_EQ(JsonPath("loadbalancer/dup", "{.spec.port}"), "81");

  // kubectl patch (no fieldValidation: Warn).
  r = K({"patch", "loadbalancer", "dup", "--type=merge", "-p",
         R"({"spec":{"zzz":1,"port":82,"port":83,"aaa":1}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "Warning: duplicate field \"spec.port\"\nWarning: unknown field \"spec.aaa\"\n"
            "Warning: unknown field \"spec.zzz\"\n");
  EXPECT_EQ(JsonPath("loadbalancer/dup", "{.spec.port}"), "83");
}

TEST_F(CrdTest, ServerSideApplyAndEdit) {
  CommandResult r =
      K({"apply", "--server-side", "-f", "-"}, LoadBalancer("ssa", "  port: 80\n  zones: [a]\n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "loadbalancer.lb.converge.io/ssa serverside-applied\n");
  EXPECT_EQ(JsonPath("loadbalancer/ssa", "{.metadata.managedFields[0].manager}"), "kubectl");
  // Another manager changing the port conflicts; --force-conflicts takes it over.
  r = K({"apply", "--server-side", "--field-manager=other", "-f", "-"},
        LoadBalancer("ssa", "  port: 81\n"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("conflict with \"kubectl\""), std::string::npos) << r.err;
  r = K({"apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-"},
        LoadBalancer("ssa", "  port: 81\n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonPath("loadbalancer/ssa", "{.spec.port}"), "81");
  // kubectl edit sends a JSON merge patch for custom resources.
  TempDir dir;
  std::string editor = dir.path() + "/editor.sh";
  {
    std::ofstream f(editor);
    f << "#!/bin/sh\nsed -i 's/port: 81/port: 82/' \"$1\"\n";
  }
  ASSERT_EQ(RunCommand({"chmod", "+x", editor}).exit_code, 0);
  r = kubectl_->Run({"-n", ns_, "edit", "loadbalancer", "ssa"}, "", {{"KUBE_EDITOR", editor}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonPath("loadbalancer/ssa", "{.spec.port}"), "82");
}

TEST_F(CrdTest, ListWatchSelectorsAndPaging) {
  for (const char* name : {"a", "b", "c"}) {
    std::string manifest =
        "apiVersion: lb.converge.io/v1\nkind: LoadBalancer\nmetadata:\n  name: " +
        std::string(name) + "\n  labels:\n    tier: " + (std::string(name) == "b" ? "db" : "web") +
        "\nspec:\n  port: 80\n";
    ASSERT_EQ(K({"apply", "-f", "-"}, manifest).exit_code, 0);
  }
  EXPECT_EQ(K({"get", "clb", "-l", "tier=web", "-o", "name"}).out,
            "loadbalancer.lb.converge.io/a\nloadbalancer.lb.converge.io/c\n");
  EXPECT_EQ(K({"get", "clb", "--field-selector", "metadata.name=b", "-o", "name"}).out,
            "loadbalancer.lb.converge.io/b\n");
  CommandResult r = K({"get", "clb", "--chunk-size=1", "-o", "name"});
  EXPECT_EQ(r.out,
            "loadbalancer.lb.converge.io/a\nloadbalancer.lb.converge.io/b\n"
            "loadbalancer.lb.converge.io/c\n");
  // A watch sees a change made after it started.
  auto watch = kubectl_->Start({"-n", ns_, "get", "clb", "-w", "-o", "name"});
  ASSERT_TRUE(watch->WaitFor("loadbalancer.lb.converge.io/c", std::chrono::seconds(30)));
  ASSERT_EQ(K({"apply", "-f", "-"}, LoadBalancer("d", "  port: 80\n")).exit_code, 0);
  EXPECT_TRUE(watch->WaitFor("loadbalancer.lb.converge.io/d", std::chrono::seconds(30)))
      << watch->out_so_far();
  watch->Stop();
}

TEST_F(CrdTest, ServedVersionsDifferOnlyInApiVersion) {
  ASSERT_EQ(K({"apply", "-f", "-"}, LoadBalancer("mv", "  port: 80\n")).exit_code, 0);
  EXPECT_EQ(JsonPath("loadbalancers.v1beta1.lb.converge.io/mv", "{.apiVersion}/{.spec.port}"),
            "lb.converge.io/v1beta1/80");
  EXPECT_EQ(JsonPath("loadbalancers.v1.lb.converge.io/mv", "{.apiVersion}"), "lb.converge.io/v1");
  // Watch events too come in the version watched.
  auto watch = kubectl_->Start({"-n", ns_, "get", "loadbalancers.v1beta1.lb.converge.io", "mv",
                                "-w", "-o", "jsonpath={.apiVersion} {.spec.port}{\"\\n\"}"});
  ASSERT_TRUE(watch->WaitFor("lb.converge.io/v1beta1 80", std::chrono::seconds(30)))
      << watch->out_so_far();
  ASSERT_EQ(
      K({"patch", "loadbalancer", "mv", "--type=merge", "-p", R"({"spec":{"port":90}})"}).exit_code,
      0);
  EXPECT_TRUE(watch->WaitFor("lb.converge.io/v1beta1 90", std::chrono::seconds(30)))
      << watch->out_so_far();
  watch->Stop();
}

TEST_F(CrdTest, ClusterScopedKind) {
  const std::string crd = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: regions.lb.converge.io
spec:
  group: lb.converge.io
  scope: Cluster
  names: {plural: regions, singular: region, kind: Region}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              zones: {type: integer, minimum: 1}
)";
  ASSERT_EQ(kubectl_->Run({"apply", "-f", "-"}, crd).exit_code, 0);
  ASSERT_EQ(kubectl_
                ->Run({"wait", "--for=condition=Established", "--timeout=30s",
                       "crd/regions.lb.converge.io"})
                .exit_code,
            0);
  CommandResult r = kubectl_->Run(
      {"apply", "-f", "-"},
      "apiVersion: lb.converge.io/v1\nkind: Region\nmetadata:\n  name: eu\nspec:\n  zones: 3\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(kubectl_->Run({"get", "region", "eu", "-o", "jsonpath={.spec.zones}"}).out, "3");
  r = kubectl_->Run({"get", "regions"});
  // The default columns: NAME and AGE.
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "NAME   AGE") << r.out;
  r = kubectl_->Run({"api-resources", "--namespaced=false", "--api-group=lb.converge.io"});
  EXPECT_NE(r.out.find("regions"), std::string::npos) << r.out;
  ASSERT_EQ(kubectl_->Run({"delete", "crd", "regions.lb.converge.io"}).exit_code, 0);
}

TEST_F(CrdTest, NameConflictsAreReported) {
  const std::string other = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: balancers.lb.converge.io
spec:
  group: lb.converge.io
  scope: Cluster
  names: {plural: balancers, kind: Balancer, shortNames: [clb]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
)";
  ASSERT_EQ(kubectl_->Run({"apply", "-f", "-"}, other).exit_code, 0);
  ASSERT_EQ(kubectl_
                ->Run({"wait", "--for=condition=NamesAccepted=False", "--timeout=30s",
                       "crd/balancers.lb.converge.io"})
                .exit_code,
            0);
  EXPECT_EQ(kubectl_
                ->Run({"get", "crd", "balancers.lb.converge.io", "-o",
                       "jsonpath={.status.conditions[?(@.type==\"NamesAccepted\")].message}"})
                .out,
            "\"clb\" is already in use");
  // Not every name is accepted: not established, not served.
  EXPECT_EQ(kubectl_
                ->Run({"get", "crd", "balancers.lb.converge.io", "-o",
                       "jsonpath={.status.conditions[?(@.type==\"Established\")].reason}"})
                .out,
            "NotAccepted");
  ASSERT_EQ(kubectl_->Run({"delete", "crd", "balancers.lb.converge.io"}).exit_code, 0);
}

TEST_F(CrdTest, DeletingTheCrdDeletesObjectsAndTheKind) {
  ASSERT_EQ(K({"apply", "-f", "-"}, LoadBalancer("gone", "  port: 80\n")).exit_code, 0);
  CommandResult r =
      kubectl_->Run({"delete", "crd", "loadbalancers.lb.converge.io", "--timeout=60s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(kubectl_->Run({"get", "crd", "loadbalancers.lb.converge.io"}).exit_code, 0);
  // A fresh discovery cache: the kind is gone from api-resources.
  TempDir fresh;
  Kubectl k(server_->kubeconfig_path(), fresh.path());
  r = k.Run({"api-resources"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("loadbalancers"), std::string::npos) << r.out;
  r = k.Run({"-n", ns_, "get", "loadbalancers"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("the server doesn't have a resource type \"loadbalancers\""),
            std::string::npos)
      << r.err;
  // Recreated, the kind is empty: the old object went with the CRD.
  InstallCrd();
  EXPECT_EQ(K({"get", "loadbalancers", "-o", "name"}).out, "");
}

TEST_F(CrdTest, ServedAgainAfterRestart) {
  ASSERT_EQ(K({"apply", "-f", "-"}, LoadBalancer("durable", "  port: 443\n")).exit_code, 0);
  ASSERT_TRUE(server_->Restart());
  kubectl_ = std::make_unique<Kubectl>(server_->kubeconfig_path(), cache_->path());
  EXPECT_EQ(JsonPath("loadbalancer/durable", "{.spec.port}"), "443");
  CommandResult r = K({"get", "clb"});
  EXPECT_NE(r.out.find("durable"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace converge::testing
