#include "client/kubeconfig.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "util/base64.h"

namespace converge::client {
namespace {

namespace fs = std::filesystem;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("converge-kubeconfig-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

  fs::path dir_;
};

TEST_F(KubeconfigTest, ResolvesTheCurrentContextWithInlineData) {
  std::string yaml = R"(apiVersion: v1
kind: Config
clusters:
- name: converge
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: )" +
                     util::Base64Encode("CA-PEM") + R"(
users:
- name: admin
  user:
    client-certificate-data: )" +
                     util::Base64Encode("CERT-PEM") + R"(
    client-key-data: )" +
                     util::Base64Encode("KEY-PEM") +
                     R"(
contexts:
- name: converge
  context:
    cluster: converge
    user: admin
    namespace: team-a
current-context: converge
)";
  util::StatusOr<RestConfig> c = LoadRestConfig(Write("config", yaml));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->tls.ca_pem, "CA-PEM");
  EXPECT_EQ(c->tls.client_cert_pem, "CERT-PEM");
  EXPECT_EQ(c->tls.client_key_pem, "KEY-PEM");
  EXPECT_EQ(c->ns, "team-a");
  EXPECT_FALSE(c->tls.insecure_skip_verify);
  EXPECT_TRUE(c->bearer_token.empty());
}

TEST_F(KubeconfigTest, ReadsFilesRelativeToTheKubeconfig) {
  Write("pki/ca.crt", "CA-FROM-FILE");
  Write("pki/client.crt", "CERT-FROM-FILE");
  Write("pki/client.key", "KEY-FROM-FILE");
  std::string path = Write("sub/../config", R"(
clusters:
- name: c
  cluster:
    server: https://10.0.0.1
    certificate-authority: pki/ca.crt
    tls-server-name: api.internal
users:
- name: u
  user:
    client-certificate: pki/client.crt
    client-key: pki/client.key
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
)");
  util::StatusOr<RestConfig> c = LoadRestConfig(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->tls.ca_pem, "CA-FROM-FILE");
  EXPECT_EQ(c->tls.client_cert_pem, "CERT-FROM-FILE");
  EXPECT_EQ(c->tls.client_key_pem, "KEY-FROM-FILE");
  EXPECT_EQ(c->tls.server_name, "api.internal");
  EXPECT_EQ(c->ns, "default");
}

TEST_F(KubeconfigTest, TokensInsecureAndExplicitContext) {
  std::string path = Write("config", R"(
clusters:
- name: c1
  cluster: {server: "http://127.0.0.1:8080", insecure-skip-tls-verify: true}
users:
- name: tok
  user: {token: abc}
- name: file
  user: {tokenFile: token.txt}
contexts:
- name: one
  context: {cluster: c1, user: tok}
- name: two
  context: {cluster: c1, user: file}
current-context: one
)");
  util::StatusOr<RestConfig> one = LoadRestConfig(path);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->bearer_token, "abc");
  EXPECT_TRUE(one->tls.insecure_skip_verify);
  util::StatusOr<RestConfig> two = LoadRestConfig(path, "two");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->bearer_token_file, (dir_ / "token.txt").string());
  EXPECT_EQ(LoadRestConfig(path, "three").status().code(), util::Code::kNotFound);
}

TEST_F(KubeconfigTest, ErrorsNameTheProblem) {
  struct Case {
    const char* name;
    const char* yaml;
    util::Code code;
    const char* message_part;
  };
  const Case cases[] = {
      {"not yaml", "clusters: [", util::Code::kInvalidArgument, "YAML"},
      {"no current context", "clusters: []", util::Code::kNotFound, "current-context"},
      {"missing cluster", "contexts: [{name: x, context: {cluster: nope}}]\ncurrent-context: x",
       util::Code::kNotFound, "nope"},
      {"bad base64",
       "clusters: [{name: c, cluster: {server: s, certificate-authority-data: '%%%'}}]",
       util::Code::kInvalidArgument, "certificate-authority-data"},
      {"cert without key",
       "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
       "users: [{name: u, user: {client-certificate-data: QQ==}}]\n"
       "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x",
       util::Code::kInvalidArgument, "together"},
      {"exec plugin only",
       "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
       "users: [{name: u, user: {exec: {command: aws}}}]\n"
       "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x",
       util::Code::kUnimplemented, "plugin"},
      {"missing CA file",
       "clusters: [{name: c, cluster: {server: 'https://x', certificate-authority: /nope/ca}}]\n"
       "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x",
       util::Code::kNotFound, "/nope/ca"},
  };
  for (const Case& c : cases) {
    util::StatusOr<RestConfig> got = LoadRestConfig(Write("config", c.yaml));
    EXPECT_EQ(got.status().code(), c.code) << c.name << ": " << got.status().ToString();
    EXPECT_NE(got.status().message().find(c.message_part), std::string::npos)
        << c.name << ": " << got.status().message();
  }
}

TEST_F(KubeconfigTest, MergedFilesFirstDefinitionWins) {
  std::string a = Write("a", R"(
clusters: [{name: c, cluster: {server: "https://first"}}]
contexts: [{name: x, context: {cluster: c}}]
current-context: x
)");
  std::string b = Write("b", R"(
clusters: [{name: c, cluster: {server: "https://second"}}, {name: d, cluster: {server: "https://d"}}]
contexts: [{name: y, context: {cluster: d}}]
current-context: y
)");
  util::StatusOr<Kubeconfig> kc = Kubeconfig::LoadFiles({(dir_ / "missing").string(), a, b});
  ASSERT_TRUE(kc.ok()) << kc.status().ToString();
  EXPECT_EQ(kc->current_context, "x");
  EXPECT_EQ(kc->ToRestConfig()->server, "https://first");
  EXPECT_EQ(kc->ToRestConfig("y")->server, "https://d");
}

TEST_F(KubeconfigTest, InClusterConfigReadsTheServiceAccount) {
  Write("sa/token", "tok\n");
  Write("sa/ca.crt", "CA");
  Write("sa/namespace", "kube-system\n");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  util::StatusOr<RestConfig> c = InClusterConfig((dir_ / "sa").string());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->bearer_token_file, (dir_ / "sa/token").string());
  EXPECT_EQ(c->tls.ca_pem, "CA");
  EXPECT_EQ(c->ns, "kube-system");
  EXPECT_EQ(InClusterConfig((dir_ / "sa").string()).status().code(), util::Code::kNotFound);
}

}  // namespace
}  // namespace converge::client
