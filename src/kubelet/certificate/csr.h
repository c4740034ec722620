// Certificate signing requests and the certificate file store, shared by the TLS bootstrap and
// the client certificate manager (upstream client-go util/certificate/csr and
// util/certificate.FileStore):
//   - keys are ECDSA P-256; requests carry O=<org>, CN=<cn>;
//   - a request is created with a fixed name (the bootstrap's node-csr-<digest>; an identical
//     existing request is taken as ours) or with generateName "csr-";
//   - the store keeps <dir>/<prefix>-<YYYY-MM-DD-HH-MM-SS>.pem (certificate then key, 0600) and
//     the symlink <dir>/<prefix>-current.pem to the newest.
// Blocking calls on the caller's thread; no state.
#ifndef KUBELET_KUBELET_CERTIFICATE_CSR_H_
#define KUBELET_KUBELET_CERTIFICATE_CSR_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/certificates.h"
#include "apiclient/rest_client.h"
#include "common/openssl.h"

namespace kubelet::certificate {

// Usages of the kubelet's client certificate with an ECDSA key.
inline const std::vector<std::string>& ClientUsages() {
  static const std::vector<std::string> kUsages = {"digital signature", "client auth"};
  return kUsages;
}

// Usages of the kubelet's serving certificate with an ECDSA key (kubelet-serving signer; "key
// encipherment" is for RSA keys only).
inline const std::vector<std::string>& ServingUsages() {
  static const std::vector<std::string> kUsages = {"digital signature", "server auth"};
  return kUsages;
}

// Subject alternative names of a request or certificate, each list sorted and without repeats.
struct SubjectAltNames {
  std::vector<std::string> dns_names;
  std::vector<std::string> ips;  // textual, as inet_ntop prints them
  bool operator==(const SubjectAltNames&) const = default;
};

// The canonical text of an IPv4 or IPv6 address (as inet_ntop prints it: "fd00::1" for
// "FD00:0::1"); "" when `ip` is not one.
std::string CanonicalIp(const std::string& ip);

absl::StatusOr<ossl::PkeyPtr> GenerateKey();
absl::StatusOr<ossl::PkeyPtr> ParseKey(const std::string& pem);
absl::StatusOr<std::string> KeyPem(EVP_PKEY* key);
absl::StatusOr<std::string> PublicKeyDer(EVP_PKEY* key);
// With `sans` (not empty): a subjectAltName extension of those names and addresses. An IP
// that does not parse is an InvalidArgument error.
absl::StatusOr<std::string> MakeCsrPem(EVP_PKEY* key, const std::string& cn, const std::string& org,
                                       const SubjectAltNames& sans = {});

// What the certificate manager needs of a certificate (the first one in `pem`).
struct CertInfo {
  absl::Time not_before;
  absl::Time not_after;
  std::string common_name;
  SubjectAltNames sans;
};
absl::StatusOr<CertInfo> ReadCertInfo(const std::string& pem);
// Whether the first certificate of `pem` is valid at `now` (why not, otherwise).
absl::Status CertValidNow(const std::string& pem, absl::Time now);

// Creates `csr` and returns the name it has on the server.
absl::StatusOr<std::string> CreateCsr(apiclient::RestClient& client,
                                      const api::CertificateSigningRequest& csr);
// Polls the request every `poll` until it is issued (its certificate PEM), Denied or Failed
// (PermissionDenied), `deadline` passes (DeadlineExceeded) or `stopped` says so (Cancelled).
absl::StatusOr<std::string> WaitForCertificate(apiclient::RestClient& client,
                                               const std::string& name, absl::Time deadline,
                                               absl::Duration poll,
                                               const std::function<bool()>& stopped);

// Writes the pair to the store and points the current link at it; returns the dated file.
absl::StatusOr<std::string> StoreCertificate(const std::string& dir, const std::string& prefix,
                                             const std::string& cert_pem,
                                             const std::string& key_pem, absl::Time now);
// The certificate (with its chain) and key PEM blocks of a store file (or any PEM file holding
// both).
absl::StatusOr<std::pair<std::string, std::string>> LoadPair(const std::string& path);
// Splits PEM text into its certificate blocks and its private key block.
std::pair<std::string, std::string> SplitPem(const std::string& pem);

}  // namespace kubelet::certificate

#endif  // KUBELET_KUBELET_CERTIFICATE_CSR_H_
