// The server's PKI: a cluster CA, the serving certificate, client certificates for users and
// components, and the service-account signing key — created on first start in DIR/pki, reused
// afterwards (keys are written 0600).
//
// Keys are ECDSA P-256 (fast to generate and to handshake with); certificates are X.509 v3 signed
// with SHA-256. Client certificates carry the user in the subject CN and groups in O, which is
// how upstream's x509 authenticator reads them.
//
// Thread-safety: functions are independent; a Pki value is immutable after Load/Create.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "util/status.h"

namespace converge::apiserver {

struct CertAndKey {
  std::string cert_pem;
  std::string key_pem;
};

struct CertRequest {
  std::string common_name;
  std::vector<std::string> organizations;
  std::vector<std::string> dns_names;  // subjectAltName DNS entries (server certificates)
  std::vector<std::string> ip_addresses;
  bool server = false;  // serverAuth (else clientAuth)
  std::chrono::hours validity{24 * 365};
};

// A new self-signed CA (CN `common_name`, 10 years).
util::StatusOr<CertAndKey> CreateCa(const std::string& common_name);
// A certificate signed by `ca`.
util::StatusOr<CertAndKey> IssueCertificate(const CertAndKey& ca, const CertRequest& request);
// A fresh ECDSA P-256 private key and its public key (PEM), for signing tokens.
util::StatusOr<CertAndKey> CreateSigningKey();

struct PkiOptions {
  std::string dir;  // DIR/pki
  // Extra subjectAltNames for the serving certificate (host names or IPs); 127.0.0.1, ::1,
  // localhost, the host name and the kubernetes service names are always included.
  std::vector<std::string> extra_sans;
};

struct Pki {
  std::string dir;
  CertAndKey ca;
  CertAndKey serving;
  CertAndKey admin;                // CN kubernetes-admin, O system:masters
  CertAndKey service_account_key;  // cert_pem holds the public key

  std::string ca_file() const { return dir + "/ca.crt"; }
  std::string serving_cert_file() const { return dir + "/apiserver.crt"; }
  std::string serving_key_file() const { return dir + "/apiserver.key"; }

  // A client certificate for `user` in `groups`, signed by the cluster CA.
  util::StatusOr<CertAndKey> ClientCertificate(const std::string& user,
                                               const std::vector<std::string>& groups) const;
};

// Loads DIR/pki, creating what is missing. A serving certificate that lacks a requested SAN is
// re-issued.
util::StatusOr<Pki> LoadOrCreatePki(const PkiOptions& options);

}  // namespace converge::apiserver
