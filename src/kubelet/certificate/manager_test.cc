// The certificate managers against the fake API client: where the first pair comes from
// (store, kubeconfig files, kubeconfig data, none), the rotation deadline (70-90 % of the
// lifetime; at once for no certificate, an expired one, another subject or kubeconfig data),
// a rotation (generateName CSR sent with the current certificate or the bootstrap credentials,
// the issued pair stored and the generation bumped), failures and the TTL.
#include "kubelet/certificate/manager.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "apiclient/testing/fake_rest_client.h"
#include "common/openssl.h"
#include "gtest/gtest.h"
#include "kubelet/certificate/csr.h"
#include "nlohmann/json.hpp"

namespace kubelet::certificate {
namespace {

using json = nlohmann::json;
constexpr char kCsrs[] = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

struct Pair {
  std::string cert;
  std::string key;
};

// A self-signed pair for CN `cn`, valid from `not_before` for `lifetime`, with the subject
// alternative names `sans` (OpenSSL's "DNS:a,IP:1.2.3.4" form) when not empty.
Pair MakePair(const std::string& cn, absl::Time not_before, absl::Duration lifetime,
              const std::string& sans = "") {
  ossl::PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  ossl::X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 9);
  ASN1_TIME_set(X509_getm_notBefore(cert.get()), absl::ToTimeT(not_before));
  ASN1_TIME_set(X509_getm_notAfter(cert.get()), absl::ToTimeT(not_before + lifetime));
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("system:nodes"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  if (!sans.empty()) {
    X509_EXTENSION* e = X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name, sans.c_str());
    X509_add_ext(cert.get(), e, -1);
    X509_EXTENSION_free(e);
  }
  X509_sign(cert.get(), key.get(), EVP_sha256());
  ossl::BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert.get());
  Pair p;
  p.cert = ossl::BioString(bio.get());
  p.key = *KeyPem(key.get());
  return p;
}

class ManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kubelet-certmgr-XXXXXX";
    dir_ = mkdtemp(tmpl);
    options_.node_name = "n1";
    options_.cert_dir = dir_ + "/pki";
    options_.config.host = "https://127.0.0.1:6443";
    options_.poll = absl::Milliseconds(5);
    options_.csr_wait = absl::Seconds(20);
    options_.random = [this] { return random_; };
    options_.make_client = [this](const apiclient::RestConfig& rc)
        -> absl::StatusOr<std::unique_ptr<apiclient::RestClient>> {
      seen_cert_ = rc.client_cert_pem;
      seen_token_ = rc.bearer_token;
      return std::make_unique<apiclient::testing::ForwardingRestClient>(&fake_);
    };
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<CertificateManager> Make() {
    absl::StatusOr<std::unique_ptr<CertificateManager>> m =
        CertificateManager::Create(options_, clock_);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *std::move(m) : nullptr;
  }

  // Plays the controller manager: signs the first new CSR with `issued` (after checking it).
  std::thread Signer(const Pair& issued) {
    return std::thread([this, issued] {
      for (int i = 0; i < 4000; ++i) {
        for (const auto& r : fake_.requests()) {
          if (r.method != "POST" || !absl::StrContains(r.path, "certificatesigningrequests")) {
            continue;
          }
          json list = json::parse(fake_.Do({.path = kCsrs})->body);
          for (json csr : list.value("items", json::array())) {
            if (csr.contains("status") && csr["status"].contains("certificate")) continue;
            signed_csr_ = csr;
            csr["status"] = {{"conditions", {{{"type", "Approved"}, {"status", "True"}}}},
                             {"certificate", absl::Base64Escape(issued.cert)}};
            fake_.Upsert(kCsrs, csr);
            return;
          }
        }
        absl::SleepFor(absl::Milliseconds(5));
      }
    });
  }

  std::string dir_;
  FakeClock clock_{absl::FromUnixSeconds(1800000000)};
  double random_ = 0.5;
  apiclient::testing::FakeRestClient fake_;
  CertificateManagerOptions options_;
  std::string seen_cert_, seen_token_;
  json signed_csr_;
};

