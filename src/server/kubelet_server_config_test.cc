#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/kubelet_server.h"

namespace kubelet::server {
namespace {

TEST(KubeletServerOptionsFromConfig, MapsPortsTlsAndHandlers) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.address = "";
  c.port = 11250;
  c.read_only_port = 0;
  c.tls_cert_file = "/etc/kubelet/tls.crt";
  c.tls_private_key_file = "/etc/kubelet/tls.key";
  c.tls_min_version = "VersionTLS13";
  c.tls_cipher_suites = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"};
  c.enable_debugging_handlers = false;
  KubeletServerOptions o = KubeletServerOptionsFromConfig(c);
  EXPECT_EQ(o.address, "");  // as configured: the log lines print it so
  EXPECT_EQ(o.port, 11250);
  EXPECT_EQ(o.read_only_port, 0);
  EXPECT_EQ(o.tls_cert_file, "/etc/kubelet/tls.crt");
  EXPECT_EQ(o.tls_private_key_file, "/etc/kubelet/tls.key");
  EXPECT_EQ(o.tls_min_version, "VersionTLS13");
  EXPECT_EQ(o.tls_cipher_suites, std::vector<std::string>{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"});
  EXPECT_FALSE(o.enable_debugging_handlers);
}

TEST(KubeletServerOptionsFromConfig, AuthenticationAndAuthorization) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.authentication.anonymous.enabled = true;
  c.authentication.x509.client_ca_file = "";
  c.authentication.webhook.enabled = true;
  c.authentication.webhook.cache_ttl = absl::Minutes(3);
  c.authorization.mode = "Webhook";
  c.authorization.webhook.cache_authorized_ttl = absl::Minutes(7);
  c.authorization.webhook.cache_unauthorized_ttl = absl::Seconds(11);
  KubeletServerOptions o = KubeletServerOptionsFromConfig(c);
  EXPECT_TRUE(o.auth.anonymous);
  EXPECT_FALSE(o.auth.x509);
  EXPECT_TRUE(o.webhook_authentication);
  EXPECT_EQ(o.webhook_cache_ttl, absl::Minutes(3));
  EXPECT_EQ(o.authorization_mode, "Webhook");
  EXPECT_EQ(o.webhook_cache_authorized_ttl, absl::Minutes(7));
  EXPECT_EQ(o.webhook_cache_unauthorized_ttl, absl::Seconds(11));
  // Left to the wiring.
  EXPECT_FALSE(o.auth.token_authenticator);
  EXPECT_FALSE(o.auth.authorizer);
  EXPECT_EQ(o.auth.node_name, "");

  // A client CA turns x509 client authentication on.
  c.authentication.x509.client_ca_file = "/etc/kubernetes/ca.crt";
  o = KubeletServerOptionsFromConfig(c);
  EXPECT_TRUE(o.auth.x509);
  EXPECT_EQ(o.client_ca_file, "/etc/kubernetes/ca.crt");
}

TEST(KubeletServerOptionsFromConfig, StreamingIdleTimeoutZeroKeepsFourHours) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.streaming_connection_idle_timeout = absl::Minutes(30);
  EXPECT_EQ(KubeletServerOptionsFromConfig(c).tunnel_idle_timeout, absl::Minutes(30));
  c.streaming_connection_idle_timeout = absl::ZeroDuration();
  EXPECT_EQ(KubeletServerOptionsFromConfig(c).tunnel_idle_timeout, absl::Hours(4));
}

}  // namespace
}  // namespace kubelet::server
