// serviceaccounts/token (TokenRequest) and tokenreviews (TokenReview): issuing and checking
// service-account tokens over the API, as `kubectl create token` and webhook authenticators use
// them.
#include <boost/json.hpp>

#include "apiserver/codec.h"
#include "apiserver/handler_util.h"
#include "apiserver/server.h"
#include "util/time_format.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

constexpr int64_t kDefaultExpirationSeconds = 3600;
constexpr int64_t kMinExpirationSeconds = 600;
constexpr int64_t kMaxExpirationSeconds = int64_t{1} << 32;
const api::GroupVersionKind kTokenRequestGvk{"authentication.k8s.io", "v1", "TokenRequest"};

const json::object* ObjectAt(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_object() ? &it->value().get_object() : nullptr;
}

std::string StringAt(const json::object* o, std::string_view key) {
  if (!o) return "";
  auto it = o->find(key);
  return it != o->end() && it->value().is_string() ? std::string(it->value().get_string()) : "";
}

}  // namespace

std::optional<ApiOr<UserInfo>> APIServer::VerifyServiceAccountToken(std::string_view token) const {
  auto claims = sa_tokens_.Validate(token);
  if (!claims) return std::nullopt;
  if (!claims->ok()) {
    return ApiOr<UserInfo>(
        Unauthorized("Unauthorized: " + std::string(claims->status().message())));
  }
  return AuthenticateServiceAccountClaims(**claims);
}

ApiOr<UserInfo> APIServer::AuthenticateServiceAccountClaims(const ServiceAccountClaims& c) const {
  // A token outlives nothing it names: the ServiceAccount (and a bound object) must still exist
  // with the UID the token was issued for. Every request carrying a ServiceAccount token comes
  // through here, so the watch cache answers (resourceVersion "0"); only when it disagrees — an
  // object created a moment ago that it has not seen yet — does the store have the last word, as
  // upstream's token getter falls back from its listers to a live lookup.
  auto invalidated = [] {
    return Unauthorized("Unauthorized: service account token has been invalidated");
  };
  auto holds = [](ResourceStorage* st, const std::string& ns, const std::string& name,
                  const std::string& uid) {
    auto live = [&](const char* resource_version) {
      auto obj = st->Get(ns, name, resource_version);
      if (!obj.ok()) return false;
      auto parsed = (*obj)->Parse();
      return parsed.ok() && parsed->uid() == uid && parsed->deletion_timestamp().empty();
    };
    return live("0") || live("");
  };
  ResourceStorage* sas = Storage({"", "v1", "serviceaccounts"});
  if (!sas || !holds(sas, c.ns, c.name, c.uid)) return invalidated();
  if (c.bound) {
    api::GroupVersionResource gvr{"", "v1",
                                  c.bound->kind == "Pod"    ? "pods"
                                  : c.bound->kind == "Node" ? "nodes"
                                                            : "secrets"};
    ResourceStorage* st = Storage(gvr);
    if (!st || !holds(st, c.bound->kind == "Node" ? "" : c.ns, c.bound->name, c.bound->uid)) {
      return invalidated();
    }
  }
  return ServiceAccountUser(c.ns, c.name, c.uid);
}