TEST_F(ManagerTest, DeadlineIsSeventyToNinetyPercentOfTheLifetime) {
  const absl::Time nb = clock_.Now() - absl::Hours(1);
  Pair p = MakePair("system:node:n1", nb, absl::Hours(100));
  options_.config.client_cert_file = dir_ + "/c.pem";
  options_.config.client_key_file = dir_ + "/k.pem";
  std::ofstream(options_.config.client_cert_file) << p.cert;
  std::ofstream(options_.config.client_key_file) << p.key;
  random_ = 0;
  auto m = Make();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->RotationDeadline(), nb + absl::Hours(70));
  EXPECT_EQ(m->Current().cert_pem, p.cert);
  EXPECT_EQ(m->Current().generation, 1u);
  // Files from the kubeconfig are used as they are, not copied to the store.
  EXPECT_FALSE(std::filesystem::exists(options_.cert_dir + "/kubelet-client-current.pem"));
  EXPECT_NEAR(m->TtlSeconds(), absl::ToDoubleSeconds(absl::Hours(99)), 1);
  random_ = 0.999999;
  m = Make();
  EXPECT_LE(absl::AbsDuration(m->RotationDeadline() - (nb + absl::Hours(90))), absl::Seconds(1));
}

TEST_F(ManagerTest, NoCertificateBootstrapsWithTheBootstrapCredentials) {
  apiclient::RestConfig boot;
  boot.host = "https://127.0.0.1:6443";
  boot.bearer_token = "abcdef.0123456789abcdef";
  options_.bootstrap = boot;
  auto m = Make();
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->Current().cert_pem.empty());
  EXPECT_EQ(m->Current().generation, 0u);
  EXPECT_TRUE(std::isinf(m->TtlSeconds()));
  EXPECT_EQ(m->RotationDeadline(), clock_.Now());

  const Pair issued = MakePair("system:node:n1", clock_.Now(), absl::Hours(24 * 365));
  std::thread signer = Signer(issued);
  absl::Status st = m->RotateOnce();
  signer.join();
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(seen_token_, "abcdef.0123456789abcdef");
  EXPECT_TRUE(seen_cert_.empty());
  EXPECT_TRUE(absl::StartsWith(signed_csr_["metadata"].value("name", ""), "csr-"));
  EXPECT_EQ(signed_csr_["spec"]["signerName"], "kubernetes.io/kube-apiserver-client-kubelet");
  EXPECT_EQ(signed_csr_["spec"]["usages"], json({"digital signature", "client auth"}));

  apiclient::ClientCertificate now = m->Current();
  EXPECT_EQ(now.cert_pem, issued.cert);
  EXPECT_TRUE(absl::StrContains(now.key_pem, "PRIVATE KEY"));
  EXPECT_EQ(now.generation, 1u);
  EXPECT_EQ(m->Source()().generation, 1u);
  const std::string current = options_.cert_dir + "/kubelet-client-current.pem";
  ASSERT_TRUE(std::filesystem::is_symlink(current));
  auto stored = LoadPair(current);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->first, issued.cert);
  EXPECT_EQ(stored->second, now.key_pem);
  EXPECT_NEAR(m->TtlSeconds(), absl::ToDoubleSeconds(absl::Hours(24 * 365)), 1);

  // A new manager (a restart) loads the store.
  auto again = Make();
  EXPECT_EQ(again->Current().cert_pem, issued.cert);
  EXPECT_GT(again->RotationDeadline(), clock_.Now() + absl::Hours(24 * 250));
}

