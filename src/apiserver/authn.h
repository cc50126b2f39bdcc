// Authentication: who is asking (seed §三 step 2). Tried in order, first success wins:
//   1. an x509 client certificate chaining to the cluster CA (CN = user, O = groups);
//   2. a bearer token: a static token (--token-auth-file) or a token verifier (service-account
//      JWTs);
//   3. no credentials at all: system:anonymous in system:unauthenticated.
// Credentials that were presented and are invalid are 401, never anonymous (upstream's union
// authenticator). In-process requests carry their identity already.
//
// Thread-safety: Authenticate is const and thread-safe.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "apiserver/errors.h"
#include "apiserver/request.h"

namespace converge::apiserver {

struct AuthenticatorOptions {
  // token → user; loaded from a static token file.
  std::map<std::string, UserInfo, std::less<>> static_tokens;
  // Verifies other bearer tokens (service-account JWTs): nullopt = not a token it knows.
  std::function<std::optional<ApiOr<UserInfo>>(std::string_view token)> token_verifier;
  bool anonymous = true;
};

class Authenticator {
 public:
  explicit Authenticator(AuthenticatorOptions options) : options_(std::move(options)) {}
  ApiOr<UserInfo> Authenticate(const Request& req) const;

 private:
  const AuthenticatorOptions options_;
};

// Parses upstream's static token file: one `token,user,uid[,"group1,group2"]` per line.
util::StatusOr<std::map<std::string, UserInfo, std::less<>>> ParseTokenFile(std::string_view text);

// Paths anonymous users may read: health, version and discovery (everything else is 401).
bool IsPublicPath(std::string_view path);

}  // namespace converge::apiserver
