// Dynamic admission webhooks end to end: `converge apiserver` calls a small HTTPS webhook server
// running inside the test (loopback, certificates from a throw-away CA passed as caBundle) with
// AdmissionReview v1, and the real kubectl shows the outcome: denials worded as upstream's,
// JSONPatch mutations, namespace and object selectors, warnings, and timeouts and untrusted
// certificates under failurePolicy Fail and Ignore. A refused request changes nothing.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <thread>

#include "client/http_test_server.h"
#include "client/test_pki.h"
#include "testing/kubectl.h"
#include "testing/server.h"
#include "util/base64.h"

namespace converge {
namespace {

namespace json = boost::json;
using client::testing::TestHttpServer;
using client::testing::TestPki;
using client::testing::TestRequest;
using client::testing::TestResponse;
using testing::CommandResult;
using testing::Kubectl;
using testing::ServerProcess;
using testing::TempDir;

// The test's webhook: the path picks the behaviour.
TestResponse Answer(const TestRequest& r) {
  json::value review = json::parse(r.body);
  const json::object& req = review.at("request").as_object();
  json::object resp{{"uid", req.at("uid")}, {"allowed", true}};
  if (r.target.rfind("/deny", 0) == 0) {
    resp["allowed"] = false;
    resp["status"] = json::object{{"message", "pods labelled webhook=deny are not welcome"}};
  } else if (r.target.rfind("/warn", 0) == 0) {
    resp["warnings"] = json::array{"checked by the test webhook"};
  } else if (r.target.rfind("/mutate", 0) == 0) {
    const json::value* labels = nullptr;
    if (const json::object* obj = req.at("object").if_object()) {
      if (const json::object* meta = obj->at("metadata").if_object()) {
        labels = meta->if_contains("labels");
      }
    }
    json::array patch;
    if (labels && labels->is_object()) {
      patch.push_back(json::object{
          {"op", "add"}, {"path", "/metadata/labels/mutated"}, {"value", "by-webhook"}});
    } else {
      patch.push_back(json::object{{"op", "add"},
                                   {"path", "/metadata/labels"},
                                   {"value", json::object{{"mutated", "by-webhook"}}}});
    }
    resp["patchType"] = "JSONPatch";
    resp["patch"] = util::Base64Encode(json::serialize(patch));
  } else if (r.target.rfind("/slow", 0) == 0) {
    // Longer than the configurations' timeoutSeconds (1).
    std::this_thread::sleep_for(std::chrono::seconds(3));
  }
  json::object out{{"apiVersion", "admission.k8s.io/v1"},
                   {"kind", "AdmissionReview"},
                   {"response", std::move(resp)}};
  return TestResponse{.status = 200, .body = json::serialize(out)};
}

std::string Webhook(const std::string& name, const std::string& url, const std::string& ca_pem,
                    const std::string& rules, const std::string& extra) {
  return "- name: " + name + "\n  clientConfig:\n    url: " + url +
         "\n    caBundle: " + util::Base64Encode(ca_pem) + "\n  rules:\n" + rules +
         "  sideEffects: None\n  admissionReviewVersions: [v1]\n" + extra;
}

std::string Rules(const std::string& resource) {
  return "  - operations: [CREATE, UPDATE]\n    apiGroups: [\"\"]\n    apiVersions: [v1]\n"
         "    resources: [" +
         resource + "]\n";
}

class WebhookTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new TestPki(client::testing::MakeTestPki());
    other_pki_ = new TestPki(client::testing::MakeTestPki("some-other-ca"));
    hooks_ = new TestHttpServer(Answer, {.pki = pki_});
    hooks_->Start();
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start());
    dir_ = new TempDir();
    kubectl_ = new Kubectl(server_->kubeconfig_path(), dir_->path() + "/cache");
    for (const char* ns : {"mutated", "plain", "fail-closed", "fail-open", "wrong-ca"}) {
      ASSERT_EQ(Run({"create", "namespace", ns}).exit_code, 0);
    }
    ASSERT_EQ(Run({"label", "namespace", "mutated", "mutate=yes"}).exit_code, 0);
    ASSERT_EQ(Run({"label", "namespace", "fail-closed", "policy=fail"}).exit_code, 0);
    ASSERT_EQ(Run({"label", "namespace", "fail-open", "policy=ignore"}).exit_code, 0);
    ASSERT_EQ(Run({"label", "namespace", "wrong-ca", "ca=wrong"}).exit_code, 0);