TEST_F(ManagerTest, RotationUsesTheCurrentCertificate) {
  Pair p = MakePair("system:node:n1", clock_.Now() - absl::Minutes(55), absl::Hours(1));
  std::ignore = StoreCertificate(options_.cert_dir, "kubelet-client", p.cert, p.key, clock_.Now());
  random_ = 0.5;
  auto m = Make();
  ASSERT_TRUE(m);
  // 80 % of an hour after notBefore: already passed.
  EXPECT_LT(m->RotationDeadline(), clock_.Now());
  const Pair issued = MakePair("system:node:n1", clock_.Now(), absl::Hours(24));
  std::thread signer = Signer(issued);
  ASSERT_TRUE(m->RotateOnce().ok());
  signer.join();
  EXPECT_EQ(seen_cert_, p.cert);
  EXPECT_TRUE(seen_token_.empty());
  EXPECT_EQ(m->Current().cert_pem, issued.cert);
  EXPECT_EQ(m->Current().generation, 2u);
  EXPECT_NE(m->Current().key_pem, p.key);
}

TEST_F(ManagerTest, KubeconfigDataIsStoredAndRotatedAtOnce) {
  Pair p = MakePair("system:node:n1", clock_.Now() - absl::Hours(1), absl::Hours(24 * 365));
  options_.config.client_cert_pem = p.cert;
  options_.config.client_key_pem = p.key;
  auto m = Make();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->RotationDeadline(), clock_.Now());
  auto stored = LoadPair(options_.cert_dir + "/kubelet-client-current.pem");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->first, p.cert);
}

TEST_F(ManagerTest, AnotherSubjectIsRotatedAtOnce) {
  Pair p = MakePair("kubernetes-admin", clock_.Now() - absl::Hours(1), absl::Hours(24 * 365));
  std::ignore = StoreCertificate(options_.cert_dir, "kubelet-client", p.cert, p.key, clock_.Now());
  auto m = Make();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->RotationDeadline(), clock_.Now());
}

TEST_F(ManagerTest, DeniedRequestFailsAndCounts) {
  Pair p = MakePair("system:node:n1", clock_.Now() - absl::Minutes(55), absl::Hours(1));
  std::ignore = StoreCertificate(options_.cert_dir, "kubelet-client", p.cert, p.key, clock_.Now());
  auto m = Make();
  std::thread denier([this] {
    for (int i = 0; i < 4000; ++i) {
      json list = json::parse(fake_.Do({.path = kCsrs})->body);
      for (json csr : list.value("items", json::array())) {
        csr["status"] = {
            {"conditions", {{{"type", "Denied"}, {"status", "True"}, {"reason", "NotMine"}}}}};
        fake_.Upsert(kCsrs, csr);
        return;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
  });
  absl::Status st = m->RotateOnce();
  denier.join();
  EXPECT_TRUE(absl::IsPermissionDenied(st)) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "Denied")) << st;
  // The old pair stays in use.
  EXPECT_EQ(m->Current().cert_pem, p.cert);
  EXPECT_EQ(m->Current().generation, 1u);

  // The server unreachable: the attempt fails without a request made.
  fake_.InjectFault({.method = "POST", .code = 0});
  st = m->RotateOnce();
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(absl::StrContains(st.message(), "unable to create certificate signing request"))
      << st;
}

