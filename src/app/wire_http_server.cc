// The kubelet API: the secure server on address:port (TLS, authn/authz) and the read-only port
// (upstream ListenAndServeKubeletServer / ListenAndServeKubeletReadOnlyServer).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "app/serving_certificate.h"
#include "app/webhook_auth.h"
#include "app/wiring.h"
#include "common/log.h"
#include "kubelet/kubelet.h"
#include "kubelet/kuberuntime/kuberuntime_manager.h"
#include "kubelet/logs/container_log_manager.h"
#include "kubelet/stats/stats_provider.h"
#include "server/auth.h"
#include "server/configz.h"
#include "server/http_server.h"
#include "server/kubelet_server.h"
#include "server/tls.h"

namespace kubelet::app {
namespace {

// The kubelet seen through the API's narrow interface. Holds what it borrows from the wiring
// context; the kubelet and runtime manager outlive the servers (stopped at shutdown first).
class KubeletHost : public server::HostInterface {
 public:
  KubeletHost(Kubelet* kubelet, kuberuntime::KubeGenericRuntimeManager* runtime,
              cri::RuntimeService* cri, std::shared_ptr<logs::ContainerLogManager> logs,
              std::shared_ptr<stats::StatsProvider> stats, server::Configz* configz)
      : kubelet_(kubelet),
        runtime_(runtime),
        cri_(cri),
        logs_(std::move(logs)),
        stats_(std::move(stats)),
        configz_(configz) {}

  std::vector<api::Pod> GetPods() override { return kubelet_->GetPodsWithStatus(); }

  absl::StatusOr<std::vector<api::Pod>> GetRunningPods() override {
    auto pods = runtime_->GetPods(false);
    if (!pods.ok()) return pods.status();
    std::vector<api::Pod> out;
    out.reserve(pods->size());
    for (const container::Pod& p : *pods) {
      api::Pod pod;
      pod.metadata.uid = p.id;
      pod.metadata.name = p.name;
      pod.metadata.namespace_ = p.namespace_;
      for (const container::Container& c : p.containers) {
        api::Container ac;
        ac.name = c.name;
        ac.image = c.image;
        pod.spec.containers.push_back(std::move(ac));
      }
      out.push_back(std::move(pod));
    }
    return out;
  }

  absl::Status GetContainerLogs(const std::string& namespace_, const std::string& pod,
                                const std::string& container, const logs::LogOptions& options,
                                const logs::LogSink& sink) override {
    if (logs_ == nullptr) return absl::UnavailableError("container logs are not available");
    return logs_->GetContainerLogs(namespace_, pod, container, options, sink);
  }

  stats::StatsProvider* GetStatsProvider() override { return stats_.get(); }
  absl::Status SyncLoopHealthy() override { return kubelet_->SyncLoopHealthy(); }
  std::string Configz() override { return configz_ != nullptr ? configz_->Render() : "{}"; }

  absl::StatusOr<std::string> GetExec(const server::StreamRequest& r) override {
    absl::StatusOr<std::string> id = RunningContainer(r);
    if (!id.ok()) return id.status();
    runtime::v1::ExecRequest req;
    req.set_container_id(*id);
    for (const std::string& c : r.command) req.add_cmd(c);
    req.set_tty(r.tty);
    req.set_stdin(r.stdin_);
    req.set_stdout(r.stdout_);
    req.set_stderr(r.stderr_);
    absl::StatusOr<runtime::v1::ExecResponse> resp = cri_->Exec(req);
    if (!resp.ok()) return resp.status();
    return resp->url();
  }

  absl::StatusOr<std::string> GetAttach(const server::StreamRequest& r) override {
    absl::StatusOr<std::string> id = RunningContainer(r);
    if (!id.ok()) return id.status();
    runtime::v1::AttachRequest req;
    req.set_container_id(*id);
    req.set_tty(r.tty);
    req.set_stdin(r.stdin_);
    req.set_stdout(r.stdout_);
    req.set_stderr(r.stderr_);
    absl::StatusOr<runtime::v1::AttachResponse> resp = cri_->Attach(req);
    if (!resp.ok()) return resp.status();
    return resp->url();
  }

