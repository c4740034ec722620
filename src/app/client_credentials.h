// The API client's credentials at start-up (upstream buildKubeletClientConfig), in src/app
// because it joins the flags, the TLS bootstrap and the certificate manager:
//   - rotateCertificates off: with --bootstrap-kubeconfig, the TLS bootstrap runs first and
//     blocks until --kubeconfig is valid (LoadClientCert); the kubeconfig's credentials are
//     used as they are.
//   - rotateCertificates on ("Client rotation is on, will bootstrap in background"): with
//     --bootstrap-kubeconfig and no valid --kubeconfig, the kubeconfig is written at once to
//     point at <cert-dir>/kubelet-client-current.pem, and the CertificateManager requests
//     the certificate in the background with the bootstrap credentials while start-up goes on
//     (static pods run meanwhile); the clients present the manager's current certificate,
//     rotated before it expires. The manager is started here, as upstream does.
//   - kubelet_certificate_manager_client_ttl_seconds and
//     kubelet_certificate_manager_client_expiration_renew_errors are registered when the
//     manager exists.
#ifndef KUBELET_APP_CLIENT_CREDENTIALS_H_
#define KUBELET_APP_CLIENT_CREDENTIALS_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "apiclient/kubeconfig.h"
#include "apiclient/rest_client.h"
#include "app/options.h"
#include "kubelet/certificate/manager.h"

namespace kubelet::app {

struct ClientCredentials {
  apiclient::RestConfig config;  // from --kubeconfig; with the manager's source when rotating
  std::unique_ptr<certificate::CertificateManager> manager;  // null unless rotating
};

// What LoadClientCredentials reads from the configuration.
inline constexpr std::string_view kClientCredentialsConfigFields[] = {"rotateCertificates"};

// Needs --kubeconfig. Errors are start-up failures with upstream's wording.
absl::StatusOr<ClientCredentials> LoadClientCredentials(const Settings& s,
                                                        const std::string& node_name);

// API-server mode's clients: one shared by every component that talks to the API server, and
// upstream's separate event client (the same server and credentials, its own rate limit:
// eventRecordQPS / eventBurst). Building them never contacts the server (it may not exist yet:
// a control plane run as static pods of this very kubelet). Credentials as upstream's
// buildKubeletClientConfig: the TLS bootstrap, blocking without rotateCertificates, in the
// background with it (the certificate manager then lives as long as the process).
struct ApiClients {
  // Declared first, destroyed last: the clients present its certificate.
  std::unique_ptr<certificate::CertificateManager> cert_manager;
  std::shared_ptr<apiclient::RestClient> api;
  std::shared_ptr<apiclient::RestClient> events;
};

// What MakeApiClients reads: the clients' rate limits. contentType is accepted and read as a
// preference only: bodies are always JSON.
inline constexpr std::string_view kApiClientConfigFields[] = {
    "kubeAPIQPS", "kubeAPIBurst", "eventRecordQPS", "eventBurst", "contentType"};

// `options`: the clients' transport settings (hollow nodes keep one idle connection each).
absl::Status MakeApiClients(const Settings& s, const std::string& node_name, ApiClients* out,
                            const apiclient::RestClientOptions& options = {});

}  // namespace kubelet::app

#endif  // KUBELET_APP_CLIENT_CREDENTIALS_H_
