#include "apiserver/authn.h"

#include <gtest/gtest.h>

namespace converge::apiserver {
namespace {

Request WithHeader(std::string name, std::string value) {
  Request r;
  r.method = "GET";
  r.path = "/api/v1/pods";
  r.headers.emplace_back(std::move(name), std::move(value));
  return r;
}

TEST(ParseTokenFileTest, ReadsUsersUidsAndQuotedGroups) {
  auto tokens = ParseTokenFile(
      "# comment\n"
      "s3cret,alice,1001,\"dev,ops\"\n"
      "\n"
      "t0ken,bob,1002\n");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  ASSERT_EQ(tokens->size(), 2u);
  const UserInfo& alice = tokens->at("s3cret");
  EXPECT_EQ(alice.name, "alice");
  EXPECT_EQ(alice.uid, "1001");
  EXPECT_EQ(alice.groups, (std::vector<std::string>{"dev", "ops", "system:authenticated"}));
  EXPECT_TRUE(alice.authenticated);
  EXPECT_EQ(tokens->at("t0ken").groups, std::vector<std::string>{"system:authenticated"});
}

TEST(ParseTokenFileTest, RejectsShortLinesWithTheLineNumber) {
  auto tokens = ParseTokenFile("a,b,c\nonly-token,user\n");
  ASSERT_FALSE(tokens.ok());
  EXPECT_NE(tokens.status().message().find("line 2"), std::string::npos);
}

TEST(AuthenticatorTest, ChainOfCertificateTokenAnonymous) {
  AuthenticatorOptions o;
  o.static_tokens = *ParseTokenFile("good,alice,1\n");
  o.token_verifier = [](std::string_view token) -> std::optional<ApiOr<UserInfo>> {
    if (token == "jwt-ok") return ApiOr<UserInfo>(UserInfo{"system:serviceaccount:a:b", "", {}});
    if (token == "jwt-expired") return ApiOr<UserInfo>(Unauthorized("token expired"));
    return std::nullopt;
  };
  Authenticator authn(o);

  Request cert;
  cert.has_client_cert = true;
  cert.client_cert_cn = "kubernetes-admin";
  cert.client_cert_orgs = {"system:masters"};
  auto admin = authn.Authenticate(cert);
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ(admin->name, "kubernetes-admin");
  EXPECT_EQ(admin->groups, (std::vector<std::string>{"system:masters", "system:authenticated"}));

  // A certificate that does not chain to the CA is 401 even with a good token beside it.
  Request foreign = WithHeader("authorization", "Bearer good");
  foreign.has_client_cert = true;
  foreign.client_cert_error = "x509: unable to get local issuer certificate";
  auto rejected = authn.Authenticate(foreign);
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().code, 401);

  auto alice = authn.Authenticate(WithHeader("authorization", "Bearer good"));
  ASSERT_TRUE(alice.ok());
  EXPECT_EQ(alice->name, "alice");

  auto sa = authn.Authenticate(WithHeader("authorization", "Bearer jwt-ok"));
  ASSERT_TRUE(sa.ok());
  EXPECT_TRUE(sa->authenticated);
  EXPECT_EQ(sa->groups, std::vector<std::string>{"system:authenticated"});

  // Presented but invalid credentials never fall back to anonymous.
  for (const char* h : {"Bearer nope", "Bearer jwt-expired", "Basic YTpi"}) {
    auto r = authn.Authenticate(WithHeader("authorization", h));
    ASSERT_FALSE(r.ok()) << h;
    EXPECT_EQ(r.error().code, 401) << h;
  }

  auto anon = authn.Authenticate(Request{});
  ASSERT_TRUE(anon.ok());
  EXPECT_EQ(anon->name, "system:anonymous");
  EXPECT_FALSE(anon->authenticated);
  EXPECT_EQ(anon->groups, std::vector<std::string>{"system:unauthenticated"});
}

TEST(AuthenticatorTest, AnonymousCanBeDisabled) {
  Authenticator authn(AuthenticatorOptions{.anonymous = false});
  auto r = authn.Authenticate(Request{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 401);
}

TEST(AuthenticatorTest, PreauthenticatedRequestsKeepTheirUser) {
  Authenticator authn(AuthenticatorOptions{});
  Request r;
  r.preauthenticated = true;
  r.user = {"system:admin", "", {"system:masters"}, true};
  auto u = authn.Authenticate(r);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->name, "system:admin");
}

TEST(IsPublicPathTest, HealthVersionAndDiscoveryOnly) {
  for (const char* p : {"/healthz", "/livez", "/readyz", "/readyz/ping", "/version", "/api",
                        "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/apis/apps/v1/"}) {
    EXPECT_TRUE(IsPublicPath(p)) << p;
  }
  for (const char* p : {"/api/v1/pods", "/api/v1/namespaces/default/secrets",
                        "/apis/apps/v1/deployments", "/metrics", "/openapi/v3", "/", "/logs"}) {
    EXPECT_FALSE(IsPublicPath(p)) << p;
  }
}

}  // namespace
}  // namespace converge::apiserver
