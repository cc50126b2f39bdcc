// Secure by default: a `converge apiserver` started with no security flags serves TLS with its own
// CA, authenticates clients by certificate or token, lets anonymous users reach only health,
// version and discovery, and refuses plain HTTP anywhere but loopback.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>
#include <thread>

#include "apiserver/jwt.h"
#include "apiserver/pki.h"
#include "testing/server.h"

namespace converge {
namespace {

using testing::HttpResponse;
using testing::Kubeconfig;
using testing::ServerProcess;
using testing::TestClient;

std::string Reason(const HttpResponse& r) {
  auto v = boost::json::parse(r.body);
  return std::string(v.at("reason").as_string());
}

class SecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    token_dir_ = new testing::TempDir();
    std::ofstream(token_dir_->path() + "/tokens.csv") << "t0ps3cret,alice,1001,\"dev,ops\"\n";
    server_ = new ServerProcess();
    ASSERT_TRUE(
        server_->Start({.extra_args = {"--token-auth-file", token_dir_->path() + "/tokens.csv"}}));
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete token_dir_;
    token_dir_ = nullptr;
  }
  // The server's address and CA, with no credentials.
  static Kubeconfig Anonymous() {
    Kubeconfig k = server_->kubeconfig();
    k.client_cert_pem.clear();
    k.client_key_pem.clear();
    k.token.clear();
    return k;
  }

  static testing::TempDir* token_dir_;
  static ServerProcess* server_;
};
testing::TempDir* SecurityTest::token_dir_ = nullptr;
ServerProcess* SecurityTest::server_ = nullptr;

TEST_F(SecurityTest, KubeconfigIsTlsWithEmbeddedCaAndAdminCertificate) {
  const Kubeconfig& k = server_->kubeconfig();
  EXPECT_TRUE(k.server.starts_with("https://127.0.0.1:")) << k.server;
  EXPECT_NE(k.ca_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_NE(k.client_cert_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_FALSE(k.insecure_skip_tls_verify);
  auto admin = server_->Client();
  EXPECT_EQ(admin->Get("/api/v1/namespaces/default/configmaps").status, 200);
}

TEST_F(SecurityTest, AnonymousReachesOnlyHealthVersionAndDiscovery) {
  TestClient anon(Anonymous());
  for (const char* path :
       {"/healthz", "/livez", "/readyz", "/version", "/api", "/api/v1", "/apis", "/apis/apps/v1"}) {
    HttpResponse r = anon.Get(path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body << r.error;
  }
  for (const char* path : {"/api/v1/namespaces/default/pods", "/api/v1/secrets",
                           "/apis/apps/v1/deployments", "/metrics", "/openapi/v3"}) {
    HttpResponse r = anon.Get(path);
    EXPECT_EQ(r.status, 401) << path;
    if (r.status == 401 && path[1] == 'a') {
      EXPECT_EQ(Reason(r), "Unauthorized") << path;
    }
  }
  HttpResponse create =
      anon.Post("/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"from-anon"}})");
  EXPECT_EQ(create.status, 401);
  auto admin = server_->Client();
  EXPECT_EQ(admin->Get("/api/v1/namespaces/default/configmaps/from-anon").status, 404);
}

TEST_F(SecurityTest, StaticTokensAuthenticateAndBadTokensAreRejected) {
  Kubeconfig good = Anonymous();
  good.token = "t0ps3cret";
  // Authenticated as alice (who is authorized for nothing beyond the defaults).
  HttpResponse who = TestClient(good).Post("/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                           R"({"apiVersion":"authentication.k8s.io/v1",)"
                                           R"("kind":"SelfSubjectReview"})");
  ASSERT_EQ(who.status, 201) << who.body;
  auto info = boost::json::parse(who.body).at_pointer("/status/userInfo");
  EXPECT_EQ(info.at("username").as_string(), "alice");
  EXPECT_EQ(boost::json::serialize(info.at("groups")), R"(["dev","ops","system:authenticated"])");
  EXPECT_EQ(TestClient(good).Get("/api/v1/namespaces/default/configmaps").status, 403);
  Kubeconfig bad = Anonymous();
  bad.token = "wrong";
  HttpResponse r = TestClient(bad).Get("/version");
  EXPECT_EQ(r.status, 401) << "a presented, invalid credential is never anonymous";
}

// A ServiceAccount token signed with the server's own key but past its expiry is 401 and changes
// nothing; the same token, unexpired, authenticates (403: the account may do nothing here).
TEST_F(SecurityTest, ExpiredServiceAccountTokenIsRejected) {
  auto admin = server_->Client();
  ASSERT_EQ(admin
                ->Post("/api/v1/namespaces/default/serviceaccounts",
                       R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}})")
                .status,
            201);
  HttpResponse issued =
      admin->Post("/api/v1/namespaces/default/serviceaccounts/robot/token",
                  R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}})");
  ASSERT_EQ(issued.status, 201) << issued.body;
  std::string token(boost::json::parse(issued.body).at_pointer("/status/token").as_string());

  // The same claims, moved an hour into the past and signed again with the server's key.
  std::string payload = token.substr(token.find('.') + 1);
  payload = payload.substr(0, payload.find('.'));
  auto decoded = apiserver::Base64UrlDecode(payload);
  ASSERT_TRUE(decoded.ok());
  boost::json::object claims = boost::json::parse(*decoded).as_object();
  for (const char* t : {"exp", "iat", "nbf"}) {
    if (claims.contains(t)) claims[t] = claims[t].to_number<int64_t>() - 2 * 3600;
  }
  auto pki = apiserver::LoadOrCreatePki({.dir = server_->data_dir() + "/pki"});
  ASSERT_TRUE(pki.ok());
  auto kid = apiserver::KeyId(pki->service_account_key.cert_pem);
  ASSERT_TRUE(kid.ok());
  auto expired = apiserver::SignEs256(claims, pki->service_account_key.key_pem, *kid);
  ASSERT_TRUE(expired.ok());

  Kubeconfig fresh = Anonymous();
  fresh.token = token;
  EXPECT_EQ(TestClient(fresh).Get("/api/v1/namespaces/default/secrets").status, 403);
  Kubeconfig stale = Anonymous();
  stale.token = *expired;
  const std::string cm =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"from-expired-token"}})";
  HttpResponse r = TestClient(stale).Post("/api/v1/namespaces/default/configmaps", cm);
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(Reason(r), "Unauthorized");
  EXPECT_EQ(admin->Get("/api/v1/namespaces/default/configmaps/from-expired-token").status, 404);
}