    const std::string url = hooks_->url();
    const std::string& ca = pki_->ca_pem;
    std::string mutating =
        "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
        "metadata: {name: mutate-configmaps}\nwebhooks:\n" +
        Webhook("mutate.converge.test", url + "/mutate", ca, Rules("configmaps"),
                "  namespaceSelector: {matchLabels: {mutate: \"yes\"}}\n");
    std::string validating =
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
        "metadata: {name: checks}\nwebhooks:\n" +
        Webhook("slow-fail.converge.test", url + "/slow", ca, Rules("secrets"),
                "  timeoutSeconds: 1\n  failurePolicy: Fail\n"
                "  namespaceSelector: {matchLabels: {policy: fail}}\n") +
        Webhook("slow-ignore.converge.test", url + "/slow", ca, Rules("secrets"),
                "  timeoutSeconds: 1\n  failurePolicy: Ignore\n"
                "  namespaceSelector: {matchLabels: {policy: ignore}}\n") +
        Webhook("wrong-ca.converge.test", url + "/warn", other_pki_->ca_pem, Rules("configmaps"),
                "  failurePolicy: Fail\n  namespaceSelector: {matchLabels: {ca: wrong}}\n") +
        Webhook("warn.converge.test", url + "/warn", ca, Rules("services"), "");
    // The denying configuration goes last: once it is in effect, so are the others.
    std::string deny =
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
        "metadata: {name: deny-labelled}\nwebhooks:\n" +
        Webhook("deny.converge.test", url + "/deny", ca, Rules("pods"),
                "  objectSelector: {matchLabels: {webhook: deny}}\n");
    for (const std::string* doc : {&mutating, &validating, &deny}) {
      CommandResult r = Run({"apply", "-f", "-"}, *doc);
      ASSERT_EQ(r.exit_code, 0) << r.err << "\n" << *doc;
    }
    // Configurations take effect when the API server's watch cache has them (as upstream): probe
    // with server-side dry runs until the denial shows.
    bool denying = false;
    for (int i = 0; i < 300 && !denying; ++i) {
      CommandResult r = Run({"run", "probe", "--image=nginx", "-l", "webhook=deny",
                             "--dry-run=server", "-o", "name"});
      denying = r.exit_code != 0;
      if (!denying) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(denying) << "the webhook configurations never took effect";
  }
  static void TearDownTestSuite() {
    delete kubectl_;
    delete server_;
    delete dir_;
    delete hooks_;
    delete pki_;
    delete other_pki_;
  }
  static CommandResult Run(const std::vector<std::string>& args, const std::string& in = "") {
    return kubectl_->Run(args, in);
  }
  static int CallsTo(const std::string& path) {
    int n = 0;
    for (const TestRequest& r : hooks_->requests()) n += r.target.rfind(path, 0) == 0;
    return n;
  }

  static TestPki* pki_;
  static TestPki* other_pki_;
  static TestHttpServer* hooks_;
  static ServerProcess* server_;
  static TempDir* dir_;
  static Kubectl* kubectl_;
};
TestPki* WebhookTest::pki_ = nullptr;
TestPki* WebhookTest::other_pki_ = nullptr;
TestHttpServer* WebhookTest::hooks_ = nullptr;
ServerProcess* WebhookTest::server_ = nullptr;
TempDir* WebhookTest::dir_ = nullptr;
Kubectl* WebhookTest::kubectl_ = nullptr;

