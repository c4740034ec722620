// TLS settings of the kubelet API (upstream cmd/kubelet/app InitializeTLS and the
// component-base cliflag TLS helpers).
//
// Contract:
// - TlsVersionFromName maps VersionTLS10..VersionTLS13 to OpenSSL protocol versions; "" is the
//   default (TLS 1.2; upstream's Go 1.20 default would be TLS 1.0, which OpenSSL's security level
//   refuses anyway). Unknown names: `unknown tls version "X"`.
// - CipherSuitesToOpenSsl maps Go's IANA cipher suite names to an OpenSSL cipher list for
//   TLS <= 1.2. TLS 1.3 suites are accepted and ignored (Go does not make them configurable).
//   Unknown names: `Cipher suite X not supported or doesn't exist`.
// - EnsureServingCertificate is InitializeTLS's certificate step: with tlsCertFile and
//   tlsPrivateKeyFile both set they are used as they are; otherwise <certDir>/kubelet.crt and
//   kubelet.key are used when both exist and load, and are generated once otherwise: a
//   self-signed CA "<host>-ca@<unix>" signs a serving certificate "<host>@<unix>" (RSA 2048,
//   valid from an hour ago for a year, serverAuth), written leaf first then the CA, key as
//   PKCS#1 "RSA PRIVATE KEY" with mode 0600, as upstream's cert.GenerateSelfSignedCertKey. SANs:
//   the host (DNS, or IP when it parses as one) as upstream, plus the given alternates (node IPs,
//   localhost, 127.0.0.1) so local clients can verify it.
// Pure functions apart from the files named; thread-compatible.
#ifndef KUBELET_SERVER_TLS_H_
#define KUBELET_SERVER_TLS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kubelet::server {

absl::StatusOr<int> TlsVersionFromName(const std::string& name);
absl::StatusOr<std::string> CipherSuitesToOpenSsl(const std::vector<std::string>& names);

struct ServingCertificate {
  std::string cert_file;
  std::string key_file;
  bool generated = false;  // written by this call
};

struct SelfSignedCertOptions {
  std::string host;                        // node hostname (CN and first SAN)
  std::vector<std::string> alternate_ips;  // extra IP SANs
  std::vector<std::string> alternate_dns;  // extra DNS SANs
};

absl::StatusOr<ServingCertificate> EnsureServingCertificate(const std::string& tls_cert_file,
                                                            const std::string& tls_key_file,
                                                            const std::string& cert_dir,
                                                            const SelfSignedCertOptions& self);

// The PEM certificate chain (leaf, CA) and PKCS#1 PEM key of a new self-signed pair.
struct CertKeyPem {
  std::string cert_pem;
  std::string key_pem;
};
absl::StatusOr<CertKeyPem> GenerateSelfSignedCertKey(const SelfSignedCertOptions& options);

// True when `cert_file` holds a certificate that `key_file`'s key matches.
absl::Status CheckCertKeyPair(const std::string& cert_file, const std::string& key_file);

}  // namespace kubelet::server

#endif  // KUBELET_SERVER_TLS_H_
