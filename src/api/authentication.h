// authentication.k8s.io/v1 TokenRequest (upstream k8s.io/api/authentication/v1, v1.28), the
// subresource POSTed to /api/v1/namespaces/<ns>/serviceaccounts/<name>/token, TokenReview
// (POSTed to /apis/authentication.k8s.io/v1/tokenreviews by webhook authentication) and
// authorization.k8s.io/v1 SubjectAccessReview (webhook authorization), with their JSON field
// tables (codec.h). Tokens in TokenRequest.status and TokenReview.spec are secrets: never log
// them.
// Value types; thread-compatible. Constant tables; thread-safe.
#ifndef KUBELET_API_AUTHENTICATION_H_
#define KUBELET_API_AUTHENTICATION_H_

#include <cstdint>
#include <map>
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

struct TokenReviewSpec {
  std::string token;
  std::vector<std::string> audiences;
  bool operator==(const TokenReviewSpec&) const = default;
};

// authentication/v1 UserInfo.
struct AuthUserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
  bool operator==(const AuthUserInfo&) const = default;
};

struct TokenReviewStatus {
  bool authenticated = false;
  AuthUserInfo user;
  std::vector<std::string> audiences;
  std::string error;
  bool operator==(const TokenReviewStatus&) const = default;
};

struct TokenReview {
  std::string kind = "TokenReview";
  std::string api_version = "authentication.k8s.io/v1";
  ObjectMeta metadata;
  TokenReviewSpec spec;
  TokenReviewStatus status;
  bool operator==(const TokenReview&) const = default;
};

struct ResourceAttributes {
  std::string namespace_;  // namespace
  std::string verb;
  std::string group;
  std::string version;
  std::string resource;
  std::string subresource;
  std::string name;
  bool operator==(const ResourceAttributes&) const = default;
};

struct SubjectAccessReviewSpec {
  std::optional<ResourceAttributes> resource_attributes;
  std::string user;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
  std::string uid;
  bool operator==(const SubjectAccessReviewSpec&) const = default;
};

struct SubjectAccessReviewStatus {
  bool allowed = false;
  bool denied = false;
  std::string reason;
  std::string evaluation_error;
  bool operator==(const SubjectAccessReviewStatus&) const = default;
};

struct SubjectAccessReview {
  std::string kind = "SubjectAccessReview";
  std::string api_version = "authorization.k8s.io/v1";
  ObjectMeta metadata;
  SubjectAccessReviewSpec spec;
  SubjectAccessReviewStatus status;
  bool operator==(const SubjectAccessReview&) const = default;
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

template <>
struct Fields<TokenReviewSpec> {
  using S = TokenReviewSpec;
  static constexpr auto kList = std::tuple(Field("token", &S::token, kOmitEmpty),
                                           Field("audiences", &S::audiences, kOmitEmpty));
};

template <>
struct Fields<AuthUserInfo> {
  using S = AuthUserInfo;
  static constexpr auto kList =
      std::tuple(Field("username", &S::username, kOmitEmpty), Field("uid", &S::uid, kOmitEmpty),
                 Field("groups", &S::groups, kOmitEmpty), Field("extra", &S::extra, kOmitEmpty));
};

template <>
struct Fields<TokenReviewStatus> {
  using S = TokenReviewStatus;
  static constexpr auto kList = std::tuple(
      Field("authenticated", &S::authenticated, kOmitEmpty), Field("user", &S::user, kOmitEmpty),
      Field("audiences", &S::audiences, kOmitEmpty), Field("error", &S::error, kOmitEmpty));
};

template <>
struct Fields<TokenReview> {
  using S = TokenReview;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec),
      Field("status", &S::status, kOmitEmpty));
};

template <>
struct Fields<ResourceAttributes> {
  using S = ResourceAttributes;
  static constexpr auto kList = std::tuple(
      Field("namespace", &S::namespace_, kOmitEmpty), Field("verb", &S::verb, kOmitEmpty),
      Field("group", &S::group, kOmitEmpty), Field("version", &S::version, kOmitEmpty),
      Field("resource", &S::resource, kOmitEmpty),
      Field("subresource", &S::subresource, kOmitEmpty), Field("name", &S::name, kOmitEmpty));
};

template <>
struct Fields<SubjectAccessReviewSpec> {
  using S = SubjectAccessReviewSpec;
  static constexpr auto kList =
      std::tuple(Field("resourceAttributes", &S::resource_attributes, kOmitEmpty),
                 Field("user", &S::user, kOmitEmpty), Field("groups", &S::groups, kOmitEmpty),
                 Field("extra", &S::extra, kOmitEmpty), Field("uid", &S::uid, kOmitEmpty));
};

template <>
struct Fields<SubjectAccessReviewStatus> {
  using S = SubjectAccessReviewStatus;
  static constexpr auto kList =
      std::tuple(Field("allowed", &S::allowed), Field("denied", &S::denied, kOmitEmpty),
                 Field("reason", &S::reason, kOmitEmpty),
                 Field("evaluationError", &S::evaluation_error, kOmitEmpty));
};

template <>
struct Fields<SubjectAccessReview> {
  using S = SubjectAccessReview;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec),
      Field("status", &S::status, kOmitEmpty));
};

}  // namespace kubelet::api::codec

#endif  // KUBELET_API_AUTHENTICATION_H_
