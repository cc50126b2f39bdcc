// Compact JWS with ES256 (ECDSA P-256 over SHA-256), the signature service-account tokens use.
//
// Only what service-account tokens need: sign a JSON claims object with the server's private key,
// and verify a token against its public key. Claim checks (expiry, audience, the bound
// ServiceAccount) belong to the caller; see serviceaccount_token.h.
//
// Thread-safety: the functions are independent and thread-safe.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <string_view>

#include "util/status.h"

namespace converge::apiserver {

// base64url without padding (RFC 7515 §2).
std::string Base64UrlEncode(std::string_view data);
util::StatusOr<std::string> Base64UrlDecode(std::string_view text);

// header.payload.signature, with header {"alg":"ES256","kid":key_id}.
util::StatusOr<std::string> SignEs256(const boost::json::object& claims,
                                      const std::string& private_key_pem,
                                      const std::string& key_id);

// The claims of a token whose ES256 signature verifies; InvalidArgument otherwise.
util::StatusOr<boost::json::object> VerifyEs256(std::string_view token,
                                                const std::string& public_key_pem);

// The key id upstream derives for a public key: base64url(SHA-256(DER SubjectPublicKeyInfo)).
util::StatusOr<std::string> KeyId(const std::string& public_key_pem);

}  // namespace converge::apiserver
