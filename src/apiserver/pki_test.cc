#include "apiserver/pki.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>

namespace converge::apiserver {
namespace {

namespace fs = std::filesystem;

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

X509Ptr Parse(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), int(pem.size())),
                                                &BIO_free);
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

// True when `leaf` verifies against `ca` as its only trust anchor.
bool ChainsTo(const std::string& leaf, const std::string& ca) {
  X509Ptr l = Parse(leaf), c = Parse(ca);
  if (!l || !c) return false;
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(), &X509_STORE_free);
  X509_STORE_add_cert(store.get(), c.get());
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(X509_STORE_CTX_new(),
                                                                      &X509_STORE_CTX_free);
  X509_STORE_CTX_init(ctx.get(), store.get(), l.get(), nullptr);
  return X509_verify_cert(ctx.get()) == 1;
}

std::string Subject(const std::string& pem) {
  X509Ptr x = Parse(pem);
  char buf[512];
  X509_NAME_oneline(X509_get_subject_name(x.get()), buf, sizeof(buf));
  return buf;
}

class PkiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("converge-pki-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(PkiTest, CreatesChainedCertificatesWithPrivateKeys) {
  auto pki = LoadOrCreatePki({.dir = dir_.string()});
  ASSERT_TRUE(pki.ok()) << pki.status().ToString();
  EXPECT_TRUE(ChainsTo(pki->serving.cert_pem, pki->ca.cert_pem));
  EXPECT_TRUE(ChainsTo(pki->admin.cert_pem, pki->ca.cert_pem));
  EXPECT_EQ(Subject(pki->admin.cert_pem), "/O=system:masters/CN=kubernetes-admin");

  X509Ptr serving = Parse(pki->serving.cert_pem);
  EXPECT_EQ(X509_check_ip_asc(serving.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_host(serving.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(serving.get(), "kubernetes.default.svc", 0, 0, nullptr), 1);

  for (const char* key : {"ca.key", "apiserver.key", "admin.key", "sa.key"}) {
    struct stat st {};
    ASSERT_EQ(stat((dir_ / key).c_str(), &st), 0) << key;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << key;
  }
  // Written as a group through temporary files: every file is in place, no temporary is left.
  for (const char* file : {"ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.crt",
                           "admin.key", "sa.pub", "sa.key"}) {
    EXPECT_TRUE(fs::exists(dir_ / file)) << file;
  }
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
}

TEST_F(PkiTest, ReloadKeepsTheCaAndReissuesServingForNewNames) {
  auto first = LoadOrCreatePki({.dir = dir_.string()});
  ASSERT_TRUE(first.ok());
  auto again = LoadOrCreatePki({.dir = dir_.string()});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ca.cert_pem, first->ca.cert_pem);
  EXPECT_EQ(again->serving.cert_pem, first->serving.cert_pem);
  EXPECT_EQ(again->service_account_key.key_pem, first->service_account_key.key_pem);

  auto wider = LoadOrCreatePki({.dir = dir_.string(), .extra_sans = {"10.1.2.3", "cp.example"}});
  ASSERT_TRUE(wider.ok());
  EXPECT_EQ(wider->ca.cert_pem, first->ca.cert_pem);
  EXPECT_NE(wider->serving.cert_pem, first->serving.cert_pem);
  X509Ptr serving = Parse(wider->serving.cert_pem);
  EXPECT_EQ(X509_check_ip_asc(serving.get(), "10.1.2.3", 0), 1);
  EXPECT_EQ(X509_check_host(serving.get(), "cp.example", 0, 0, nullptr), 1);
}

TEST_F(PkiTest, ClientCertificatesCarryUserAndGroups) {
  auto pki = LoadOrCreatePki({.dir = dir_.string()});
  ASSERT_TRUE(pki.ok());
  auto cert = pki->ClientCertificate("jane", {"dev", "ops"});
  ASSERT_TRUE(cert.ok());
  EXPECT_TRUE(ChainsTo(cert->cert_pem, pki->ca.cert_pem));
  EXPECT_EQ(Subject(cert->cert_pem), "/O=dev/O=ops/CN=jane");
  auto other_ca = CreateCa("someone-else");
  ASSERT_TRUE(other_ca.ok());
  EXPECT_FALSE(ChainsTo(cert->cert_pem, other_ca->cert_pem));
}

}  // namespace
}  // namespace converge::apiserver
