#include "apiserver/jwt.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <memory>

#include "util/base64.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

using PkeyFreePtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;
using SigPtr = std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)>;
using BioFreePtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

constexpr size_t kCoordinateBytes = 32;  // P-256

util::StatusOr<PkeyFreePtr> ReadKey(const std::string& pem, bool is_private) {
  BioFreePtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  EVP_PKEY* key = is_private ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)
                             : PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
  if (!key) return util::InvalidArgument("unreadable signing key");
  return PkeyFreePtr(key, &EVP_PKEY_free);
}

}  // namespace

std::string Base64UrlEncode(std::string_view data) {
  std::string s = util::Base64Encode(data);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return s;
}

util::StatusOr<std::string> Base64UrlDecode(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    if (c == '-') {
      c = '+';
    } else if (c == '_') {
      c = '/';
    } else if (c == '+' || c == '/' || c == '=') {
      return util::InvalidArgument("not base64url");
    }
  }
  if (s.size() % 4 == 1) return util::InvalidArgument("not base64url");
  while (s.size() % 4 != 0) s += '=';
  auto out = util::Base64Decode(s);
  if (!out) return util::InvalidArgument("not base64url");
  return *out;
}

util::StatusOr<std::string> KeyId(const std::string& public_key_pem) {
  CONVERGE_ASSIGN_OR_RETURN(PkeyFreePtr key, ReadKey(public_key_pem, false));
  unsigned char* der = nullptr;
  int len = i2d_PUBKEY(key.get(), &der);
  if (len <= 0) return util::Internal("encoding the public key");
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(der, static_cast<size_t>(len), digest);
  OPENSSL_free(der);
  return Base64UrlEncode(std::string_view(reinterpret_cast<char*>(digest), sizeof(digest)));
}

util::StatusOr<std::string> SignEs256(const json::object& claims,
                                      const std::string& private_key_pem,
                                      const std::string& key_id) {
  CONVERGE_ASSIGN_OR_RETURN(PkeyFreePtr key, ReadKey(private_key_pem, true));
  json::object header{{"alg", "ES256"}, {"kid", key_id}};
  std::string signing_input =
      Base64UrlEncode(json::serialize(header)) + "." + Base64UrlEncode(json::serialize(claims));
  MdCtxPtr ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  size_t der_len = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &der_len,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    return util::Internal("ES256 signing failed");
  }
  std::string der(der_len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(der.data()), &der_len,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    return util::Internal("ES256 signing failed");
  }
  // JWS wants the raw r||s, each 32 bytes big-endian, not OpenSSL's DER sequence.
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  SigPtr sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der_len)), &ECDSA_SIG_free);
  if (!sig) return util::Internal("ES256 signature decoding failed");
  std::string raw(2 * kCoordinateBytes, '\0');
  auto* out = reinterpret_cast<unsigned char*>(raw.data());
  if (BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), out, kCoordinateBytes) < 0 ||
      BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), out + kCoordinateBytes, kCoordinateBytes) < 0) {
    return util::Internal("ES256 signature encoding failed");
  }
  return signing_input + "." + Base64UrlEncode(raw);
}

util::StatusOr<json::object> VerifyEs256(std::string_view token,
                                         const std::string& public_key_pem) {
  size_t a = token.find('.');
  size_t b = a == std::string_view::npos ? a : token.find('.', a + 1);
  if (b == std::string_view::npos || token.find('.', b + 1) != std::string_view::npos) {
    return util::InvalidArgument("not a compact JWS");
  }
  CONVERGE_ASSIGN_OR_RETURN(std::string header_text, Base64UrlDecode(token.substr(0, a)));
  boost::system::error_code ec;
  json::value header = json::parse(header_text, ec);
  if (ec || !header.is_object() || !header.as_object().contains("alg") ||
      header.as_object().at("alg") != "ES256") {
    return util::InvalidArgument("unsupported token header");
  }
  CONVERGE_ASSIGN_OR_RETURN(PkeyFreePtr key, ReadKey(public_key_pem, false));
  CONVERGE_ASSIGN_OR_RETURN(std::string raw, Base64UrlDecode(token.substr(b + 1)));
  if (raw.size() != 2 * kCoordinateBytes) return util::InvalidArgument("bad signature length");
  const auto* in = reinterpret_cast<const unsigned char*>(raw.data());
  SigPtr sig(ECDSA_SIG_new(), &ECDSA_SIG_free);
  BIGNUM* r = BN_bin2bn(in, kCoordinateBytes, nullptr);
  BIGNUM* s = BN_bin2bn(in + kCoordinateBytes, kCoordinateBytes, nullptr);
  if (!r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return util::InvalidArgument("bad signature");
  }
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(sig.get(), &der);
  if (der_len <= 0) return util::InvalidArgument("bad signature");
  MdCtxPtr ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  std::string_view signing_input = token.substr(0, b);
  int ok = EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) == 1 &&
           EVP_DigestVerify(ctx.get(), der, static_cast<size_t>(der_len),
                            reinterpret_cast<const unsigned char*>(signing_input.data()),
                            signing_input.size()) == 1;
  OPENSSL_free(der);
  if (!ok) return util::InvalidArgument("signature does not verify");
  CONVERGE_ASSIGN_OR_RETURN(std::string payload, Base64UrlDecode(token.substr(a + 1, b - a - 1)));
  json::value claims = json::parse(payload, ec);
  if (ec || !claims.is_object()) return util::InvalidArgument("claims are not a JSON object");
  return std::move(claims.as_object());
}

}  // namespace converge::apiserver
