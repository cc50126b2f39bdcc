// ServiceAccounts and their tokens with the real kubectl against `converge server` (the
// controller-manager creates each namespace's `default` ServiceAccount): `kubectl create token`,
// tokens that authenticate, audiences, expiry limits, and tokens that die with what they name.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <thread>

#include "testing/kubectl.h"
#include "testing/server.h"

namespace converge {
namespace {

using testing::CommandResult;
using testing::HttpResponse;
using testing::Kubeconfig;
using testing::Kubectl;
using testing::ServerProcess;
using testing::TempDir;
using testing::TestClient;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class ServiceAccountTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start({.command = "server", .extra_args = {"--nodes", "0"}}));
    cache_ = new TempDir();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete cache_;
  }
  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available());
    kubectl_ = std::make_unique<Kubectl>(server_->kubeconfig_path(), cache_->path());
  }
  CommandResult K(const std::vector<std::string>& args) { return kubectl_->Run(args); }

  // Waits for the controller to create `default` in `ns`; returns its UID.
  std::string WaitForDefault(const std::string& ns) {
    for (int i = 0; i < 600; ++i) {
      CommandResult r =
          K({"get", "serviceaccount", "default", "-n", ns, "-o", "jsonpath={.metadata.uid}"});
      if (r.exit_code == 0 && !r.out.empty()) return r.out;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "";
  }
  // POST a TokenReview as the admin.
  boost::json::object Review(const std::string& token) {
    HttpResponse r = server_->Client()->Post(
        "/apis/authentication.k8s.io/v1/tokenreviews",
        R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":")" +
            token + R"("}})");
    EXPECT_EQ(r.status, 201) << r.body;
    return boost::json::parse(r.body).as_object();
  }
  static bool Authenticated(const boost::json::object& review) {
    const auto& status = review.at("status").as_object();
    return status.contains("authenticated") && status.at("authenticated").as_bool();
  }
  // A request carrying only the token.
  static int StatusWithToken(const std::string& token, const std::string& path) {
    Kubeconfig k = server_->kubeconfig();
    k.client_cert_pem.clear();
    k.client_key_pem.clear();
    k.token = token;
    return TestClient(k).Get(path).status;
  }

  static ServerProcess* server_;
  static TempDir* cache_;
  std::unique_ptr<Kubectl> kubectl_;
};
ServerProcess* ServiceAccountTest::server_ = nullptr;
TempDir* ServiceAccountTest::cache_ = nullptr;

TEST_F(ServiceAccountTest, EveryNamespaceGetsADefaultServiceAccountBack) {
  ASSERT_EQ(K({"create", "namespace", "sa-default"}).exit_code, 0);
  std::string uid = WaitForDefault("sa-default");
  ASSERT_FALSE(uid.empty()) << "no default ServiceAccount";
  ASSERT_EQ(K({"delete", "serviceaccount", "default", "-n", "sa-default"}).exit_code, 0);
  std::string again;
  for (int i = 0; i < 600 && (again.empty() || again == uid); ++i) {
    again = WaitForDefault("sa-default");
  }
  EXPECT_FALSE(again.empty());
  EXPECT_NE(again, uid) << "a deleted default ServiceAccount is created anew";
  EXPECT_FALSE(WaitForDefault("kube-system").empty());
}

TEST_F(ServiceAccountTest, CreateTokenAuthenticatesAsTheServiceAccount) {
  ASSERT_EQ(K({"create", "namespace", "sa-token"}).exit_code, 0);
  ASSERT_EQ(K({"create", "serviceaccount", "builder", "-n", "sa-token"}).exit_code, 0);
  CommandResult t = K({"create", "token", "builder", "-n", "sa-token"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  std::string token = Trim(t.out);
  ASSERT_EQ(std::count(token.begin(), token.end(), '.'), 2) << token;

  boost::json::object review = Review(token);
  ASSERT_TRUE(Authenticated(review)) << boost::json::serialize(review);
  const auto& user = review.at("status").at("user").as_object();
  EXPECT_EQ(user.at("username").as_string(), "system:serviceaccount:sa-token:builder");
  std::string groups = boost::json::serialize(user.at("groups"));
  EXPECT_NE(groups.find("system:serviceaccounts:sa-token"), std::string::npos) << groups;
  EXPECT_NE(StatusWithToken(token, "/api/v1/namespaces/sa-token/configmaps"), 401);

  // A token for another audience does not authenticate here.
  CommandResult vault = K({"create", "token", "builder", "-n", "sa-token", "--audience", "vault"});
  ASSERT_EQ(vault.exit_code, 0) << vault.err;
  EXPECT_FALSE(Authenticated(Review(Trim(vault.out))));
  EXPECT_EQ(StatusWithToken(Trim(vault.out), "/api/v1/namespaces/sa-token/configmaps"), 401);

  // Deleting the ServiceAccount invalidates its tokens, even if one of the same name returns.
  ASSERT_EQ(K({"delete", "serviceaccount", "builder", "-n", "sa-token"}).exit_code, 0);
  ASSERT_EQ(K({"create", "serviceaccount", "builder", "-n", "sa-token"}).exit_code, 0);
  EXPECT_FALSE(Authenticated(Review(token)));
  EXPECT_EQ(StatusWithToken(token, "/api/v1/namespaces/sa-token/configmaps"), 401);
}

TEST_F(ServiceAccountTest, TokensBoundToAPodDieWithIt) {
  ASSERT_EQ(K({"create", "namespace", "sa-bound"}).exit_code, 0);
  ASSERT_FALSE(WaitForDefault("sa-bound").empty());
  ASSERT_EQ(K({"run", "holder", "--image", "nginx", "-n", "sa-bound"}).exit_code, 0);
  CommandResult t = K({"create", "token", "default", "-n", "sa-bound", "--bound-object-kind", "Pod",
                       "--bound-object-name", "holder"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  std::string token = Trim(t.out);
  EXPECT_TRUE(Authenticated(Review(token)));
  ASSERT_EQ(
      K({"delete", "pod", "holder", "-n", "sa-bound", "--grace-period", "0", "--force"}).exit_code,
      0);
  bool invalid = false;
  for (int i = 0; i < 100 && !invalid; ++i) {
    invalid = !Authenticated(Review(token));
    if (!invalid) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(invalid) << "the bound pod is gone, the token must be too";

  CommandResult missing = K({"create", "token", "default", "-n", "sa-bound", "--bound-object-kind",
                             "Pod", "--bound-object-name", "nope"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("not found"), std::string::npos) << missing.err;
}

TEST_F(ServiceAccountTest, ShortDurationsAreInvalid) {
  ASSERT_EQ(K({"create", "namespace", "sa-short"}).exit_code, 0);
  ASSERT_FALSE(WaitForDefault("sa-short").empty());
  CommandResult r = K({"create", "token", "default", "-n", "sa-short", "--duration", "5m"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("may not specify a duration less than 10 minutes"), std::string::npos)
      << r.err;
  CommandResult ok = K({"create", "token", "default", "-n", "sa-short", "--duration", "2h"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace
}  // namespace converge
