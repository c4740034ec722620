// The kubelet's client certificate manager (upstream rotateCertificates: client-go's
// util/certificate Manager with the kubelet's file store):
//
//   - The current pair comes from <cert-dir>/kubelet-client-current.pem when it holds a readable
//     pair; else from the kubeconfig's client certificate: inline data is written to the store
//     and rotated at once (kubeadm's initial credentials), files are used as they are; else there
//     is none until a request is issued (a bootstrap in the background: the kubelet runs its
//     static pods meanwhile).
//   - Rotation deadline: notBefore + 70-90 % (uniformly jittered) of the certificate's lifetime;
//     at once when there is no certificate, it has expired, or its subject is not
//     O=system:nodes, CN=system:node:<node>.
//   - Rotating: a new ECDSA P-256 key, a CSR (generateName "csr-", signer
//     kubernetes.io/kube-apiserver-client-kubelet, usages digital signature and client auth) sent
//     with the current certificate, or with the bootstrap credentials when there is none valid;
//     the wait for it to be issued (15 minutes at most); the pair stored as a new dated file and
//     the current link moved; then every new connection of the clients built on Source()
//     presents it (connections in use, like watches, finish on the old one, which stays valid).
//   - A failed attempt counts in kubelet_certificate_manager_client_expiration_renew_errors and
//     is retried after 2, 4, 8, 16, 32 s, then every 32 s.
//   - kubelet_certificate_manager_client_ttl_seconds: seconds until the current certificate
//     expires (negative once it has), +Inf without one.
// Log lines follow upstream's ("Certificate rotation deadline determined", "Rotating
// certificates", ...).
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

namespace kubelet::certificate {

struct ClientCertificateManagerOptions {
  std::string node_name;
  std::string cert_dir;  // --cert-dir
  // The API server and CA the requests go to (the kubeconfig's), and its client certificate
  // (file or data) when it has one.
  apiclient::RestConfig config;
  // Credentials used while no valid certificate exists (the --bootstrap-kubeconfig's).
  std::optional<apiclient::RestConfig> bootstrap;
  std::function<absl::StatusOr<std::unique_ptr<apiclient::RestClient>>(
      const apiclient::RestConfig&)>
      make_client;
  absl::Duration csr_wait = absl::Minutes(15);
  absl::Duration poll = absl::Seconds(1);
  // Uniform in [0, 1): the rotation deadline's jitter. Unset: a random source.
  std::function<double()> random;
  // Called after each failed rotation attempt (the renew-error counter).
  std::function<void()> on_renew_error;
};

class ClientCertificateManager {
 public:
  // Loads the current pair as described above; fails only when the store or the kubeconfig's
  // data cannot be written or read for a reason other than absence.
  static absl::StatusOr<std::unique_ptr<ClientCertificateManager>> Create(
      ClientCertificateManagerOptions options, Clock& clock);
  ~ClientCertificateManager();

  void Start();
  void Stop();

  // The current pair (empty strings when none) and its generation, for RestConfig.
  apiclient::ClientCertificate Current() const;
  apiclient::ClientCertificateSource Source() const;
  // Seconds until the current certificate expires; +Inf without one.
  double TtlSeconds() const;
  // The next rotation deadline for the current certificate (for tests and logs).
  absl::Time RotationDeadline() const;
  // Runs one rotation attempt now, on the calling thread (what the thread does at the deadline).
  absl::Status RotateOnce();

 private:
  ClientCertificateManager(ClientCertificateManagerOptions options, Clock& clock);
  void SetCurrent(std::string cert_pem, std::string key_pem, bool force_rotation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Time ComputeDeadline() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop();
  // Waits until `t` or Stop(); false when stopped.
  bool SleepUntil(absl::Time t);

  ClientCertificateManagerOptions options_;
  Clock& clock_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const apiclient::ClientCertificate> current_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> not_before_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> not_after_ ABSL_GUARDED_BY(mu_);
  bool force_rotation_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time deadline_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kubelet::certificate

#endif  // KUBELET_KUBELET_CERTIFICATE_MANAGER_H_
