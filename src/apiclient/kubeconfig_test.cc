// Kubeconfig parsing and RestConfig construction.
#include "apiclient/kubeconfig.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::apiclient {
namespace {

using ::testing::HasSubstr;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kubeconfig-test-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(KubeconfigTest, FilesResolvedAgainstTheKubeconfigDirectory) {
  std::string path = Write("conf/kubelet.conf", R"(apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443/prefix/
    certificate-authority: pki/ca.crt
    tls-server-name: apiserver.test
users:
- name: node
  user:
    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem
    client-key: ../keys/client.key
    tokenFile: token
contexts:
- name: default
  context:
    cluster: local
    user: node
    namespace: kube-system
current-context: default
)");
  absl::StatusOr<Kubeconfig> kc = LoadKubeconfig(path);
  ASSERT_TRUE(kc.ok()) << kc.status();
  EXPECT_EQ(kc->contexts.at("default").namespace_, "kube-system");
  absl::StatusOr<RestConfig> rc = ToRestConfig(*kc);
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(rc->host, "https://127.0.0.1:6443/prefix");
  EXPECT_EQ(rc->ca_file, dir_ + "/conf/pki/ca.crt");
  EXPECT_EQ(rc->tls_server_name, "apiserver.test");
  EXPECT_EQ(rc->client_cert_file, "/var/lib/kubelet/pki/kubelet-client-current.pem");
  EXPECT_EQ(rc->client_key_file, dir_ + "/keys/client.key");
  EXPECT_EQ(rc->bearer_token_file, dir_ + "/conf/token");
  EXPECT_FALSE(rc->insecure);
  EXPECT_TRUE(rc->ca_pem.empty());
  // Defaults of the in-process config are kept.
  EXPECT_EQ(rc->qps, 50);
  EXPECT_EQ(rc->burst, 100);
  EXPECT_EQ(rc->content_type, "application/json");
}

TEST_F(KubeconfigTest, DataFieldsDecodedAndExplicitContextWins) {
  std::string ca = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
  std::string cert = "-----BEGIN CERTIFICATE-----\nLEAF\n-----END CERTIFICATE-----\n";
  std::string key = "-----BEGIN EC PRIVATE KEY-----\nK\n-----END EC PRIVATE KEY-----\n";
  std::string text =
      "clusters:\n"
      "- name: a\n  cluster:\n    server: https://a.example:443\n"
      "    certificate-authority-data: " +
      absl::Base64Escape(ca) +
      "\n"
      "- name: b\n  cluster:\n    server: http://127.0.0.1:8080\n"
      "    insecure-skip-tls-verify: true\n"
      "users:\n- name: u\n  user:\n"
      "    client-certificate-data: " +
      absl::Base64Escape(cert) +
      "\n"
      "    client-key-data: " +
      absl::Base64Escape(key) +
      "\n"
      "    token: secret-token\n"
      "contexts:\n- name: ca\n  context: {cluster: a, user: u}\n"
      "- name: cb\n  context: {cluster: b}\n"
      "current-context: cb\n";
  absl::StatusOr<Kubeconfig> kc = ParseKubeconfig(text, Write("k", ""));
  ASSERT_TRUE(kc.ok()) << kc.status();
  absl::StatusOr<RestConfig> current = ToRestConfig(*kc);
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_EQ(current->host, "http://127.0.0.1:8080");
  EXPECT_TRUE(current->insecure);
  EXPECT_TRUE(current->bearer_token.empty());

  absl::StatusOr<RestConfig> a = ToRestConfig(*kc, "ca");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->host, "https://a.example:443");
  EXPECT_EQ(a->ca_pem, ca);
  EXPECT_EQ(a->client_cert_pem, cert);
  EXPECT_EQ(a->client_key_pem, key);
  EXPECT_EQ(a->bearer_token, "secret-token");
  EXPECT_FALSE(a->insecure);
}

TEST_F(KubeconfigTest, JsonKubeconfigIsAccepted) {
  std::string path =
      Write("k.json", R"({"clusters":[{"name":"c","cluster":{"server":"https://h:1"}}],
    "contexts":[{"name":"x","context":{"cluster":"c"}}],"current-context":"x"})");
  absl::StatusOr<RestConfig> rc = LoadRestConfig(path);
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(rc->host, "https://h:1");
}