Response APIServer::HandleTokenRequest(RequestContext& ctx) {
  if (!sa_tokens_.enabled()) {
    return ErrorResponse(NotFoundPath());
  }
  auto body = DecodeObject(ctx.req);
  if (!body.ok()) return ErrorResponse(body.error());
  if (auto err = CheckKind(*body, kTokenRequestGvk)) return ErrorResponse(*err);
  auto sa_obj = ctx.storage.Get(ctx.ns, ctx.ri.name, "");
  if (!sa_obj.ok()) return ErrorResponse(sa_obj.error());
  auto sa = (*sa_obj)->Parse();
  if (!sa.ok()) return ErrorResponse(InternalError(sa.status().message()));

  json::object& doc = body->mutable_doc();
  json::object spec =
      doc.contains("spec") && doc["spec"].is_object() ? doc["spec"].get_object() : json::object();
  std::vector<StatusCause> causes;
  int64_t seconds = kDefaultExpirationSeconds;
  if (auto it = spec.find("expirationSeconds"); it != spec.end() && !it->value().is_null()) {
    if (!it->value().is_int64()) {
      causes.push_back(FieldInvalid("spec.expirationSeconds", it->value(), "must be an integer"));
    } else {
      seconds = it->value().get_int64();
      if (seconds < kMinExpirationSeconds) {
        causes.push_back(FieldInvalid("spec.expirationSeconds", it->value(),
                                      "may not specify a duration less than 10 minutes"));
      } else if (seconds > kMaxExpirationSeconds) {
        causes.push_back(FieldInvalid("spec.expirationSeconds", it->value(),
                                      "may not specify a duration larger than 2^32 seconds"));
      }
    }
  }
  ServiceAccountClaims claims;
  claims.ns = ctx.ns;
  claims.name = std::string(sa->name());
  claims.uid = std::string(sa->uid());
  json::array audiences;
  if (auto it = spec.find("audiences"); it != spec.end() && it->value().is_array()) {
    for (const auto& a : it->value().get_array()) {
      if (a.is_string() && !a.get_string().empty()) {
        claims.audiences.emplace_back(a.get_string());
        audiences.push_back(a);
      }
    }
  }
  if (claims.audiences.empty()) {
    for (const auto& a : sa_tokens_.api_audiences()) {
      claims.audiences.push_back(a);
      audiences.emplace_back(a);
    }
  }
  if (const json::object* ref = ObjectAt(spec, "boundObjectRef")) {
    std::string kind = StringAt(ref, "kind");
    std::string name = StringAt(ref, "name");
    std::string uid = StringAt(ref, "uid");
    if (kind != "Pod" && kind != "Secret" && kind != "Node") {
      causes.push_back(FieldNotSupported("spec.boundObjectRef.kind", json::value(kind),
                                         {"Pod", "Secret", "Node"}));
    } else {
      api::GroupVersionResource gvr{"", "v1",
                                    kind == "Pod"    ? "pods"
                                    : kind == "Node" ? "nodes"
                                                     : "secrets"};
      ResourceStorage* st = Storage(gvr);
      auto obj = st ? st->Get(kind == "Node" ? "" : ctx.ns, name, "")
                    : ApiOr<CachedObjectPtr>(NotFound(gvr.Gr(), name));
      if (!obj.ok()) return ErrorResponse(obj.error());
      auto bound = (*obj)->Parse();
      if (!bound.ok()) return ErrorResponse(InternalError(bound.status().message()));
      if (!uid.empty() && uid != bound->uid()) {
        return ErrorResponse(Conflict(gvr.Gr(), name,
                                      "the UID in the bound object reference (" + uid +
                                          ") does not match the UID in record (" +
                                          std::string(bound->uid()) + ")"));
      }
      claims.bound = BoundObject{kind, name, std::string(bound->uid())};
    }
  }
  if (!causes.empty()) {
    return ErrorResponse(Invalid(kTokenRequestGvk, ctx.ri.name, std::move(causes)));
  }
  util::Clock::WallTime expires;
  auto token = sa_tokens_.Issue(claims, std::chrono::seconds(seconds), &expires);
  if (!token.ok()) return ErrorResponse(InternalError(token.status().message()));

  spec["audiences"] = std::move(audiences);
  spec["expirationSeconds"] = seconds;
  if (claims.bound) {
    json::object ref{{"kind", claims.bound->kind},
                     {"apiVersion", "v1"},
                     {"name", claims.bound->name},
                     {"uid", claims.bound->uid}};
    spec["boundObjectRef"] = std::move(ref);
  } else {
    spec["boundObjectRef"] = nullptr;
  }
  json::object out;
  out["kind"] = "TokenRequest";
  out["apiVersion"] = "authentication.k8s.io/v1";
  out["metadata"] =
      json::object{{"name", ctx.ri.name},
                   {"namespace", ctx.ns},
                   {"creationTimestamp", util::FormatRfc3339(options_.clock->WallNow())}};
  out["spec"] = std::move(spec);
  out["status"] =
      json::object{{"token", *token}, {"expirationTimestamp", util::FormatRfc3339(expires)}};
  return JsonResponse(201, json::serialize(out));
}

Response APIServer::HandleTokenReview(Request& req) {
  auto body = DecodeObject(req);
  if (!body.ok()) return ErrorResponse(body.error());
  const api::GroupVersionKind gvk{"authentication.k8s.io", "v1", "TokenReview"};
  if (auto err = CheckKind(*body, gvk)) return ErrorResponse(*err);
  json::object& doc = body->mutable_doc();
  const json::object* spec = ObjectAt(doc, "spec");
  std::string token = StringAt(spec, "token");
  if (token.empty()) {
    return ErrorResponse(Invalid(gvk, "", {FieldRequired("spec.token")}));
  }
  Request probe;
  probe.headers.emplace_back("authorization", "Bearer " + token);
  auto user = authenticator_.Authenticate(probe);
  json::object status;
  if (user.ok() && user->authenticated) {
    json::array groups;
    for (const auto& g : user->groups) groups.emplace_back(g);
    json::object u{{"username", user->name}, {"groups", std::move(groups)}};
    if (!user->uid.empty()) u["uid"] = user->uid;
    status["authenticated"] = true;
    status["user"] = std::move(u);
    json::array aud;
    for (const auto& a : sa_tokens_.api_audiences()) aud.emplace_back(a);
    status["audiences"] = std::move(aud);
  } else {
    status["user"] = json::object();
    status["error"] = user.ok() ? "token not recognized" : user.error().message;
  }
  doc["status"] = std::move(status);
  if (!doc.contains("metadata")) doc["metadata"] = json::object();
  doc["metadata"].as_object()["creationTimestamp"] = nullptr;
  return JsonResponse(201, json::serialize(doc));
}

}  // namespace converge::apiserver