TEST_F(SecurityTest, CertificatesFromAnotherCaAreRejected) {
  auto ca = apiserver::CreateCa("not-the-cluster-ca");
  ASSERT_TRUE(ca.ok());
  auto cert = apiserver::IssueCertificate(
      *ca, {.common_name = "kubernetes-admin", .organizations = {"system:masters"}});
  ASSERT_TRUE(cert.ok());
  Kubeconfig forged = Anonymous();
  forged.client_cert_pem = cert->cert_pem;
  forged.client_key_pem = cert->key_pem;
  HttpResponse r = TestClient(forged).Get("/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(r.status, 401) << r.body << r.error;
}

TEST_F(SecurityTest, ClientsMustVerifyTheServer) {
  Kubeconfig wrong_ca = server_->kubeconfig();
  auto other = apiserver::CreateCa("another-ca");
  ASSERT_TRUE(other.ok());
  wrong_ca.ca_pem = other->cert_pem;
  HttpResponse r = TestClient(wrong_ca).Get("/version");
  EXPECT_EQ(r.status, 0) << "the TLS handshake must fail against an unknown CA";
  EXPECT_FALSE(r.error.empty());
}

TEST(SecurityStartupTest, CaSurvivesRestartsAndOldKubeconfigsKeepWorking) {
  ServerProcess server;
  ASSERT_TRUE(server.Start());
  Kubeconfig before = server.kubeconfig();
  ASSERT_TRUE(server.Restart());
  EXPECT_EQ(server.kubeconfig().ca_pem, before.ca_pem);
  before.server = server.kubeconfig().server;  // the port is ephemeral
  EXPECT_EQ(TestClient(before).Get("/api/v1/namespaces").status, 200);
}

TEST(SecurityStartupTest, PlainHttpOnlyOnLoopback) {
  testing::TempDir dir;
  testing::Process p;
  ASSERT_TRUE(p.Start({CONVERGE_BINARY, "apiserver", "--data-dir", dir.path(), "--listen",
                       "0.0.0.0:0", "--insecure-http"},
                      dir.path() + "/log"));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (p.Running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(p.Running()) << "plain HTTP on 0.0.0.0 must be refused";
  EXPECT_NE(testing::ReadFile(dir.path() + "/log").find("loopback"), std::string::npos);

  ServerProcess loopback;
  ASSERT_TRUE(loopback.Start({.extra_args = {"--insecure-http"}}));
  EXPECT_TRUE(loopback.kubeconfig().server.starts_with("http://127.0.0.1:"));
  EXPECT_EQ(loopback.Client()->Get("/api/v1/namespaces").status, 200);
}

}  // namespace
}  // namespace converge
