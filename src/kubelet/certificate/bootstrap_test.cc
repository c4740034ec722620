// TLS bootstrap against the fake API client: the CSR's name, subject, signer and usages, the
// wait for the signed certificate, the files and kubeconfig written, reuse of a valid
// kubeconfig, and a denied request.
#include "kubelet/certificate/bootstrap.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "apiclient/testing/fake_rest_client.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace kubelet::certificate {
namespace {

using json = nlohmann::json;
constexpr char kCsrs[] = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

// A self-signed certificate valid for a day (the bootstrap does not check who signed it).
std::string TestCertPem() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 7);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("system:node:n1"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_set_pubkey(cert, key);
  X509_sign(cert, key, EVP_sha256());
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);  // NOLINT(runtime/int)
  std::string pem(data, static_cast<size_t>(len));
  BIO_free_all(bio);
  X509_free(cert);
  EVP_PKEY_free(key);
  return pem;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class BootstrapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kubelet-bootstrap-XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::ofstream(dir_ + "/bootstrap.kubeconfig")
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
           "    server: https://127.0.0.1:6443\n    certificate-authority-data: "
        << absl::Base64Escape("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n")
        << "\nusers:\n- name: u\n  user:\n    token: abcdef.0123456789abcdef\n"
           "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
    options_.kubeconfig_path = dir_ + "/kubelet.kubeconfig";
    options_.bootstrap_kubeconfig_path = dir_ + "/bootstrap.kubeconfig";
    options_.cert_dir = dir_ + "/pki";
    options_.node_name = "n1";
    options_.poll = absl::Milliseconds(10);
    options_.wait = absl::Seconds(30);
    options_.make_client = [this](const apiclient::RestConfig& rc)
        -> absl::StatusOr<std::unique_ptr<apiclient::RestClient>> {
      seen_token_ = rc.bearer_token;
      return std::make_unique<apiclient::testing::ForwardingRestClient>(&fake_);
    };
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Waits for the kubelet's CSR in the fake and returns it (null when it never came).
  json WaitCsr() {
    for (int i = 0; i < 3000; ++i) {
      for (const auto& r : fake_.requests()) {
        if (r.method == "POST" && absl::StrContains(r.path, "certificatesigningrequests")) {
          json body = json::parse(r.body);
          auto stored = fake_.Get(kCsrs, "", body["metadata"]["name"]);
          if (stored.has_value()) return *stored;
        }
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    return json();
  }

  std::string dir_;
  apiclient::testing::FakeRestClient fake_;
  BootstrapOptions options_;
  std::string seen_token_;
};

TEST_F(BootstrapTest, RequestsSignsAndWritesTheKubeconfig) {
  absl::Status result = absl::UnknownError("not run");
  std::thread t([&] {
    RealClock clock;
    result = LoadClientCert(options_, clock);
  });
  json csr = WaitCsr();
  ASSERT_TRUE(csr.is_object());
  EXPECT_EQ(seen_token_, "abcdef.0123456789abcdef");
  EXPECT_TRUE(absl::StartsWith(csr["metadata"].value("name", ""), "node-csr-"));
  EXPECT_EQ(csr["spec"]["signerName"], "kubernetes.io/kube-apiserver-client-kubelet");
  EXPECT_EQ(csr["spec"]["usages"], json({"digital signature", "client auth"}));
  std::string request;
  ASSERT_TRUE(absl::Base64Unescape(csr["spec"].value("request", ""), &request));
  BIO* bio = BIO_new_mem_buf(request.data(), static_cast<int>(request.size()));
  X509_REQ* req = PEM_read_bio_X509_REQ(bio, nullptr, nullptr, nullptr);
  BIO_free_all(bio);
  ASSERT_NE(req, nullptr) << request;
  char subject[256];
  X509_NAME_oneline(X509_REQ_get_subject_name(req), subject, sizeof(subject));
  X509_REQ_free(req);
  EXPECT_EQ(std::string(subject), "/O=system:nodes/CN=system:node:n1");

  // The controller manager approves and signs.
  const std::string cert = TestCertPem();
  csr["status"] = {{"conditions", {{{"type", "Approved"}, {"status", "True"}}}},
                   {"certificate", absl::Base64Escape(cert)}};
  fake_.Upsert(kCsrs, csr);
  t.join();
  ASSERT_TRUE(result.ok()) << result;

  const std::string current = options_.cert_dir + "/kubelet-client-current.pem";
  ASSERT_TRUE(std::filesystem::is_symlink(current));
  const std::string target = std::filesystem::read_symlink(current);
  EXPECT_TRUE(absl::StartsWith(target, options_.cert_dir + "/kubelet-client-20")) << target;
  const std::string both = Read(current);
  EXPECT_TRUE(absl::StartsWith(both, cert));
  EXPECT_TRUE(absl::StrContains(both, "PRIVATE KEY"));
  EXPECT_FALSE(std::filesystem::exists(options_.cert_dir + "/kubelet-client.key.tmp"));
  const std::string kubeconfig = Read(options_.kubeconfig_path);
  EXPECT_TRUE(absl::StrContains(kubeconfig, "server: https://127.0.0.1:6443")) << kubeconfig;
  EXPECT_TRUE(absl::StrContains(kubeconfig, "client-certificate: " + current)) << kubeconfig;
  EXPECT_TRUE(absl::StrContains(kubeconfig, "current-context: default-context"));
  EXPECT_FALSE(absl::StrContains(kubeconfig, "abcdef.0123456789abcdef"));
  EXPECT_TRUE(ClientConfigStillValid(options_.kubeconfig_path, absl::Now()).ok());

  // A second start finds the kubeconfig valid and asks nothing.
  fake_.ClearRequests();
  RealClock clock;
  ASSERT_TRUE(LoadClientCert(options_, clock).ok());
  EXPECT_TRUE(fake_.requests().empty());
  // Expired: bootstraps again.
  EXPECT_FALSE(
      ClientConfigStillValid(options_.kubeconfig_path, absl::Now() + absl::Hours(48)).ok());
}

TEST_F(BootstrapTest, DeniedRequestIsAnError) {
  absl::Status result;
  std::thread t([&] {
    RealClock clock;
    result = LoadClientCert(options_, clock);
  });
  json csr = WaitCsr();
  ASSERT_TRUE(csr.is_object());
  csr["status"] = {
      {"conditions", {{{"type", "Denied"}, {"status", "True"}, {"reason", "NotAllowed"}}}}};
  fake_.Upsert(kCsrs, csr);
  t.join();
  EXPECT_EQ(result.code(), absl::StatusCode::kPermissionDenied) << result;
  EXPECT_TRUE(absl::StrContains(result.message(), "Denied")) << result;
}

TEST(DigestedName, StableAndSensitiveToEveryInput) {
  const std::string a = DigestedName("key", "system:node:a", {"system:nodes"}, {"client auth"});
  EXPECT_EQ(a, DigestedName("key", "system:node:a", {"system:nodes"}, {"client auth"}));
  EXPECT_NE(a, DigestedName("key2", "system:node:a", {"system:nodes"}, {"client auth"}));
  EXPECT_NE(a, DigestedName("key", "system:node:b", {"system:nodes"}, {"client auth"}));
  EXPECT_NE(a, DigestedName("key", "system:node:a", {"system:nodes"}, {"server auth"}));
  EXPECT_TRUE(absl::StartsWith(a, "node-csr-"));
  // SHA-512/256 in unpadded base64url: 43 characters.
  EXPECT_EQ(a.size(), std::string("node-csr-").size() + 43);
}

}  // namespace
}  // namespace kubelet::certificate
