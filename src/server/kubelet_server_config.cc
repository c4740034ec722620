#include "server/kubelet_server.h"

namespace kubelet::server {

KubeletServerOptions KubeletServerOptionsFromConfig(const config::KubeletConfiguration& c) {
  KubeletServerOptions o;
  o.address = c.address;
  o.port = c.port;
  o.read_only_port = c.read_only_port;
  o.tls_cert_file = c.tls_cert_file;
  o.tls_private_key_file = c.tls_private_key_file;
  o.tls_min_version = c.tls_min_version;
  o.tls_cipher_suites = c.tls_cipher_suites;
  o.client_ca_file = c.authentication.x509.client_ca_file;
  o.auth.anonymous = c.authentication.anonymous.enabled;
  o.auth.x509 = !o.client_ca_file.empty();
  o.webhook_authentication = c.authentication.webhook.enabled;
  o.webhook_cache_ttl = c.authentication.webhook.cache_ttl;
  o.authorization_mode = c.authorization.mode;
  o.webhook_cache_authorized_ttl = c.authorization.webhook.cache_authorized_ttl;
  o.webhook_cache_unauthorized_ttl = c.authorization.webhook.cache_unauthorized_ttl;
  if (c.streaming_connection_idle_timeout > absl::ZeroDuration()) {
    o.tunnel_idle_timeout = c.streaming_connection_idle_timeout;
  }
  o.enable_debugging_handlers = c.enable_debugging_handlers;
  o.enable_system_log_handler = c.enable_system_log_handler;
  o.enable_system_log_query = c.enable_system_log_query;
  return o;
}

}  // namespace kubelet::server
