// JSON field tables (codec.h) for the meta/v1 types of meta.h: ObjectMeta, OwnerReference,
// ListMeta, Status, List<T> and WatchEvent<T>. Field names, order and omitempty follow upstream
// k8s.io/apimachinery v1.28. Include this header (not meta.h) to Encode/Decode these types.
// Constant tables; thread-safe.
#ifndef KUBELET_API_META_CODEC_H_
#define KUBELET_API_META_CODEC_H_

#include <tuple>

#include "api/codec.h"
#include "api/meta.h"

namespace kubelet::api::codec {

template <>
struct Fields<OwnerReference> {
  using S = OwnerReference;
  static constexpr auto kList = std::tuple(  //
      Field("apiVersion", &S::api_version), Field("kind", &S::kind), Field("name", &S::name),
      Field("uid", &S::uid), Field("controller", &S::controller, kOmitEmpty),
      Field("blockOwnerDeletion", &S::block_owner_deletion, kOmitEmpty));
};

template <>
struct Fields<ObjectMeta> {
  using S = ObjectMeta;
  static constexpr auto kList = std::tuple(
      Field("name", &S::name, kOmitEmpty), Field("generateName", &S::generate_name, kOmitEmpty),
      Field("namespace", &S::namespace_, kOmitEmpty), Field("selfLink", &S::self_link, kOmitEmpty),
      Field("uid", &S::uid, kOmitEmpty), Field("resourceVersion", &S::resource_version, kOmitEmpty),
      Field("generation", &S::generation, kOmitEmpty),
      Field("creationTimestamp", &S::creation_timestamp, kOmitEmpty),
      Field("deletionTimestamp", &S::deletion_timestamp, kOmitEmpty),
      Field("deletionGracePeriodSeconds", &S::deletion_grace_period_seconds, kOmitEmpty),
      Field("labels", &S::labels, kOmitEmpty), Field("annotations", &S::annotations, kOmitEmpty),
      Field("ownerReferences", &S::owner_references, kOmitEmpty),
      Field("finalizers", &S::finalizers, kOmitEmpty),
      Field("managedFields", &S::managed_fields, kOmitEmpty));
};

template <>
struct Fields<ListMeta> {
  using S = ListMeta;
  static constexpr auto kList =
      std::tuple(Field("selfLink", &S::self_link, kOmitEmpty),
                 Field("resourceVersion", &S::resource_version, kOmitEmpty),
                 Field("continue", &S::continue_, kOmitEmpty),
                 Field("remainingItemCount", &S::remaining_item_count, kOmitEmpty));
};

template <>
struct Fields<StatusCause> {
  using S = StatusCause;
  static constexpr auto kList =
      std::tuple(Field("reason", &S::reason, kOmitEmpty), Field("message", &S::message, kOmitEmpty),
                 Field("field", &S::field, kOmitEmpty));
};

template <>
struct Fields<StatusDetails> {
  using S = StatusDetails;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name, kOmitEmpty), Field("group", &S::group, kOmitEmpty),
                 Field("kind", &S::kind, kOmitEmpty), Field("uid", &S::uid, kOmitEmpty),
                 Field("causes", &S::causes, kOmitEmpty),
                 Field("retryAfterSeconds", &S::retry_after_seconds, kOmitEmpty));
};

template <>
struct Fields<Status> {
  using S = Status;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata), Field("status", &S::status, kOmitEmpty),
      Field("message", &S::message, kOmitEmpty), Field("reason", &S::reason, kOmitEmpty),
      Field("details", &S::details, kOmitEmpty), Field("code", &S::code, kOmitEmpty));
};

template <typename T>
struct Fields<List<T>> {
  using S = List<T>;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata), Field("items", &S::items));
};

template <typename T>
struct Fields<WatchEvent<T>> {
  using S = WatchEvent<T>;
  static constexpr auto kList = std::tuple(Field("type", &S::type), Field("object", &S::object));
};

}  // namespace kubelet::api::codec

namespace kubelet::api {

// {"metadata":{"labels":{...},"annotations":{...}}}: what takes `before`'s labels and annotations
// to `after`'s, a changed or added key with its value and a removed one as null (each map only
// when it differs); an empty object when both are the same. Valid as a JSON merge patch and as a
// strategic merge patch.
Json MetadataMapsPatch(const ObjectMeta& before, const ObjectMeta& after);

}  // namespace kubelet::api

#endif  // KUBELET_API_META_CODEC_H_