  absl::StatusOr<std::string> GetPortForward(const std::string& ns, const std::string& name,
                                             const std::string& uid,
                                             const std::vector<int32_t>& ports) override {
    absl::StatusOr<container::Pod> pod = RunningPod(ns, name, uid);
    if (!pod.ok()) return pod.status();
    std::string sandbox;
    for (const container::Container& s : pod->sandboxes) {
      if (s.state == container::State::kRunning) sandbox = s.id.id;
    }
    if (sandbox.empty()) {
      return absl::NotFoundError(absl::StrCat("pod not found (\"", name, "_", ns, "\")"));
    }
    runtime::v1::PortForwardRequest req;
    req.set_pod_sandbox_id(sandbox);
    for (int32_t p : ports) req.add_port(p);
    absl::StatusOr<runtime::v1::PortForwardResponse> resp = cri_->PortForward(req);
    if (!resp.ok()) return resp.status();
    return resp->url();
  }

  absl::StatusOr<std::string> RunInContainer(const server::StreamRequest& r) override {
    absl::StatusOr<std::string> id = RunningContainer(r);
    if (!id.ok()) return id.status();
    absl::StatusOr<runtime::v1::ExecSyncResponse> resp =
        cri_->ExecSync(*id, r.command, absl::ZeroDuration());
    if (!resp.ok()) return resp.status();
    // upstream RunInContainer: stdout then stderr, and the exit code as an error.
    std::string out = resp->stdout() + resp->stderr();
    if (resp->exit_code() != 0) {
      return absl::InternalError(absl::StrCat("command '", absl::StrJoin(r.command, " "),
                                              "' exited with ", resp->exit_code(), ": ", out));
    }
    return out;
  }

 private:
  // The kubelet's pod (upstream GetPodByName) and then the runtime's running pod of that
  // full name (and UID when given).
  absl::StatusOr<container::Pod> RunningPod(const std::string& ns, const std::string& name,
                                            const std::string& uid) {
    const std::string full_name = absl::StrCat(name, "_", ns);
    if (kubelet_->pod_manager().GetPodByFullName(full_name) == nullptr) {
      return absl::NotFoundError("pod does not exist");
    }
    absl::StatusOr<std::vector<container::Pod>> pods = runtime_->GetPods(false);
    if (!pods.ok()) return pods.status();
    for (container::Pod& p : *pods) {
      if (p.name == name && p.namespace_ == ns && (uid.empty() || p.id == uid)) {
        return std::move(p);
      }
    }
    return absl::NotFoundError(absl::StrCat("pod not found (\"", full_name, "\")"));
  }

  absl::StatusOr<std::string> RunningContainer(const server::StreamRequest& r) {
    absl::StatusOr<container::Pod> pod = RunningPod(r.namespace_, r.pod, r.uid);
    if (!pod.ok()) {
      if (pod.status().message() == "pod does not exist") return pod.status();
      // upstream findContainer: no running pod means no container.
      return absl::UnknownError(absl::StrCat("container not found (\"", r.container, "\")"));
    }
    for (const container::Container& c : pod->containers) {
      if (c.name == r.container && c.state == container::State::kRunning) return c.id.id;
    }
    return absl::UnknownError(absl::StrCat("container not found (\"", r.container, "\")"));
  }