// Each broken kubeconfig and the words its error must contain: the file and the field.
TEST_F(KubeconfigTest, ErrorsNameTheFileAndTheField) {
  struct Case {
    std::string text;
    std::string context;
    std::vector<std::string> want;
  };
  const std::string ok_cluster = "clusters:\n- name: c\n  cluster: {server: 'https://h:1'}\n";
  const std::vector<Case> cases = {
      {"clusters: [", "", {"not valid YAML"}},
      {"clusters: {a: b}", "", {"clusters", "must be a list"}},
      {"clusters:\n- cluster: {server: x}\n", "", {"clusters[0].name", "missing"}},
      {"clusters:\n- name: c\n  cluster: {server: [1]}\n",
       "",
       {"clusters[\"c\"].cluster.server", "must be a string"}},
      {"clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority-data: '!!'}\n",
       "",
       {"certificate-authority-data", "not valid base64"}},
      {"clusters:\n- name: c\n  cluster: {server: 'https://h', insecure-skip-tls-verify: maybe}\n",
       "",
       {"insecure-skip-tls-verify", "must be a boolean"}},
      {ok_cluster, "", {"current-context", "not set"}},
      {ok_cluster + "current-context: nope\n", "", {"contexts[\"nope\"]", "not found"}},
      {ok_cluster + "contexts:\n- name: x\n  context: {cluster: other}\n",
       "x",
       {"contexts[\"x\"].context.cluster", "\"other\" was not found"}},
      {ok_cluster + "contexts:\n- name: x\n  context: {cluster: c, user: who}\n",
       "x",
       {"contexts[\"x\"].context.user", "\"who\" was not found"}},
      {"clusters:\n- name: c\n  cluster: {certificate-authority: ca}\n"
       "contexts:\n- name: x\n  context: {cluster: c}\n",
       "x",
       {"clusters[\"c\"].cluster.server", "missing"}},
      {"clusters:\n- name: c\n  cluster: {server: 'ftp://h'}\n"
       "contexts:\n- name: x\n  context: {cluster: c}\n",
       "x",
       {"server", "not an http"}},
      {"clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority: ca, "
       "certificate-authority-data: Q0E=}\ncontexts:\n- name: x\n  context: {cluster: c}\n",
       "x",
       {"certificate-authority-data and certificate-authority are both specified"}},
      {"clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority: ca, "
       "insecure-skip-tls-verify: true}\ncontexts:\n- name: x\n  context: {cluster: c}\n",
       "x",
       {"insecure-skip-tls-verify", "not allowed"}},
      {ok_cluster + "users:\n- name: u\n  user: {client-certificate: c.crt}\n"
                    "contexts:\n- name: x\n  context: {cluster: c, user: u}\n",
       "x",
       {"users[\"u\"].user.client-key", "missing"}},
      {ok_cluster +
           "users:\n- name: u\n  user: {client-key: k, client-key-data: Q0E=, "
           "client-certificate: c}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n",
       "x",
       {"client-key-data and client-key are both specified"}},
  };
  for (const Case& c : cases) {
    std::string path = Write("broken.yaml", c.text);
    absl::StatusOr<RestConfig> rc = LoadRestConfig(path, c.context);
    ASSERT_FALSE(rc.ok()) << c.text;
    EXPECT_THAT(std::string(rc.status().message()), HasSubstr(path)) << c.text;
    for (const std::string& w : c.want) {
      EXPECT_THAT(std::string(rc.status().message()), HasSubstr(w)) << c.text;
    }
  }
  absl::StatusOr<Kubeconfig> missing = LoadKubeconfig(dir_ + "/absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr(dir_ + "/absent"));
}

TEST_F(KubeconfigTest, EmptyFileIsAnEmptyConfig) {
  absl::StatusOr<Kubeconfig> kc = LoadKubeconfig(Write("empty", ""));
  ASSERT_TRUE(kc.ok()) << kc.status();
  EXPECT_TRUE(kc->clusters.empty());
  EXPECT_FALSE(ToRestConfig(*kc).ok());
}

}  // namespace
}  // namespace kubelet::apiclient