TEST_F(ManagerTest, StartRotatesInTheBackgroundAndStopEndsTheWait) {
  int errors = 0;
  options_.on_renew_error = [&errors] { ++errors; };
  apiclient::RestConfig boot;
  boot.host = "https://127.0.0.1:6443";
  boot.bearer_token = "t";
  options_.bootstrap = boot;
  auto m = Make();
  const Pair issued = MakePair("system:node:n1", clock_.Now(), absl::Hours(24));
  std::thread signer = Signer(issued);
  m->Start();
  for (int i = 0; i < 2000 && m->Current().generation == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  signer.join();
  EXPECT_EQ(m->Current().cert_pem, issued.cert);
  EXPECT_EQ(errors, 0);
  // Now waiting for a deadline hours away: Stop() returns at once.
  m->Stop();
}

// The subject alternative names of a CSR's PEM.
SubjectAltNames RequestSans(const std::string& csr_pem) {
  SubjectAltNames out;
  ossl::BioPtr bio(BIO_new_mem_buf(csr_pem.data(), static_cast<int>(csr_pem.size())));
  ossl::ReqPtr req(PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr));
  if (!req) return out;
  STACK_OF(X509_EXTENSION)* exts = X509_REQ_get_extensions(req.get());
  for (int i = 0; i < sk_X509_EXTENSION_num(exts); ++i) {
    X509_EXTENSION* e = sk_X509_EXTENSION_value(exts, i);
    if (OBJ_obj2nid(X509_EXTENSION_get_object(e)) != NID_subject_alt_name) continue;
    auto* names = static_cast<GENERAL_NAMES*>(X509V3_EXT_d2i(e));
    for (int j = 0; j < sk_GENERAL_NAME_num(names); ++j) {
      const GENERAL_NAME* g = sk_GENERAL_NAME_value(names, j);
      if (g->type == GEN_DNS) {
        out.dns_names.emplace_back(
            reinterpret_cast<const char*>(ASN1_STRING_get0_data(g->d.dNSName)));
      } else if (g->type == GEN_IPADD && ASN1_STRING_length(g->d.iPAddress) == 4) {
        const unsigned char* b = ASN1_STRING_get0_data(g->d.iPAddress);
        out.ips.push_back(absl::StrCat(b[0], ".", b[1], ".", b[2], ".", b[3]));
      }
    }
    sk_GENERAL_NAME_pop_free(names, GENERAL_NAME_free);
  }
  sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
  return out;
}

class ServingManagerTest : public ManagerTest {
 protected:
  void SetUp() override {
    ManagerTest::SetUp();
    options_.kind = CertificateManagerOptions::Kind::kServing;
    // The kubelet's own API credentials, used as they are.
    options_.config.bearer_token = "node-token";
    options_.sans = [this]() -> std::optional<SubjectAltNames> { return sans_; };
    options_.on_rotated = [this](double lived) { rotated_after_.push_back(lived); };
  }
  std::optional<SubjectAltNames> sans_ = SubjectAltNames{{"n1"}, {"10.0.0.5"}};
  std::vector<double> rotated_after_;
};

TEST_F(ServingManagerTest, RequestsAServingCertificateForTheNodeAddresses) {
  auto m = Make();
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->Current().cert_pem.empty());
  EXPECT_EQ(m->RotationDeadline(), clock_.Now());
  const Pair issued =
      MakePair("system:node:n1", clock_.Now(), absl::Hours(24), "DNS:n1,IP:10.0.0.5");
  std::thread signer = Signer(issued);
  absl::Status st = m->RotateOnce();
  signer.join();
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(seen_token_, "node-token");
  EXPECT_TRUE(seen_cert_.empty());
  EXPECT_EQ(signed_csr_["spec"]["signerName"], "kubernetes.io/kubelet-serving");
  EXPECT_EQ(signed_csr_["spec"]["usages"], json({"digital signature", "server auth"}));
  std::string request;
  ASSERT_TRUE(absl::Base64Unescape(signed_csr_["spec"].value("request", ""), &request));
  EXPECT_EQ(RequestSans(request), (SubjectAltNames{{"n1"}, {"10.0.0.5"}}));
  EXPECT_EQ(m->Current().cert_pem, issued.cert);
  EXPECT_TRUE(std::filesystem::is_symlink(options_.cert_dir + "/kubelet-server-current.pem"));
  EXPECT_FALSE(std::filesystem::exists(options_.cert_dir + "/kubelet-client-current.pem"));
  EXPECT_TRUE(rotated_after_.empty());  // nothing was replaced

  // A restart loads it, and keeps it while the names match.
  auto again = Make();
  EXPECT_EQ(again->Current().cert_pem, issued.cert);
  EXPECT_GT(again->RotationDeadline(), clock_.Now() + absl::Hours(16));
}

