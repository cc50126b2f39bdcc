#include "apiserver/pki.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

namespace converge::apiserver {

namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

util::Status OpenSslError(const char* what) {
  return util::Internal(std::string(what) + " failed (OpenSSL)");
}

util::StatusOr<PkeyPtr> NewKey() {
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return OpenSslError("generating an ECDSA key");
  return key;
}

std::string KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string PublicKeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PUBKEY(bio.get(), key);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string CertPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

util::StatusOr<PkeyPtr> ParseKey(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return util::InvalidArgument("not a PEM private key");
  return key;
}

util::StatusOr<X509Ptr> ParseCert(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return util::InvalidArgument("not a PEM certificate");
  return cert;
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

void SetSubject(X509* cert, const std::string& cn, const std::vector<std::string>& orgs) {
  X509_NAME* name = X509_get_subject_name(cert);
  for (const auto& o : orgs) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
}

void SetSerialAndValidity(X509* cert, std::chrono::hours validity) {
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
  BN_free(bn);
  // Valid from a minute ago: tolerate small clock differences between processes.
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), static_cast<long>(validity.count()) * 3600);
}

// Writes files durably and atomically as a group: each to PATH.tmp, all fsynced concurrently
// (one device flush's latency instead of one per file: this was most of a first start's PKI
// time), then renamed into place, then the directory fsynced so the renames survive a crash.
struct PendingFile {
  std::string path;
  std::string data;
  mode_t mode;
};

util::Status WriteFilesDurably(const std::string& dir, const std::vector<PendingFile>& files) {
  if (files.empty()) return util::Status();
  std::vector<int> fds(files.size(), -1);
  util::Status status;
  for (size_t i = 0; i < files.size() && status.ok(); ++i) {
    const PendingFile& f = files[i];
    std::string tmp = f.path + ".tmp";
    fds[i] = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, f.mode);
    if (fds[i] < 0 ||
        ::write(fds[i], f.data.data(), f.data.size()) != static_cast<ssize_t>(f.data.size()) ||
        ::fchmod(fds[i], f.mode) != 0) {
      status = util::Unavailable("writing " + tmp + ": " + std::strerror(errno));
    }
  }
  if (status.ok()) {
    std::vector<int> errors(files.size(), 0);
    {
      std::vector<std::jthread> syncs;
      for (size_t i = 0; i < files.size(); ++i) {
        syncs.emplace_back([&, i] { errors[i] = ::fsync(fds[i]) == 0 ? 0 : errno; });
      }
    }
    for (size_t i = 0; i < files.size() && status.ok(); ++i) {
      if (errors[i] != 0) {
        status =
            util::Unavailable("syncing " + files[i].path + ".tmp: " + std::strerror(errors[i]));
      }
    }
  }
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
  for (size_t i = 0; i < files.size() && status.ok(); ++i) {
    std::string tmp = files[i].path + ".tmp";
    if (std::rename(tmp.c_str(), files[i].path.c_str()) != 0) {
      status = util::Unavailable("writing " + files[i].path + ": " + std::strerror(errno));
    }
  }
  if (!status.ok()) return status;
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return util::Unavailable("syncing " + dir + ": " + std::strerror(errno));
  int rc = ::fsync(dfd);
  int err = errno;
  ::close(dfd);
  if (rc != 0) return util::Unavailable("syncing " + dir + ": " + std::strerror(err));
  return util::Status();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool IsIp(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

// Every SAN the serving certificate must carry.
std::vector<std::string> ServingSans(const std::vector<std::string>& extra) {
  std::vector<std::string> sans = {"127.0.0.1",
                                   "::1",
                                   "localhost",
                                   "10.96.0.1",
                                   "kubernetes",
                                   "kubernetes.default",
                                   "kubernetes.default.svc",
                                   "kubernetes.default.svc.cluster.local"};
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0]) sans.emplace_back(host);
  for (const auto& e : extra) {
    if (!e.empty() && std::find(sans.begin(), sans.end(), e) == sans.end()) sans.push_back(e);
  }
  return sans;
}

bool CertHasSans(const std::string& pem, const std::vector<std::string>& sans) {
  auto cert = ParseCert(pem);
  if (!cert.ok()) return false;
  for (const auto& san : sans) {
    int r = IsIp(san) ? X509_check_ip_asc(cert->get(), san.c_str(), 0)
                      : X509_check_host(cert->get(), san.c_str(), san.size(), 0, nullptr);
    if (r != 1) return false;
  }
  return true;
}

}  // namespace