  Kubelet* kubelet_;
  kuberuntime::KubeGenericRuntimeManager* runtime_;
  cri::RuntimeService* cri_;
  std::shared_ptr<logs::ContainerLogManager> logs_;
  std::shared_ptr<stats::StatsProvider> stats_;
  server::Configz* configz_;
};

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
absl::Status CheckStandaloneAuth(const KubeletServer& s) {
  const auto& cfg = s.config;
  if (!s.flags.kube_config.empty()) return absl::OkStatus();
  if (cfg.authentication.webhook.enabled) {
    return absl::FailedPreconditionError(
        "no client provided, cannot use webhook authentication (authentication.webhook.enabled "
        "needs --kubeconfig; set it to false to run standalone)");
  }
  if (cfg.authorization.mode == "Webhook") {
    return absl::FailedPreconditionError(
        "no client provided, cannot use webhook authorization (authorization.mode Webhook needs "
        "--kubeconfig; use AlwaysAllow to run standalone)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WireHttpServer(WiringStage stage, WiringContext& ctx) {
  if (stage != WiringStage::kAfterKubeletStart) return absl::OkStatus();
  const KubeletServer& s = *ctx.server;
  const auto& cfg = s.config;
  auto host = std::make_shared<KubeletHost>(ctx.kubelet, ctx.runtime_manager, ctx.runtime,
                                            ctx.components.log_manager,
                                            ctx.components.stats_provider, ctx.configz);

  if (cfg.enable_server) {
    if (absl::Status st = CheckStandaloneAuth(s); !st.ok()) return st;
    if (cfg.authorization.mode != "AlwaysAllow" && cfg.authorization.mode != "Webhook") {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown authorization mode ", cfg.authorization.mode));
    }
    absl::StatusOr<int> min_version = server::TlsVersionFromName(cfg.tls_min_version);
    if (!min_version.ok()) return min_version.status();
    absl::StatusOr<std::string> ciphers = server::CipherSuitesToOpenSsl(cfg.tls_cipher_suites);
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
          cfg.tls_cert_file, cfg.tls_private_key_file, s.flags.cert_directory, self);
      if (!ensured.ok()) return ensured.status();
      cert = *std::move(ensured);
    }

    server::AuthOptions auth{.anonymous = cfg.authentication.anonymous.enabled,
                             .x509 = !cfg.authentication.x509.client_ca_file.empty(),
                             .token_authenticator = nullptr,
                             .authorizer = nullptr,  // AlwaysAllow
                             .node_name = ctx.node_name};
    // Webhook authentication / authorization ask the API server (TokenReview /
    // SubjectAccessReview, with the kubelet's own credentials); CheckStandaloneAuth refused
    // them without a client.
    if (ctx.api_client != nullptr && cfg.authentication.webhook.enabled) {
      auto tokens = std::make_shared<WebhookTokenAuthenticator>(
          ctx.api_client, *ctx.clock, cfg.authentication.webhook.cache_ttl);
      auth.token_authenticator = [tokens](const std::string& token) {
        return tokens->Authenticate(token);
      };
    }
    if (ctx.api_client != nullptr && cfg.authorization.mode == "Webhook") {
      auto authorizer = std::make_shared<WebhookAuthorizer>(
          ctx.api_client, *ctx.clock, cfg.authorization.webhook.cache_authorized_ttl,
          cfg.authorization.webhook.cache_unauthorized_ttl);
      auth.authorizer = [authorizer](const server::UserInfo& user,
                                     const server::RequestAttributes& attrs) {
        return authorizer->Authorize(user, attrs);
      };
    }
    server::HttpServerOptions o = BaseOptions("kubelet", cfg.address, cfg.port);
    // streamingConnectionIdleTimeout bounds exec / attach / port-forward tunnels.
    if (cfg.streaming_connection_idle_timeout > absl::ZeroDuration()) {
      o.tunnel_idle_timeout = cfg.streaming_connection_idle_timeout;
    }
    // The webhooks block on the API server: the filter runs off the I/O thread then.
    if (auth.token_authenticator || auth.authorizer) o.filter_threads = 4;
    o.tls = server::TlsServerOptions{.cert_file = cert.cert_file,
                                     .key_file = cert.key_file,
                                     .certificate = std::move(dynamic_cert),
                                     .client_ca_file = cfg.authentication.x509.client_ca_file,
                                     .min_version = *min_version,
                                     .cipher_list = *ciphers};
    auto srv = std::make_shared<server::HttpServer>(std::move(o));
    srv->SetFilter(server::MakeAuthFilter(std::move(auth)));
    server::InstallDefaultHandlers(*srv, host);
    if (cfg.enable_debugging_handlers) {
      server::InstallDebuggingHandlers(*srv, host);
    } else {
      server::InstallDebuggingDisabledHandlers(*srv);
    }
    KLOG_INFO("Starting to listen", "address", cfg.address, "port", cfg.port);
    if (absl::Status st = srv->Start(); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat("failed to listen and serve on ", cfg.address,
                                                  ":", cfg.port, ": ", st.message()));
    }
    ctx.components.keep_alive.push_back(srv);
    ctx.AtShutdown([srv] { srv->Stop(); });
  }

  if (cfg.read_only_port > 0) {
    auto ro = std::make_shared<server::HttpServer>(
        BaseOptions("kubelet-read-only", cfg.address, cfg.read_only_port));
    server::InstallDefaultHandlers(*ro, host);
    // As upstream's read-only server (built without a configuration): the debugging paths
    // answer 405 there, whatever enableDebuggingHandlers says.
    server::InstallDebuggingDisabledHandlers(*ro);
    KLOG_INFO("Starting to listen read-only", "address", cfg.address, "port", cfg.read_only_port);
    if (absl::Status st = ro->Start(); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat("failed to listen and serve on ", cfg.address,
                                                  ":", cfg.read_only_port, ": ", st.message()));
    }
    ctx.components.keep_alive.push_back(ro);
    ctx.AtShutdown([ro] { ro->Stop(); });
  }
  ctx.components.keep_alive.push_back(host);
  return absl::OkStatus();
}

}  // namespace kubelet::app