TEST_F(ServingManagerTest, NoAddressYetSendsNoRequest) {
  sans_ = std::nullopt;
  auto m = Make();
  absl::Status st = m->RotateOnce();
  EXPECT_TRUE(absl::IsUnavailable(st)) << st;
  sans_ = SubjectAltNames{{"n1"}, {}};  // a hostname alone is not enough
  EXPECT_TRUE(absl::IsUnavailable(m->RotateOnce()));
  for (const auto& r : fake_.requests()) EXPECT_NE(r.method, "POST") << r.path;
}

TEST_F(ServingManagerTest, OtherNamesAreReplacedAtOnceAndTheOldAgeIsReported) {
  Pair old = MakePair("system:node:n1", clock_.Now() - absl::Hours(2), absl::Hours(24 * 30),
                      "DNS:n1,IP:10.0.0.4");
  std::ignore =
      StoreCertificate(options_.cert_dir, "kubelet-server", old.cert, old.key, clock_.Now());
  auto m = Make();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->Current().cert_pem, old.cert);  // served meanwhile
  EXPECT_EQ(m->RotationDeadline(), clock_.Now());
  const Pair issued =
      MakePair("system:node:n1", clock_.Now(), absl::Hours(24), "DNS:n1,IP:10.0.0.5");
  std::thread signer = Signer(issued);
  ASSERT_TRUE(m->RotateOnce().ok());
  signer.join();
  EXPECT_EQ(m->Current().cert_pem, issued.cert);
  ASSERT_EQ(rotated_after_.size(), 1u);
  EXPECT_NEAR(rotated_after_[0], 7200, 1);
}

TEST_F(ServingManagerTest, ExtraNamesAndAddressSpellingsDoNotTriggerARotation) {
  Pair p = MakePair("system:node:n1", clock_.Now() - absl::Hours(1), absl::Hours(24 * 30),
                    "DNS:n1,DNS:n1.example,IP:10.0.0.5,IP:fd00::1");
  std::ignore = StoreCertificate(options_.cert_dir, "kubelet-server", p.cert, p.key, clock_.Now());
  sans_ = SubjectAltNames{{"n1"}, {"FD00:0::1", "10.0.0.5"}};
  auto m = Make();
  ASSERT_TRUE(m);
  EXPECT_GT(m->RotationDeadline(), clock_.Now() + absl::Hours(24 * 20));
  // A missing name does.
  sans_ = SubjectAltNames{{"n1", "n1.other"}, {"10.0.0.5"}};
  m = Make();
  EXPECT_EQ(m->RotationDeadline(), clock_.Now());
}

TEST_F(ServingManagerTest, TlsCertFileIsUsedWhileTheStoreIsEmpty) {
  Pair given = MakePair("system:node:n1", clock_.Now() - absl::Hours(1), absl::Hours(24 * 365),
                        "DNS:n1,IP:10.0.0.5");
  options_.serving_cert_file = dir_ + "/tls.crt";
  options_.serving_key_file = dir_ + "/tls.key";
  std::ofstream(options_.serving_cert_file) << given.cert;
  std::ofstream(options_.serving_key_file) << given.key;
  // The kubeconfig's client files are never a serving pair.
  Pair client = MakePair("system:node:n1", clock_.Now() - absl::Hours(1), absl::Hours(24));
  options_.config.client_cert_file = dir_ + "/c.pem";
  options_.config.client_key_file = dir_ + "/k.pem";
  std::ofstream(options_.config.client_cert_file) << client.cert;
  std::ofstream(options_.config.client_key_file) << client.key;
  auto m = Make();
  EXPECT_EQ(m->Current().cert_pem, given.cert);
  EXPECT_GT(m->RotationDeadline(), clock_.Now());
  std::filesystem::remove(options_.serving_cert_file);
  m = Make();
  EXPECT_TRUE(m->Current().cert_pem.empty());
}

}  // namespace
}  // namespace kubelet::certificate
