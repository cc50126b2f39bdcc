// Test-only: a throw-away certificate authority with a server and a client certificate, made
// with OpenSSL at test time (EC P-256, valid for a day). Header-only so that it stays out of the
// library.
#pragma once

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>
#include <vector>

namespace converge::client::testing {

struct TestPki {
  std::string ca_pem;
  std::string server_cert_pem;  // SAN: IP 127.0.0.1, DNS localhost
  std::string server_key_pem;
  std::string client_cert_pem;  // CN test-user, O system:masters
  std::string client_key_pem;
};

namespace pki_internal {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

inline KeyPtr NewKey() {
  return KeyPtr(EVP_EC_gen("P-256"), &EVP_PKEY_free);
}

inline std::string KeyPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

inline std::string CertPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

inline void AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// Signs a certificate for `key` with `issuer_key` (self-signed when issuer is null).
inline CertPtr MakeCert(EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key, long serial,
                        const std::vector<std::pair<std::string, std::string>>& subject, bool is_ca,
                        const char* san) {
  CertPtr cert(X509_new(), &X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& [field, value] : subject) {
    X509_NAME_add_entry_by_txt(name, field.c_str(), MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1, 0);
  }
  X509* issuer_cert = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer_cert));
  if (is_ca) {
    AddExt(cert.get(), issuer_cert, NID_basic_constraints, "critical,CA:TRUE");
    AddExt(cert.get(), issuer_cert, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExt(cert.get(), issuer_cert, NID_basic_constraints, "critical,CA:FALSE");
    AddExt(cert.get(), issuer_cert, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    AddExt(cert.get(), issuer_cert, NID_ext_key_usage, "serverAuth,clientAuth");
  }
  if (san != nullptr) AddExt(cert.get(), issuer_cert, NID_subject_alt_name, san);
  X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256());
  return cert;
}

}  // namespace pki_internal

inline TestPki MakeTestPki(const std::string& ca_name = "converge-test-ca") {
  using namespace pki_internal;
  TestPki out;
  KeyPtr ca_key = NewKey();
  CertPtr ca = MakeCert(ca_key.get(), nullptr, nullptr, 1, {{"CN", ca_name}}, true, nullptr);
  KeyPtr server_key = NewKey();
  CertPtr server = MakeCert(server_key.get(), ca.get(), ca_key.get(), 2, {{"CN", "localhost"}},
                            false, "IP:127.0.0.1,DNS:localhost");
  KeyPtr client_key = NewKey();
  CertPtr client = MakeCert(client_key.get(), ca.get(), ca_key.get(), 3,
                            {{"O", "system:masters"}, {"CN", "test-user"}}, false, nullptr);
  out.ca_pem = CertPem(ca.get());
  out.server_cert_pem = CertPem(server.get());
  out.server_key_pem = KeyPem(server_key.get());
  out.client_cert_pem = CertPem(client.get());
  out.client_key_pem = KeyPem(client_key.get());
  return out;
}

}  // namespace converge::client::testing
