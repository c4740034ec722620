// The kubelet's certificate managers (upstream client-go's util/certificate Manager with the
// kubelet's file store), one per Kind:
//
//   kClient (rotateCertificates): the client certificate the API clients present.
//   - The current pair comes from <cert-dir>/kubelet-client-current.pem when it holds a readable
//     pair; else from the kubeconfig's client certificate: inline data is written to the store
//     and rotated at once (kubeadm's initial credentials), files are used as they are; else there
//     is none until a request is issued (a bootstrap in the background: the kubelet runs its
//     static pods meanwhile).
//   - Requests are sent with the current certificate, or with the bootstrap credentials when
//     there is none valid. Signer kubernetes.io/kube-apiserver-client-kubelet, usages digital
//     signature and client auth.
//
//   kServing (serverTLSBootstrap): the certificate the kubelet's own HTTPS server presents.
//   - The current pair comes from <cert-dir>/kubelet-server-current.pem; else from
//     tlsCertFile/tlsPrivateKeyFile when set (used as they are); else there is none until a
//     request is issued, and TLS handshakes fail meanwhile.
//   - The request names the node's addresses as subject alternative names (`sans`); while they
//     are not known (no IP yet) no request is sent and the attempt is retried. A certificate
//     that lacks one of the names is replaced at once (extra names do not matter).
//   - Requests are sent with the kubelet's API credentials (`config` as it is). Signer
//     kubernetes.io/kubelet-serving, usages digital signature and server auth. The signer's
//     requests are not approved automatically by the controller manager: an operator or an
//     approver approves them.
//
// Both:
//   - Rotation deadline: notBefore + 70-90 % (uniformly jittered) of the certificate's lifetime;
//     at once when there is no certificate, it has expired, or its subject is not
//     O=system:nodes, CN=system:node:<node>.
//   - Rotating: a new ECDSA P-256 key, a CSR (generateName "csr-") for the signer, the wait for
//     it to be issued (15 minutes at most), the pair stored as a new dated file and the current
//     link moved; then every new connection (of the clients built on Source(), of the server
//     asking Current()) uses it; connections in use finish on the old one, which stays valid.
//   - A failed attempt calls on_renew_error (the renew-error counter) and is retried after 2, 4,
//     8, 16, 32 s, then every 32 s. A successful rotation that replaced a certificate calls
//     on_rotated with the seconds the old one lived (from its notBefore).
//   - TtlSeconds: seconds until the current certificate expires (negative once it has), +Inf
//     without one.
// Log lines follow upstream's ("Certificate rotation deadline determined", "Rotating
// certificates", ...), with the signer name as their logger.
// Thread-safety: Current()/Source()/Ttl() from any thread; Start()/Stop() once each, from one
// thread. Owns one thread while started.
#ifndef KUBELET_KUBELET_CERTIFICATE_MANAGER_H_
#define KUBELET_KUBELET_CERTIFICATE_MANAGER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apiclient/kubeconfig.h"
#include "apiclient/rest_client.h"
#include "common/clock.h"
#include "kubelet/certificate/csr.h"

namespace kubelet::certificate {

struct CertificateManagerOptions {
  enum class Kind { kClient, kServing };
  Kind kind = Kind::kClient;
  std::string node_name;
  std::string cert_dir;  // --cert-dir
  // The API server and CA the requests go to (the kubeconfig's). kClient: its client
  // certificate (file or data) when it has one is the initial pair. kServing: the credentials
  // the requests are sent with.
  apiclient::RestConfig config;
  // kClient: credentials used while no valid certificate exists (the --bootstrap-kubeconfig's).
  std::optional<apiclient::RestConfig> bootstrap;
  // kServing: tlsCertFile / tlsPrivateKeyFile, the pair used while the store has none.
  std::string serving_cert_file;
  std::string serving_key_file;
  // kServing: the names to request (the node's hostname and addresses); nullopt while they are
  // not known. Called with the manager's lock held: must be cheap and must not call back into
  // the manager.
  std::function<std::optional<SubjectAltNames>()> sans;
  std::function<absl::StatusOr<std::unique_ptr<apiclient::RestClient>>(
      const apiclient::RestConfig&)>
      make_client;
  absl::Duration csr_wait = absl::Minutes(15);
  absl::Duration poll = absl::Seconds(1);
  // Uniform in [0, 1): the rotation deadline's jitter. Unset: a random source.
  std::function<double()> random;
  // Called after each failed rotation attempt (the renew-error counter).
  std::function<void()> on_renew_error;
  // Called after a rotation that replaced a certificate, with the seconds the old one lived.
  std::function<void(double)> on_rotated;
};

class CertificateManager {
 public:
  // Loads the current pair as described above; fails only when the store or the kubeconfig's
  // data cannot be written or read for a reason other than absence.
  static absl::StatusOr<std::unique_ptr<CertificateManager>> Create(
      CertificateManagerOptions options, Clock& clock);
  ~CertificateManager();

  void Start();
  void Stop();

  // The current pair (empty strings when none) and its generation (for RestConfig, or the
  // HTTPS server's per-handshake certificate).
  apiclient::ClientCertificate Current() const;
  apiclient::ClientCertificateSource Source() const;
  // Seconds until the current certificate expires; +Inf without one.
  double TtlSeconds() const;
  // The next rotation deadline for the current certificate (for tests and logs).
  absl::Time RotationDeadline() const;
  // Runs one rotation attempt now, on the calling thread (what the thread does at the deadline).
  absl::Status RotateOnce();

 private:
  CertificateManager(CertificateManagerOptions options, Clock& clock);
  void SetCurrent(std::string cert_pem, std::string key_pem, bool force_rotation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Time ComputeDeadline() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // kServing: whether the names to request differ from the current certificate's.
  bool SansChangedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop();
  // Waits until `t` or Stop(); false when stopped.
  bool SleepUntil(absl::Time t);

  CertificateManagerOptions options_;
  Clock& clock_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const apiclient::ClientCertificate> current_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> not_before_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> not_after_ ABSL_GUARDED_BY(mu_);
  SubjectAltNames current_sans_ ABSL_GUARDED_BY(mu_);
  bool force_rotation_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time deadline_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kubelet::certificate

#endif  // KUBELET_KUBELET_CERTIFICATE_MANAGER_H_