util::StatusOr<CertAndKey> CreateCa(const std::string& common_name) {
  CONVERGE_ASSIGN_OR_RETURN(PkeyPtr key, NewKey());
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  SetSerialAndValidity(cert.get(), std::chrono::hours(24 * 365 * 10));
  SetSubject(cert.get(), common_name, {});
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  X509_set_pubkey(cert.get(), key.get());
  if (!AddExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), cert.get(), NID_key_usage,
                    "critical,digitalSignature,keyEncipherment,keyCertSign") ||
      !AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash")) {
    return OpenSslError("CA extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return OpenSslError("signing the CA");
  return CertAndKey{CertPem(cert.get()), KeyPem(key.get())};
}

util::StatusOr<CertAndKey> IssueCertificate(const CertAndKey& ca, const CertRequest& request) {
  CONVERGE_ASSIGN_OR_RETURN(X509Ptr ca_cert, ParseCert(ca.cert_pem));
  CONVERGE_ASSIGN_OR_RETURN(PkeyPtr ca_key, ParseKey(ca.key_pem));
  CONVERGE_ASSIGN_OR_RETURN(PkeyPtr key, NewKey());
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  SetSerialAndValidity(cert.get(), request.validity);
  SetSubject(cert.get(), request.common_name, request.organizations);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  X509_set_pubkey(cert.get(), key.get());
  bool ok = AddExtension(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE") &&
            AddExtension(cert.get(), ca_cert.get(), NID_key_usage,
                         "critical,digitalSignature,keyEncipherment") &&
            AddExtension(cert.get(), ca_cert.get(), NID_ext_key_usage,
                         request.server ? "serverAuth" : "clientAuth") &&
            AddExtension(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid:always");
  std::string san;
  for (const auto& d : request.dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const auto& ip : request.ip_addresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
  if (ok && !san.empty()) ok = AddExtension(cert.get(), ca_cert.get(), NID_subject_alt_name, san);
  if (!ok) return OpenSslError("certificate extensions");
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
    return OpenSslError("signing a certificate");
  }
  return CertAndKey{CertPem(cert.get()), KeyPem(key.get())};
}

util::StatusOr<CertAndKey> CreateSigningKey() {
  CONVERGE_ASSIGN_OR_RETURN(PkeyPtr key, NewKey());
  return CertAndKey{PublicKeyPem(key.get()), KeyPem(key.get())};
}

util::StatusOr<CertAndKey> Pki::ClientCertificate(const std::string& user,
                                                  const std::vector<std::string>& groups) const {
  CertRequest r;
  r.common_name = user;
  r.organizations = groups;
  return IssueCertificate(ca, r);
}

util::StatusOr<Pki> LoadOrCreatePki(const PkiOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec) return util::Unavailable("cannot create " + options.dir + ": " + ec.message());
  fs::permissions(options.dir, fs::perms::owner_all, ec);
  Pki pki;
  pki.dir = options.dir;
  auto path = [&](const char* name) { return (fs::path(options.dir) / name).string(); };
  auto load_pair = [&](const char* cert, const char* key, CertAndKey* out) {
    out->cert_pem = ReadFile(path(cert));
    out->key_pem = ReadFile(path(key));
    return !out->cert_pem.empty() && !out->key_pem.empty();
  };
  // Everything missing is generated first and written as one durable group at the end.
  std::vector<PendingFile> pending;
  auto save_pair = [&](const char* cert, const char* key, const CertAndKey& pair) {
    pending.push_back({path(key), pair.key_pem, 0600});
    pending.push_back({path(cert), pair.cert_pem, 0644});
  };

  if (!load_pair("ca.crt", "ca.key", &pki.ca)) {
    CONVERGE_ASSIGN_OR_RETURN(pki.ca, CreateCa("converge-ca"));
    save_pair("ca.crt", "ca.key", pki.ca);
  }
  std::vector<std::string> sans = ServingSans(options.extra_sans);
  if (!load_pair("apiserver.crt", "apiserver.key", &pki.serving) ||
      !CertHasSans(pki.serving.cert_pem, sans)) {
    CertRequest r;
    r.common_name = "kube-apiserver";
    r.server = true;
    for (const auto& s : sans) (IsIp(s) ? r.ip_addresses : r.dns_names).push_back(s);
    CONVERGE_ASSIGN_OR_RETURN(pki.serving, IssueCertificate(pki.ca, r));
    save_pair("apiserver.crt", "apiserver.key", pki.serving);
  }
  if (!load_pair("admin.crt", "admin.key", &pki.admin)) {
    CONVERGE_ASSIGN_OR_RETURN(pki.admin,
                              pki.ClientCertificate("kubernetes-admin", {"system:masters"}));
    save_pair("admin.crt", "admin.key", pki.admin);
  }
  if (!load_pair("sa.pub", "sa.key", &pki.service_account_key)) {
    CONVERGE_ASSIGN_OR_RETURN(pki.service_account_key, CreateSigningKey());
    save_pair("sa.pub", "sa.key", pki.service_account_key);
  }
  CONVERGE_RETURN_IF_ERROR(WriteFilesDurably(options.dir, pending));
  return pki;
}

}  // namespace converge::apiserver
