// authentication.k8s.io/v1 TokenRequest (upstream k8s.io/api/authentication/v1, v1.28), the
// subresource POSTed to /api/v1/namespaces/<ns>/serviceaccounts/<name>/token, with its JSON field
// table (codec.h). The token in status is a secret: never log it.
// Value types; thread-compatible. Constant tables; thread-safe.
#ifndef KUBELET_API_AUTHENTICATION_H_
#define KUBELET_API_AUTHENTICATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "api/codec.h"
#include "api/meta.h"
#include "api/meta_codec.h"

namespace kubelet::api {

struct BoundObjectReference {
  std::string kind;         // Pod, Secret
  std::string api_version;  // apiVersion
  std::string name;
  std::string uid;
  bool operator==(const BoundObjectReference&) const = default;
};

struct TokenRequestSpec {
  std::vector<std::string> audiences;  // always encoded (no omitempty upstream)
  std::optional<int64_t> expiration_seconds;
  std::optional<BoundObjectReference> bound_object_ref;
  bool operator==(const TokenRequestSpec&) const = default;
};

struct TokenRequestStatus {
  std::string token;
  Time expiration_timestamp;
  bool operator==(const TokenRequestStatus&) const = default;
};

struct TokenRequest {
  std::string kind = "TokenRequest";
  std::string api_version = "authentication.k8s.io/v1";
  ObjectMeta metadata;
  TokenRequestSpec spec;
  TokenRequestStatus status;
  bool operator==(const TokenRequest&) const = default;
};

}  // namespace kubelet::api

namespace kubelet::api::codec {

template <>
struct Fields<BoundObjectReference> {
  using S = BoundObjectReference;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("name", &S::name, kOmitEmpty), Field("uid", &S::uid, kOmitEmpty));
};

template <>
struct Fields<TokenRequestSpec> {
  using S = TokenRequestSpec;
  static constexpr auto kList =
      std::tuple(Field("audiences", &S::audiences),
                 Field("expirationSeconds", &S::expiration_seconds, kOmitEmpty),
                 Field("boundObjectRef", &S::bound_object_ref, kOmitEmpty));
};

template <>
struct Fields<TokenRequestStatus> {
  using S = TokenRequestStatus;
  static constexpr auto kList =
      std::tuple(Field("token", &S::token), Field("expirationTimestamp", &S::expiration_timestamp));
};

template <>
struct Fields<TokenRequest> {
  using S = TokenRequest;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec),
      Field("status", &S::status, kOmitEmpty));
};

}  // namespace kubelet::api::codec

#endif  // KUBELET_API_AUTHENTICATION_H_
