// The kubelet API: the secure server on address:port (TLS, authn/authz) and the read-only port
// (upstream ListenAndServeKubeletServer / ListenAndServeKubeletReadOnlyServer).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "app/serving_certificate.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/kubelet.h"
#include "server/auth.h"
#include "server/configz.h"
#include "server/http_server.h"
#include "server/kubelet_server.h"
#include "server/tls.h"
#include "server/webhook_auth.h"

namespace kubelet::app {
namespace {

server::HttpServerOptions BaseOptions(std::string name, std::string address, int port) {
  server::HttpServerOptions o;
  o.name = std::move(name);
  o.address = address.empty() ? "0.0.0.0" : std::move(address);
  o.port = port;
  // Upstream's http.Server: ReadTimeout/WriteTimeout 4m, IdleTimeout 90s, MaxHeaderBytes 1 MiB.
  // Beyond upstream, the request header must arrive within 30 s, so a client that trickles or
  // never finishes one is dropped long before the 4 minutes.
  o.header_timeout = absl::Seconds(30);
  o.read_timeout = absl::Minutes(4);
  o.write_timeout = absl::Minutes(4);
  o.idle_timeout = absl::Seconds(90);
  o.max_header_bytes = 1 << 20;
  return o;
}

// Checks the parts of the configuration that need an API server, before anything binds.
absl::Status CheckStandaloneAuth(const Settings& s, const server::KubeletServerOptions& so) {
  if (!s.flags.kube_config.empty()) return absl::OkStatus();
  if (so.webhook_authentication) {
    return absl::FailedPreconditionError(
        "no client provided, cannot use webhook authentication (authentication.webhook.enabled "
        "needs --kubeconfig; set it to false to run standalone)");
  }
  if (so.authorization_mode == "Webhook") {
    return absl::FailedPreconditionError(
        "no client provided, cannot use webhook authorization (authorization.mode Webhook needs "
        "--kubeconfig; use AlwaysAllow to run standalone)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WireHttpServer(WiringStage stage, WiringContext& ctx) {
  if (stage != WiringStage::kAfterKubeletStart) return absl::OkStatus();
  const Settings& s = *ctx.settings;
  server::KubeletServerOptions so = server::KubeletServerOptionsFromConfig(s.config);
  so.node_log_query_gate = s.gates.Enabled("NodeLogQuery");
  // The Kubelet answers the API (as upstream's); it outlives the servers, stopped first at
  // shutdown, so the handlers share it without owning it.
  server::Configz* configz = ctx.configz;
  ctx.kubelet->SetApiParts(ctx.components.log_manager, ctx.components.stats_provider,
                           [configz] { return configz != nullptr ? configz->Render() : "{}"; });
  std::shared_ptr<server::HostInterface> host(std::shared_ptr<void>(), ctx.kubelet);

  if (s.config.enable_server) {
    if (absl::Status st = CheckStandaloneAuth(s, so); !st.ok()) return st;
    if (so.authorization_mode != "AlwaysAllow" && so.authorization_mode != "Webhook") {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown authorization mode ", so.authorization_mode));
    }
    absl::StatusOr<int> min_version = server::TlsVersionFromName(so.tls_min_version);
    if (!min_version.ok()) return min_version.status();
    absl::StatusOr<std::string> ciphers = server::CipherSuitesToOpenSsl(so.tls_cipher_suites);
    if (!ciphers.ok()) return ciphers.status();
    // serverTLSBootstrap: the certificate comes from the cluster and is chosen per handshake;
    // otherwise tlsCertFile / tlsPrivateKeyFile, or the self-signed pair in the cert dir.
    std::function<std::optional<server::TlsCertificate>()> dynamic_cert;
    server::ServingCertificate cert;
    if (UsesServingCertificateManager(ctx)) {
      absl::StatusOr<std::function<std::optional<server::TlsCertificate>()>> source =
          StartServingCertificate(ctx);
      if (!source.ok()) return source.status();
      dynamic_cert = *std::move(source);
    } else {
      server::SelfSignedCertOptions self;
      self.host = ctx.node_name;
      if (!ctx.node_ip.empty()) self.alternate_ips.push_back(ctx.node_ip);
      self.alternate_ips.push_back("127.0.0.1");
      self.alternate_dns.push_back("localhost");
      absl::StatusOr<server::ServingCertificate> ensured = server::EnsureServingCertificate(
          so.tls_cert_file, so.tls_private_key_file, s.flags.cert_directory, self);
      if (!ensured.ok()) return ensured.status();
      cert = *std::move(ensured);
    }

    server::AuthOptions auth = so.auth;  // anonymous, x509; AlwaysAllow
    auth.node_name = ctx.node_name;
    // Webhook authentication / authorization ask the API server (TokenReview /
    // SubjectAccessReview, with the kubelet's own credentials); CheckStandaloneAuth refused
    // them without a client.
    if (ctx.api_client != nullptr && so.webhook_authentication) {
      auto tokens = std::make_shared<server::WebhookTokenAuthenticator>(ctx.api_client, *ctx.clock,
                                                                        so.webhook_cache_ttl);
      auth.token_authenticator = [tokens](const std::string& token) {
        return tokens->Authenticate(token);
      };
    }
    if (ctx.api_client != nullptr && so.authorization_mode == "Webhook") {
      auto authorizer = std::make_shared<server::WebhookAuthorizer>(
          ctx.api_client, *ctx.clock, so.webhook_cache_authorized_ttl,
          so.webhook_cache_unauthorized_ttl);
      auth.authorizer = [authorizer](const server::UserInfo& user,
                                     const server::RequestAttributes& attrs) {
        return authorizer->Authorize(user, attrs);
      };
    }
    server::HttpServerOptions o = BaseOptions("kubelet", so.address, so.port);
    // streamingConnectionIdleTimeout bounds exec / attach / port-forward tunnels.
    o.tunnel_idle_timeout = so.tunnel_idle_timeout;
    // The webhooks block on the API server: the filter runs off the I/O thread then.
    if (auth.token_authenticator || auth.authorizer) o.filter_threads = 4;
    o.tls = server::TlsServerOptions{.cert_file = cert.cert_file,
                                     .key_file = cert.key_file,
                                     .certificate = std::move(dynamic_cert),
                                     .client_ca_file = so.client_ca_file,
                                     .min_version = *min_version,
                                     .cipher_list = *ciphers};
    auto srv = std::make_shared<server::HttpServer>(std::move(o));
    srv->SetFilter(server::MakeAuthFilter(std::move(auth)));
    server::InstallDefaultHandlers(*srv, host);
    if (so.enable_debugging_handlers) {
      server::InstallDebuggingHandlers(*srv, host, server::NodeLogsOptionsFrom(so));
    } else {
      server::InstallDebuggingDisabledHandlers(*srv);
    }
    KLOG_INFO("Starting to listen", "address", so.address, "port", so.port);
    if (absl::Status st = srv->Start(); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat("failed to listen and serve on ", so.address, ":",
                                                  so.port, ": ", st.message()));
    }
    ctx.components.keep_alive.push_back(srv);
    ctx.AtShutdown([srv] { srv->Stop(); });
  }

  if (so.read_only_port > 0) {
    auto ro = std::make_shared<server::HttpServer>(
        BaseOptions("kubelet-read-only", so.address, so.read_only_port));
    server::InstallDefaultHandlers(*ro, host);
    // As upstream's read-only server (built without a configuration): the debugging paths
    // answer 405 there, whatever enableDebuggingHandlers says.
    server::InstallDebuggingDisabledHandlers(*ro);
    KLOG_INFO("Starting to listen read-only", "address", so.address, "port", so.read_only_port);
    if (absl::Status st = ro->Start(); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat("failed to listen and serve on ", so.address, ":",
                                                  so.read_only_port, ": ", st.message()));
    }
    ctx.components.keep_alive.push_back(ro);
    ctx.AtShutdown([ro] { ro->Stop(); });
  }
  return absl::OkStatus();
}

}  // namespace kubelet::app