TEST_F(WebhookTest, DenialAsKubectlPrintsItAndNothingIsCreated) {
  CommandResult r = Run({"run", "denied", "--image=nginx", "-l", "webhook=deny"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "Error from server: admission webhook \"deny.converge.test\" denied the request: pods "
            "labelled webhook=deny are not welcome\n");
  EXPECT_NE(Run({"get", "pod", "denied"}).exit_code, 0) << "a denied pod must not exist";

  // The objectSelector leaves other pods alone.
  r = Run({"run", "accepted", "--image=nginx", "-l", "webhook=allow"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Run({"get", "pod", "accepted", "-o", "name"}).out, "pod/accepted\n");

  // The review carried what webhooks read.
  bool saw_review = false;
  for (const TestRequest& req : hooks_->requests()) {
    if (req.target.rfind("/deny", 0) != 0) continue;
    json::value v = json::parse(req.body);
    const json::object& rq = v.at("request").as_object();
    if (rq.at("name") != "denied") continue;
    saw_review = true;
    EXPECT_EQ(v.at("apiVersion"), "admission.k8s.io/v1");
    EXPECT_EQ(rq.at("operation"), "CREATE");
    EXPECT_EQ(rq.at("namespace"), "default");
    EXPECT_EQ(rq.at("userInfo").at("username"), "kubernetes-admin")
        << json::serialize(rq.at("userInfo"));
    EXPECT_EQ(rq.at("object").at("metadata").at("labels").at("webhook"), "deny");
    EXPECT_EQ(req.Header("content-type"), "application/json");
    EXPECT_EQ(req.target, "/deny?timeout=10s");
  }
  EXPECT_TRUE(saw_review);
}

TEST_F(WebhookTest, MutatingPatchAppliesInSelectedNamespacesOnly) {
  CommandResult r = Run({"create", "configmap", "cm", "-n", "mutated", "--from-literal=k=v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run({"get", "configmap", "cm", "-n", "mutated", "-o", "jsonpath={.metadata.labels.mutated}"});
  EXPECT_EQ(r.out, "by-webhook") << r.err;

  r = Run({"create", "configmap", "cm", "-n", "plain", "--from-literal=k=v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run({"get", "configmap", "cm", "-n", "plain", "-o", "jsonpath={.metadata.labels}"});
  EXPECT_EQ(r.out, "") << "the namespaceSelector excludes this namespace";

  // Updates are patched too, keeping labels the client set.
  r = Run({"label", "configmap", "cm", "-n", "mutated", "team=a", "mutated-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run({"get", "configmap", "cm", "-n", "mutated", "-o",
           "jsonpath={.metadata.labels.team}/{.metadata.labels.mutated}"});
  EXPECT_EQ(r.out, "a/by-webhook");
}

TEST_F(WebhookTest, TimeoutFailsClosedUnderFailAndOpenUnderIgnore) {
  CommandResult r =
      Run({"create", "secret", "generic", "s", "-n", "fail-closed", "--from-literal=k=v"});
  EXPECT_NE(r.exit_code, 0);
  // kubectl create secret words errors its own way ("error: failed to create secret <message>").
  EXPECT_EQ(r.err,
            "error: failed to create secret Internal error occurred: failed calling webhook "
            "\"slow-fail.converge.test\": failed to call webhook: Post \"" +
                hooks_->url() + "/slow?timeout=1s\": context deadline exceeded\n");
  EXPECT_NE(Run({"get", "secret", "s", "-n", "fail-closed"}).exit_code, 0);

  r = Run({"create", "secret", "generic", "s", "-n", "fail-open", "--from-literal=k=v"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Run({"get", "secret", "s", "-n", "fail-open", "-o", "name"}).out, "secret/s\n");
}

TEST_F(WebhookTest, UntrustedWebhookCertificateFailsTheCall) {
  const int before = CallsTo("/warn");
  CommandResult r = Run({"create", "configmap", "cm", "-n", "wrong-ca", "--from-literal=k=v"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("Internal error occurred: failed calling webhook "
                       "\"wrong-ca.converge.test\": failed to call webhook: Post \"" +
                       hooks_->url() + "/warn?timeout=10s\": "),
            std::string::npos)
      << r.err;
  EXPECT_NE(Run({"get", "configmap", "cm", "-n", "wrong-ca"}).exit_code, 0);
  EXPECT_EQ(CallsTo("/warn"), before) << "no request may reach a server the CA does not vouch for";
}

TEST_F(WebhookTest, WarningsReachKubectl) {
  CommandResult r = Run({"create", "service", "clusterip", "warned", "--tcp=80:80"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("Warning: checked by the test webhook"), std::string::npos) << r.err;
}

// A create runs on the connection's I/O thread only while no webhook is configured: here one
// may wait on a webhook, so it runs on a worker (apiserver_requests_on_io_thread_total stays).
TEST_F(WebhookTest, CreatesThatMayCallWebhooksRunOnWorkers) {
  auto on_io_thread = [] {
    CommandResult m = Run({"get", "--raw", "/metrics"});
    const std::string needle = "\napiserver_requests_on_io_thread_total ";
    size_t at = m.out.find(needle);
    return at == std::string::npos ? -1.0 : std::stod(m.out.substr(at + needle.size()));
  };
  const double before = on_io_thread();
  ASSERT_GE(before, 0) << "the counter is exported";
  CommandResult r =
      Run({"create", "configmap", "on-a-worker", "-n", "plain", "--from-literal=k=v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(on_io_thread(), before);
}

TEST_F(WebhookTest, DryRunIsReviewedToo) {
  CommandResult r = Run({"run", "dry", "--image=nginx", "-l", "webhook=deny", "--dry-run=server"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("denied the request"), std::string::npos) << r.err;
  bool saw_dry_run = false;
  for (const TestRequest& req : hooks_->requests()) {
    json::value v = json::parse(req.body);
    const json::object& rq = v.at("request").as_object();
    if (rq.at("name") == "dry") saw_dry_run = rq.at("dryRun") == true;
  }
  EXPECT_TRUE(saw_dry_run);
}

}  // namespace
}  // namespace converge
