#include "apiserver/serviceaccount_token.h"

#include <gtest/gtest.h>

#include "apiserver/jwt.h"
#include "apiserver/pki.h"
#include "util/clock.h"

namespace converge::apiserver {
namespace {

class ServiceAccountTokensTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto key = CreateSigningKey();
    ASSERT_TRUE(key.ok());
    key_ = *key;
  }
  ServiceAccountTokens Tokens(std::vector<std::string> audiences = {
                                  std::string(kDefaultServiceAccountIssuer)}) {
    ServiceAccountTokenOptions o;
    o.private_key_pem = key_.key_pem;
    o.public_key_pem = key_.cert_pem;
    o.api_audiences = std::move(audiences);
    o.clock = &clock_;
    return ServiceAccountTokens(o);
  }
  static ServiceAccountClaims Claims() {
    ServiceAccountClaims c;
    c.ns = "team";
    c.name = "builder";
    c.uid = "uid-1";
    c.audiences = {std::string(kDefaultServiceAccountIssuer)};
    return c;
  }

  CertAndKey key_;
  util::FakeClock clock_;
};

TEST_F(ServiceAccountTokensTest, RoundTripCarriesTheServiceAccountAndBinding) {
  ServiceAccountTokens tokens = Tokens();
  ServiceAccountClaims c = Claims();
  c.bound = BoundObject{"Pod", "web-0", "pod-uid"};
  util::Clock::WallTime exp;
  auto token = tokens.Issue(c, std::chrono::hours(1), &exp);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(exp, clock_.WallNow() + std::chrono::hours(1));
  auto v = tokens.Validate(*token);
  ASSERT_TRUE(v.has_value());
  ASSERT_TRUE(v->ok()) << v->status().ToString();
  EXPECT_EQ((*v)->ns, "team");
  EXPECT_EQ((*v)->name, "builder");
  EXPECT_EQ((*v)->uid, "uid-1");
  ASSERT_TRUE((*v)->bound.has_value());
  EXPECT_EQ((*v)->bound->kind, "Pod");
  EXPECT_EQ((*v)->bound->uid, "pod-uid");
}

TEST_F(ServiceAccountTokensTest, ExpiredTamperedAndForeignAudienceTokensFail) {
  ServiceAccountTokens tokens = Tokens();
  auto token = tokens.Issue(Claims(), std::chrono::minutes(10), nullptr);
  ASSERT_TRUE(token.ok());

  clock_.Step(std::chrono::minutes(11));
  auto expired = tokens.Validate(*token);
  ASSERT_TRUE(expired.has_value());
  EXPECT_FALSE(expired->ok());

  auto fresh = tokens.Issue(Claims(), std::chrono::minutes(10), nullptr);
  ASSERT_TRUE(fresh.ok());
  std::string tampered = *fresh;
  tampered[tampered.size() - 5] = tampered[tampered.size() - 5] == 'A' ? 'B' : 'A';
  auto bad = tokens.Validate(tampered);
  ASSERT_TRUE(bad.has_value());
  EXPECT_FALSE(bad->ok());

  ServiceAccountClaims vault = Claims();
  vault.audiences = {"vault"};
  auto other = tokens.Issue(vault, std::chrono::minutes(10), nullptr);
  ASSERT_TRUE(other.ok());
  auto wrong_aud = tokens.Validate(*other);
  ASSERT_TRUE(wrong_aud.has_value());
  EXPECT_FALSE(wrong_aud->ok());
  // The same token is fine for a server whose audience is "vault".
  auto as_vault = Tokens({"vault"}).Validate(*other);
  ASSERT_TRUE(as_vault.has_value());
  EXPECT_TRUE(as_vault->ok());
}

TEST_F(ServiceAccountTokensTest, TokensOfAnotherKeyDoNotVerify) {
  auto other_key = CreateSigningKey();
  ASSERT_TRUE(other_key.ok());
  ServiceAccountTokenOptions o;
  o.private_key_pem = other_key->key_pem;
  o.public_key_pem = other_key->cert_pem;
  o.clock = &clock_;
  auto forged = ServiceAccountTokens(o).Issue(Claims(), std::chrono::hours(1), nullptr);
  ASSERT_TRUE(forged.ok());
  auto v = Tokens().Validate(*forged);
  ASSERT_TRUE(v.has_value()) << "same issuer: ours to judge";
  EXPECT_FALSE(v->ok());
}

TEST_F(ServiceAccountTokensTest, NonJwtTokensAreLeftToOtherAuthenticators) {
  EXPECT_FALSE(Tokens().Validate("static-token").has_value());
  EXPECT_FALSE(Tokens().Validate("a.b.c").has_value());
}

TEST(JwtTest, Base64UrlRoundTripsWithoutPadding) {
  for (std::string s : {"", "f", "fo", "foo", "\xff\xfe\xfd?>"}) {
    std::string enc = Base64UrlEncode(s);
    EXPECT_EQ(enc.find('='), std::string::npos);
    EXPECT_EQ(enc.find('+'), std::string::npos);
    auto dec = Base64UrlDecode(enc);
    ASSERT_TRUE(dec.ok());
    EXPECT_EQ(*dec, s);
  }
  EXPECT_FALSE(Base64UrlDecode("ab+c").ok());
}

TEST(ServiceAccountUserTest, NameAndGroups) {
  UserInfo u = ServiceAccountUser("ns1", "sa1", "u");
  EXPECT_EQ(u.name, "system:serviceaccount:ns1:sa1");
  EXPECT_EQ(u.groups,
            (std::vector<std::string>{"system:serviceaccounts", "system:serviceaccounts:ns1",
                                      "system:authenticated"}));
}

}  // namespace
}  // namespace converge::apiserver
