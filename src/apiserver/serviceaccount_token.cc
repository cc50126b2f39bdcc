#include "apiserver/serviceaccount_token.h"

#include <boost/json.hpp>

#include "apiserver/jwt.h"
#include "util/ids.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

int64_t Seconds(util::Clock::WallTime t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

const json::object* Object(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_object() ? &it->value().get_object() : nullptr;
}

std::string String(const json::object* o, std::string_view key) {
  if (!o) return "";
  auto it = o->find(key);
  return it != o->end() && it->value().is_string() ? std::string(it->value().get_string()) : "";
}

}  // namespace

ServiceAccountTokens::ServiceAccountTokens(ServiceAccountTokenOptions options)
    : options_(std::move(options)) {
  if (!options_.public_key_pem.empty()) {
    auto kid = KeyId(options_.public_key_pem);
    if (kid.ok()) key_id_ = *kid;
  }
}

util::Clock::WallTime ServiceAccountTokens::Now() const {
  return options_.clock ? options_.clock->WallNow() : std::chrono::system_clock::now();
}

util::StatusOr<std::string> ServiceAccountTokens::Issue(const ServiceAccountClaims& c,
                                                        std::chrono::seconds lifetime,
                                                        util::Clock::WallTime* expires) const {
  if (!enabled()) return util::FailedPrecondition("service-account token signing is not set up");
  util::Clock::WallTime now = Now();
  util::Clock::WallTime exp = now + lifetime;
  json::object k8s;
  k8s["namespace"] = c.ns;
  k8s["serviceaccount"] = json::object{{"name", c.name}, {"uid", c.uid}};
  if (c.bound) {
    std::string field = c.bound->kind == "Pod"    ? "pod"
                        : c.bound->kind == "Node" ? "node"
                                                  : "secret";
    k8s[field] = json::object{{"name", c.bound->name}, {"uid", c.bound->uid}};
  }
  json::array aud;
  for (const auto& a : c.audiences) aud.emplace_back(a);
  json::object claims;
  claims["aud"] = std::move(aud);
  claims["exp"] = Seconds(exp);
  claims["iat"] = Seconds(now);
  claims["iss"] = options_.issuer;
  claims["jti"] = util::NewUuid();
  claims["kubernetes.io"] = std::move(k8s);
  claims["nbf"] = Seconds(now);
  claims["sub"] = "system:serviceaccount:" + c.ns + ":" + c.name;
  CONVERGE_ASSIGN_OR_RETURN(std::string token,
                            SignEs256(claims, options_.private_key_pem, key_id_));
  if (expires) *expires = exp;
  return token;
}

std::optional<util::StatusOr<ServiceAccountClaims>> ServiceAccountTokens::Validate(
    std::string_view token) const {
  if (!enabled()) return std::nullopt;
  // Peek at the issuer first: a token from elsewhere is not ours to reject.
  size_t a = token.find('.');
  size_t b = a == std::string_view::npos ? a : token.find('.', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  auto payload = Base64UrlDecode(token.substr(a + 1, b - a - 1));
  if (!payload.ok()) return std::nullopt;
  boost::system::error_code ec;
  json::value unverified = json::parse(*payload, ec);
  if (ec || !unverified.is_object() || String(&unverified.get_object(), "iss") != options_.issuer) {
    return std::nullopt;
  }

  auto verified = VerifyEs256(token, options_.public_key_pem);
  if (!verified.ok()) return util::StatusOr<ServiceAccountClaims>(verified.status());
  const json::object& claims = *verified;
  auto number = [&](std::string_view key) -> std::optional<int64_t> {
    auto it = claims.find(key);
    if (it == claims.end() || !it->value().is_int64()) return std::nullopt;
    return it->value().get_int64();
  };
  const int64_t now = Seconds(Now());
  auto exp = number("exp");
  if (!exp || now > *exp) {
    return util::StatusOr<ServiceAccountClaims>(util::InvalidArgument("token has expired"));
  }
  if (auto nbf = number("nbf"); nbf && now + 60 < *nbf) {  // a minute of leeway, as upstream
    return util::StatusOr<ServiceAccountClaims>(util::InvalidArgument("token is not valid yet"));
  }
  ServiceAccountClaims out;
  out.expires = util::Clock::WallTime(std::chrono::seconds(*exp));
  bool audience_ok = false;
  if (auto it = claims.find("aud"); it != claims.end()) {
    auto consider = [&](const json::value& v) {
      if (!v.is_string()) return;
      out.audiences.emplace_back(v.get_string());
      for (const auto& mine : options_.api_audiences) audience_ok |= mine == v.get_string();
    };
    if (it->value().is_array()) {
      for (const auto& v : it->value().get_array()) consider(v);
    } else {
      consider(it->value());
    }
  }
  if (!audience_ok) {
    return util::StatusOr<ServiceAccountClaims>(
        util::InvalidArgument("token audiences do not include this server"));
  }
  const json::object* k8s = Object(claims, "kubernetes.io");
  out.ns = String(k8s, "namespace");
  const json::object* sa = k8s ? Object(*k8s, "serviceaccount") : nullptr;
  out.name = String(sa, "name");
  out.uid = String(sa, "uid");
  if (out.ns.empty() || out.name.empty() || out.uid.empty()) {
    return util::StatusOr<ServiceAccountClaims>(
        util::InvalidArgument("token does not name a service account"));
  }
  for (const auto& [field, kind] :
       {std::pair{"pod", "Pod"}, std::pair{"secret", "Secret"}, std::pair{"node", "Node"}}) {
    if (const json::object* o = k8s ? Object(*k8s, field) : nullptr) {
      out.bound = BoundObject{kind, String(o, "name"), String(o, "uid")};
      break;  // a pod binding may carry its node too; the pod is what the token dies with
    }
  }
  return util::StatusOr<ServiceAccountClaims>(std::move(out));
}

UserInfo ServiceAccountUser(const std::string& ns, const std::string& name,
                            const std::string& uid) {
  UserInfo u;
  u.name = "system:serviceaccount:" + ns + ":" + name;
  u.uid = uid;
  u.groups = {"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"};
  u.authenticated = true;
  return u;
}

}  // namespace converge::apiserver
