// ServiceAccount tokens: signed JWTs that name a ServiceAccount (and optionally the Pod or Secret
// they are bound to), an audience and an expiry, as upstream's TokenRequest API issues them.
//
// Issue and Validate are pure with respect to the cluster: Validate checks the signature, the
// issuer, the time window and the audience. Whether the ServiceAccount (and the bound object)
// still exists with the UID in the token is the caller's check (APIServer does it against
// storage), because deleting the ServiceAccount must invalidate its tokens.
//
// Thread-safety: immutable after construction; Issue and Validate are thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/request.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::apiserver {

inline constexpr std::string_view kDefaultServiceAccountIssuer =
    "https://kubernetes.default.svc.cluster.local";

struct ServiceAccountTokenOptions {
  std::string issuer{kDefaultServiceAccountIssuer};
  // The API server's own audiences: a token must name one of them to authenticate to it.
  std::vector<std::string> api_audiences{std::string(kDefaultServiceAccountIssuer)};
  std::string private_key_pem;
  std::string public_key_pem;
  const util::Clock* clock = nullptr;  // null: the system clock
};

// The object a token is bound to: it dies with that object.
struct BoundObject {
  std::string kind;  // Pod, Secret or Node
  std::string name;
  std::string uid;
};

struct ServiceAccountClaims {
  std::string ns;
  std::string name;
  std::string uid;
  std::optional<BoundObject> bound;
  std::vector<std::string> audiences;
  util::Clock::WallTime expires;
};

class ServiceAccountTokens {
 public:
  explicit ServiceAccountTokens(ServiceAccountTokenOptions options);

  bool enabled() const { return !options_.private_key_pem.empty(); }
  const std::vector<std::string>& api_audiences() const { return options_.api_audiences; }

  // A token for `claims` (its `expires` is ignored): valid from now for `lifetime`.
  util::StatusOr<std::string> Issue(const ServiceAccountClaims& claims,
                                    std::chrono::seconds lifetime,
                                    util::Clock::WallTime* expires) const;

  // nullopt when the token is not one of ours (another issuer, not a JWT): other authenticators
  // may know it. Otherwise the claims, or why the token is invalid.
  std::optional<util::StatusOr<ServiceAccountClaims>> Validate(std::string_view token) const;

 private:
  util::Clock::WallTime Now() const;

  const ServiceAccountTokenOptions options_;
  std::string key_id_;
};

// The user a ServiceAccount authenticates as: system:serviceaccount:<ns>:<name>, in
// system:serviceaccounts and system:serviceaccounts:<ns>.
UserInfo ServiceAccountUser(const std::string& ns, const std::string& name, const std::string& uid);

}  // namespace converge::apiserver
