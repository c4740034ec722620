#include "app/serving_certificate.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "apiclient/rest_client.h"
#include "common/log.h"
#include "kubelet/certificate/manager.h"
#include "metrics/metrics.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"

namespace kubelet::app {
namespace {

// The wiring's shared API client as the manager's own.
class SharedClient final : public apiclient::RestClient {
 public:
  explicit SharedClient(std::shared_ptr<apiclient::RestClient> client)
      : client_(std::move(client)) {}
  absl::StatusOr<apiclient::Response> Do(const apiclient::Request& request) override {
    return client_->Do(request);
  }
  absl::StatusOr<apiclient::Response> Watch(const apiclient::Request& request,
                                            const apiclient::WatchEventFn& on_event) override {
    return client_->Watch(request, on_event);
  }
  std::unique_ptr<apiclient::BackgroundWatch> StartWatch(const apiclient::Request& request,
                                                         apiclient::WatchEventFn on_event,
                                                         apiclient::WatchEndFn on_end) override {
    return client_->StartWatch(request, std::move(on_event), std::move(on_end));
  }

 private:
  std::shared_ptr<apiclient::RestClient> client_;
};

}  // namespace

bool UsesServingCertificateManager(const WiringContext& ctx) {
  const Settings& s = *ctx.settings;
  if (!s.config.server_tls_bootstrap || !s.gates.Enabled("RotateKubeletServerCertificate")) {
    return false;
  }
  if (ctx.api_client == nullptr) {
    KLOG_WARNING(
        "serverTLSBootstrap needs an API server to request the serving certificate from; "
        "serving a self-signed certificate in standalone mode");
    return false;
  }
  return true;
}

absl::StatusOr<std::function<std::optional<server::TlsCertificate>()>> StartServingCertificate(
    WiringContext& ctx) {
  const Settings& s = *ctx.settings;
  certificate::CertificateManagerOptions mo;
  mo.kind = certificate::CertificateManagerOptions::Kind::kServing;
  mo.node_name = ctx.node_name;
  mo.cert_dir = s.flags.cert_directory;
  mo.serving_cert_file = s.config.tls_cert_file;
  mo.serving_key_file = s.config.tls_private_key_file;
  std::shared_ptr<apiclient::RestClient> client = ctx.api_client;
  mo.make_client =
      [client](
          const apiclient::RestConfig&) -> absl::StatusOr<std::unique_ptr<apiclient::RestClient>> {
    return std::make_unique<SharedClient>(client);
  };
  // The node's addresses as its status reports them: InternalIP (--node-ip or detected) and
  // Hostname (the node name); upstream's addressesToHostnamesAndIPs.
  certificate::SubjectAltNames sans;
  if (!certificate::CanonicalIp(ctx.node_ip).empty()) sans.ips.push_back(ctx.node_ip);
  (certificate::CanonicalIp(ctx.node_name).empty() ? sans.dns_names : sans.ips)
      .push_back(ctx.node_name);
  std::sort(sans.ips.begin(), sans.ips.end());
  sans.ips.erase(std::unique(sans.ips.begin(), sans.ips.end()), sans.ips.end());
  mo.sans = [sans]() -> std::optional<certificate::SubjectAltNames> { return sans; };

  static prometheus::Counter* renew_errors =
      &prometheus::BuildCounter()
           .Name("kubelet_server_expiration_renew_errors")
           .Help("[ALPHA] Counter of certificate renewal errors.")
           .Register(metrics::KubeletRegistry())
           .Add({});
  static prometheus::Histogram* rotation_age =
      &prometheus::BuildHistogram()
           .Name("kubelet_certificate_manager_server_rotation_seconds")
           .Help(
               "[ALPHA] Histogram of the number of seconds the previous certificate lived "
               "before being rotated.")
           .Register(metrics::KubeletRegistry())
           .Add({},
                prometheus::Histogram::BucketBoundaries{60, 3600, 14400, 86400, 604800, 2592000,
                                                        7776000, 15552000, 31104000, 124416000});
  mo.on_renew_error = [] { renew_errors->Increment(); };
  mo.on_rotated = [](double lived) { rotation_age->Observe(lived); };

  absl::StatusOr<std::unique_ptr<certificate::CertificateManager>> created =
      certificate::CertificateManager::Create(std::move(mo), *ctx.clock);
  if (!created.ok()) {
    return absl::Status(created.status().code(),
                        absl::StrCat("failed to initialize server certificate manager: ",
                                     std::string(created.status().message())));
  }
  std::shared_ptr<certificate::CertificateManager> manager = *std::move(created);
  // The manager lives until the process exits (the collector reads it at every scrape).
  ctx.components.keep_alive.push_back(manager);
  metrics::AddGaugeFunc(
      metrics::KubeletRegistry(), "kubelet_certificate_manager_server_ttl_seconds",
      "[ALPHA] Gauge of the shortest TTL (time-to-live) of the Kubelet's serving certificate. The "
      "value is in seconds until certificate expiry (negative if already expired). If serving "
      "certificate is invalid or unused, the value will be +INF.",
      [manager] { return manager->TtlSeconds(); });
  manager->Start();
  ctx.AtShutdown([manager] { manager->Stop(); });
  return std::function<std::optional<server::TlsCertificate>()>(
      [manager]() -> std::optional<server::TlsCertificate> {
        // An expired certificate is not served (upstream's Current() returns none then).
        if (manager->TtlSeconds() <= 0) return std::nullopt;
        apiclient::ClientCertificate c = manager->Current();
        if (c.cert_pem.empty()) return std::nullopt;
        return server::TlsCertificate{.generation = c.generation,
                                      .cert_pem = std::move(c.cert_pem),
                                      .key_pem = std::move(c.key_pem)};
      });
}

}  // namespace kubelet::app
