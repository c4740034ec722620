// certificates.k8s.io/v1 CertificateSigningRequest (upstream v1.28), the subset the kubelet's
// TLS bootstrap uses, with its JSON field tables (codec.h). spec.request and status.certificate
// are Go []byte: PEM text here, base64 on the wire.
// Value types; thread-compatible. Constant tables; thread-safe.
#ifndef KUBELET_API_CERTIFICATES_H_
#define KUBELET_API_CERTIFICATES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "api/codec.h"
#include "api/meta.h"
#include "api/meta_codec.h"

namespace kubelet::api {

inline constexpr char kKubeAPIServerClientKubeletSignerName[] =
    "kubernetes.io/kube-apiserver-client-kubelet";
inline constexpr char kKubeletServingSignerName[] = "kubernetes.io/kubelet-serving";

struct CertificateSigningRequestSpec {
  std::string request;  // PEM CSR
  std::string signer_name;
  std::optional<int32_t> expiration_seconds;
  std::vector<std::string> usages;
  std::string username;  // set by the API server
  bool operator==(const CertificateSigningRequestSpec&) const = default;
};

struct CertificateSigningRequestCondition {
  std::string type;  // Approved, Denied, Failed
  std::string status;
  std::string reason;
  std::string message;
  bool operator==(const CertificateSigningRequestCondition&) const = default;
};

struct CertificateSigningRequestStatus {
  std::vector<CertificateSigningRequestCondition> conditions;
  std::string certificate;  // PEM, set once signed
  bool operator==(const CertificateSigningRequestStatus&) const = default;
};

struct CertificateSigningRequest {
  std::string kind = "CertificateSigningRequest";
  std::string api_version = "certificates.k8s.io/v1";
  ObjectMeta metadata;
  CertificateSigningRequestSpec spec;
  CertificateSigningRequestStatus status;
  bool operator==(const CertificateSigningRequest&) const = default;
};

}  // namespace kubelet::api

namespace kubelet::api::codec {

template <>
struct Fields<CertificateSigningRequestSpec> {
  using S = CertificateSigningRequestSpec;
  static constexpr auto kList = std::tuple(
      Field("request", &S::request, kBase64), Field("signerName", &S::signer_name),
      Field("expirationSeconds", &S::expiration_seconds, kOmitEmpty),
      Field("usages", &S::usages, kOmitEmpty), Field("username", &S::username, kOmitEmpty));
};

template <>
struct Fields<CertificateSigningRequestCondition> {
  using S = CertificateSigningRequestCondition;
  static constexpr auto kList = std::tuple(Field("type", &S::type), Field("status", &S::status),
                                           Field("reason", &S::reason, kOmitEmpty),
                                           Field("message", &S::message, kOmitEmpty));
};

template <>
struct Fields<CertificateSigningRequestStatus> {
  using S = CertificateSigningRequestStatus;
  static constexpr auto kList =
      std::tuple(Field("conditions", &S::conditions, kOmitEmpty),
                 Field("certificate", &S::certificate, kOmitEmpty | kBase64));
};

template <>
struct Fields<CertificateSigningRequest> {
  using S = CertificateSigningRequest;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec),
      Field("status", &S::status, kOmitEmpty));
};

}  // namespace kubelet::api::codec

#endif  // KUBELET_API_CERTIFICATES_H_
