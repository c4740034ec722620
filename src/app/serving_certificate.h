// The kubelet's serving certificate from the cluster (serverTLSBootstrap with the
// RotateKubeletServerCertificate gate, upstream NewKubeletServerCertificateManager), in src/app
// because it joins the configuration, the API client and the HTTPS server:
//   - API-server mode only: a kServing CertificateManager (certificate/manager.h) keeps
//     <cert-dir>/kubelet-server-current.pem, requesting it from the kubernetes.io/kubelet-serving
//     signer with the node's hostname (DNS) and node IP as subject alternative names, sent with
//     the kubelet's API credentials; no self-signed certificate is made. Until a request is
//     approved and issued, TLS handshakes on the kubelet port fail, as upstream's.
//   - Standalone (no API server to ask): the self-signed certificate is served instead, with a
//     warning, where upstream would serve no certificate at all.
//   - /metrics: kubelet_certificate_manager_server_ttl_seconds,
//     kubelet_certificate_manager_server_rotation_seconds and
//     kubelet_server_expiration_renew_errors.
#ifndef KUBELET_APP_SERVING_CERTIFICATE_H_
#define KUBELET_APP_SERVING_CERTIFICATE_H_

#include <functional>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "app/wiring.h"
#include "server/http_server.h"

namespace kubelet::app {

// What UsesServingCertificateManager and StartServingCertificate read from the configuration.
inline constexpr std::string_view kServingCertificateConfigFields[] = {
    "serverTLSBootstrap", "tlsCertFile", "tlsPrivateKeyFile"};

// Whether this configuration asks for a serving certificate from the cluster and can get one.
bool UsesServingCertificateManager(const WiringContext& ctx);

// Creates and starts the manager (stopped at shutdown, kept alive by ctx) and returns the
// per-handshake certificate source for TlsServerOptions::certificate (nullopt while there is
// no valid certificate).
absl::StatusOr<std::function<std::optional<server::TlsCertificate>()>> StartServingCertificate(
    WiringContext& ctx);

}  // namespace kubelet::app

#endif  // KUBELET_APP_SERVING_CERTIFICATE_H_
