#include "app/client_credentials.h"

#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "apiclient/rest_client.h"
#include "app/version.h"
#include "common/clock.h"
#include "common/log.h"
#include "kubelet/certificate/bootstrap.h"
#include "metrics/metrics.h"
#include "prometheus/counter.h"

namespace kubelet::app {
namespace {

RealClock& CertClock() {
  static RealClock* clock = new RealClock();
  return *clock;
}

absl::StatusOr<std::unique_ptr<apiclient::RestClient>> MakeClient(const apiclient::RestConfig& rc) {
  return apiclient::NewRestClient(rc);
}

// The manager's figures on /metrics; the manager outlives every scrape (it lives until the
// process exits, as the API client does).
void RegisterMetrics(const certificate::CertificateManager* manager) {
  metrics::AddGaugeFunc(
      metrics::KubeletRegistry(), "kubelet_certificate_manager_client_ttl_seconds",
      "[ALPHA] Gauge of the TTL (time-to-live) of the Kubelet's client certificate. The value is "
      "in seconds until certificate expiry (negative if already expired). If client certificate "
      "is invalid or unused, the value will be +INF.",
      [manager] { return manager->TtlSeconds(); });
}

prometheus::Counter& RenewErrors() {
  static prometheus::Counter* c =
      &prometheus::BuildCounter()
           .Name("kubelet_certificate_manager_client_expiration_renew_errors")
           .Help("[ALPHA] Counter of certificate renewal errors.")
           .Register(metrics::KubeletRegistry())
           .Add({});
  return *c;
}

}  // namespace

absl::StatusOr<ClientCredentials> LoadClientCredentials(const Settings& s,
                                                        const std::string& node_name) {
  const std::string& kubeconfig = s.flags.kube_config;
  const std::string& bootstrap = s.flags.bootstrap_kubeconfig;
  ClientCredentials out;
  std::optional<apiclient::RestConfig> bootstrap_config;
  if (!s.config.rotate_certificates) {
    // Upstream LoadClientCert: a blocking bootstrap when the kubeconfig is not valid.
    if (!bootstrap.empty()) {
      certificate::BootstrapOptions bo;
      bo.kubeconfig_path = kubeconfig;
      bo.bootstrap_kubeconfig_path = bootstrap;
      bo.cert_dir = s.flags.cert_directory;
      bo.node_name = node_name;
      bo.make_client = MakeClient;
      if (absl::Status st = certificate::LoadClientCert(bo, CertClock()); !st.ok()) {
        return absl::Status(st.code(),
                            absl::StrCat("failed to run Kubelet: unable to load bootstrap "
                                         "kubeconfig: ",
                                         std::string(st.message())));
      }
    }
  } else {
    KLOG_INFO("Client rotation is on, will bootstrap in background");
    if (!bootstrap.empty()) {
      absl::Status valid = certificate::ClientConfigStillValid(kubeconfig, CertClock().Now());
      if (valid.ok()) {
        KLOG_INFO("Kubeconfig exists and is valid, skipping bootstrap", "path", kubeconfig);
      } else {
        KLOG_INFO("Using bootstrap kubeconfig to generate TLS client cert, key and kubeconfig file",
                  "reason", std::string(valid.message()));
        absl::StatusOr<apiclient::RestConfig> boot = apiclient::LoadRestConfig(bootstrap);
        if (!boot.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("failed to run Kubelet: unable to load bootstrap kubeconfig: ",
                           std::string(boot.status().message())));
        }
        if (absl::Status st =
                certificate::WriteCertDirKubeconfig(kubeconfig, *boot, s.flags.cert_directory);
            !st.ok()) {
          return st;
        }
        bootstrap_config = *std::move(boot);
      }
    }
  }

  absl::StatusOr<apiclient::RestConfig> rc = apiclient::LoadRestConfig(kubeconfig);
  if (!rc.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid kubeconfig: ", std::string(rc.status().message())));
  }
  out.config = *std::move(rc);
  if (!s.config.rotate_certificates) return out;

  certificate::CertificateManagerOptions mo;
  mo.node_name = node_name;
  mo.cert_dir = s.flags.cert_directory;
  mo.config = out.config;
  mo.bootstrap = std::move(bootstrap_config);
  mo.make_client = MakeClient;
  mo.on_renew_error = [] { RenewErrors().Increment(); };
  absl::StatusOr<std::unique_ptr<certificate::CertificateManager>> manager =
      certificate::CertificateManager::Create(std::move(mo), CertClock());
  if (!manager.ok()) {
    return absl::Status(manager.status().code(),
                        absl::StrCat("failed to initialize client certificate manager: ",
                                     std::string(manager.status().message())));
  }
  out.manager = *std::move(manager);
  out.config.client_certificate_source = out.manager->Source();
  RenewErrors();
  RegisterMetrics(out.manager.get());
  KLOG_V(2, "Starting client certificate rotation");
  out.manager->Start();
  return out;
}

absl::Status MakeApiClients(const Settings& s, const std::string& node_name, ApiClients* out,
                            const apiclient::RestClientOptions& options) {
  if (s.flags.kube_config.empty()) {
    KLOG_INFO("Standalone mode, no API client");
    return absl::OkStatus();
  }
  const config::KubeletConfiguration& cfg = s.config;
  absl::StatusOr<ClientCredentials> creds = LoadClientCredentials(s, node_name);
  if (!creds.ok()) return creds.status();
  std::optional<apiclient::RestConfig> rc = std::move(creds->config);
  out->cert_manager = std::move(creds->manager);
  rc->qps = cfg.kube_api_qps;
  rc->burst = cfg.kube_api_burst;
  rc->user_agent =
      absl::StrCat("kubelet/", kKubernetesVersion, " (linux/amd64) kubernetes/", BuildId());
  // Bodies are JSON; a protobuf contentType (the v1beta1 default) is read as a preference.
  rc->content_type = "application/json";
  absl::StatusOr<std::unique_ptr<apiclient::RestClient>> client =
      apiclient::NewRestClient(*rc, options);
  if (!client.ok()) return client.status();
  out->api = std::move(*client);
  KLOG_INFO("API server client", "host", rc->host, "qps", rc->qps, "burst", rc->burst);
  apiclient::RestConfig erc = *rc;
  erc.qps = cfg.event_record_qps;
  erc.burst = cfg.event_burst;
  absl::StatusOr<std::unique_ptr<apiclient::RestClient>> ec =
      apiclient::NewRestClient(erc, options);
  if (!ec.ok()) return ec.status();
  out->events = std::move(*ec);
  return absl::OkStatus();
}

}  // namespace kubelet::app
