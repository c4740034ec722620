// TLS bootstrap of the kubelet's client certificate (upstream pkg/kubelet/certificate/bootstrap
// LoadClientCert, the path taken without rotateCertificates):
//
//   1. A --kubeconfig that loads and whose client certificate is readable and not expired is
//      used as it is ("Kubeconfig exists and is valid, skipping bootstrap").
//   2. Otherwise, with the --bootstrap-kubeconfig's credentials (a bootstrap token, usually):
//      an ECDSA P-256 key kept in <cert-dir>/kubelet-client.key.tmp across restarts; a CSR for
//      O=system:nodes, CN=system:node:<node> with signer
//      kubernetes.io/kube-apiserver-client-kubelet and usages "digital signature", "client
//      auth", named node-csr-<digest of key, subject and usages> as upstream (so a restart finds
//      its own request again); it waits until the request is approved and signed (Denied or
//      Failed end it with an error).
//   3. The certificate and key go to <cert-dir>/kubelet-client-<YYYY-MM-DD-HH-MM-SS>.pem with
//      the symlink kubelet-client-current.pem pointing at it, and --kubeconfig is written to use
//      that file with the bootstrap kubeconfig's server and CA (contexts default-context /
//      default-cluster / default-auth, as upstream).
//
// Blocking; call once at start-up, before the API client is built. Secrets (the token, the key)
// are never logged.
#ifndef KUBELET_KUBELET_CERTIFICATE_BOOTSTRAP_H_
#define KUBELET_KUBELET_CERTIFICATE_BOOTSTRAP_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apiclient/kubeconfig.h"
#include "apiclient/rest_client.h"
#include "common/clock.h"

namespace kubelet::certificate {

struct BootstrapOptions {
  std::string kubeconfig_path;            // --kubeconfig (written when bootstrapping)
  std::string bootstrap_kubeconfig_path;  // --bootstrap-kubeconfig
  std::string cert_dir;                   // --cert-dir
  std::string node_name;
  // How long to wait for the request to be signed (upstream: an hour).
  absl::Duration wait = absl::Hours(1);
  absl::Duration poll = absl::Seconds(1);
  // Builds the client the CSR is sent with, from the bootstrap credentials.
  std::function<absl::StatusOr<std::unique_ptr<apiclient::RestClient>>(
      const apiclient::RestConfig&)>
      make_client;
};

absl::Status LoadClientCert(const BootstrapOptions& options, Clock& clock);

// Writes `kubeconfig_path` to use <cert_dir>/kubelet-client-current.pem (certificate and key)
// with the bootstrap kubeconfig's server and CA, as step 3 above (upstream
// writeKubeconfigFromBootstrapping); the rotating client certificate manager's bootstrap path
// writes it before the certificate exists.
absl::Status WriteCertDirKubeconfig(const std::string& kubeconfig_path,
                                    const apiclient::RestConfig& bootstrap,
                                    const std::string& cert_dir);

// Whether `kubeconfig_path` loads and its client certificate (file or data) parses and is
// valid now (upstream isClientConfigStillValid). An error says why not.
absl::Status ClientConfigStillValid(const std::string& kubeconfig_path, absl::Time now);

// upstream's CSR name: "node-csr-" + base64url(SHA-512/256 over base64url(PKIX public key),
// CN, each O and each usage, each followed by '|').
std::string DigestedName(const std::string& public_key_der, const std::string& common_name,
                         const std::vector<std::string>& organizations,
                         const std::vector<std::string>& usages);

}  // namespace kubelet::certificate

#endif  // KUBELET_KUBELET_CERTIFICATE_BOOTSTRAP_H_
