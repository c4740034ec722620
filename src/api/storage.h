// The storage objects the kubelet reads (upstream v1.28) with their JSON field tables (codec.h):
// core/v1 PersistentVolumeClaim and PersistentVolume, and storage.k8s.io/v1 VolumeAttachment.
// Only the members the kubelet's volume manager and CSI plugin use are modelled; other members
// are ignored when decoding (these objects are only read, never written back).
// Value types; thread-compatible. Constant tables; thread-safe.
#ifndef KUBELET_API_STORAGE_H_
#define KUBELET_API_STORAGE_H_

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "api/codec.h"
#include "api/core_misc.h"
#include "api/meta.h"
#include "api/meta_codec.h"
#include "api/pod.h"
#include "api/pod_fields.h"

namespace kubelet::api {

inline constexpr char kClaimBound[] = "Bound";  // PersistentVolumeClaim status.phase
inline constexpr char kVolumeModeBlock[] = "Block";
inline constexpr char kReadWriteOnce[] = "ReadWriteOnce";
inline constexpr char kReadOnlyMany[] = "ReadOnlyMany";
inline constexpr char kReadWriteMany[] = "ReadWriteMany";
inline constexpr char kReadWriteOncePod[] = "ReadWriteOncePod";

struct PersistentVolumeClaimSpec {
  std::vector<std::string> access_modes;
  std::string volume_name;
  std::optional<std::string> storage_class_name;
  std::optional<std::string> volume_mode;  // Filesystem (default) or Block
  bool operator==(const PersistentVolumeClaimSpec&) const = default;
};

struct PersistentVolumeClaimStatus {
  std::string phase;  // Pending, Bound, Lost
  std::vector<std::string> access_modes;
  ResourceList capacity;
  bool operator==(const PersistentVolumeClaimStatus&) const = default;
};

struct PersistentVolumeClaim {
  ObjectMeta metadata;
  PersistentVolumeClaimSpec spec;
  PersistentVolumeClaimStatus status;
  bool operator==(const PersistentVolumeClaim&) const = default;
};

// v1.SecretReference.
struct SecretReference {
  std::string name;
  std::string namespace_;  // "namespace"
  bool operator==(const SecretReference&) const = default;
};

struct CSIPersistentVolumeSource {
  std::string driver;
  std::string volume_handle;
  bool read_only = false;
  std::string fs_type;
  StringMap volume_attributes;
  std::optional<SecretReference> controller_publish_secret_ref;
  std::optional<SecretReference> node_stage_secret_ref;
  std::optional<SecretReference> node_publish_secret_ref;
  std::optional<SecretReference> controller_expand_secret_ref;
  std::optional<SecretReference> node_expand_secret_ref;
  bool operator==(const CSIPersistentVolumeSource&) const = default;
};

struct LocalVolumeSource {
  std::string path;
  std::optional<std::string> fs_type;
  bool operator==(const LocalVolumeSource&) const = default;
};

struct PersistentVolumeSpec {
  ResourceList capacity;
  // The PersistentVolumeSource members the kubelet supports (others: none of these is set).
  std::optional<HostPathVolumeSource> host_path;
  std::optional<LocalVolumeSource> local;
  std::optional<CSIPersistentVolumeSource> csi;
  std::vector<std::string> access_modes;
  std::optional<ObjectReference> claim_ref;
  std::string storage_class_name;
  std::vector<std::string> mount_options;
  std::optional<std::string> volume_mode;
  bool operator==(const PersistentVolumeSpec&) const = default;
};

struct PersistentVolume {
  ObjectMeta metadata;
  PersistentVolumeSpec spec;
  bool operator==(const PersistentVolume&) const = default;
};

struct VolumeError {
  Time time;
  std::string message;
  bool operator==(const VolumeError&) const = default;
};

struct VolumeAttachmentStatus {
  bool attached = false;
  StringMap attachment_metadata;
  std::optional<VolumeError> attach_error;
  std::optional<VolumeError> detach_error;
  bool operator==(const VolumeAttachmentStatus&) const = default;
};

struct VolumeAttachmentSource {
  std::optional<std::string> persistent_volume_name;
  bool operator==(const VolumeAttachmentSource&) const = default;
};

struct VolumeAttachmentSpec {
  std::string attacher;
  VolumeAttachmentSource source;
  std::string node_name;
  bool operator==(const VolumeAttachmentSpec&) const = default;
};

struct VolumeAttachment {
  ObjectMeta metadata;
  VolumeAttachmentSpec spec;
  VolumeAttachmentStatus status;
  bool operator==(const VolumeAttachment&) const = default;
};

}  // namespace kubelet::api

namespace kubelet::api::codec {

template <>
struct Fields<PersistentVolumeClaimSpec> {
  using S = PersistentVolumeClaimSpec;
  static constexpr auto kList =
      std::tuple(Field("accessModes", &S::access_modes, kOmitEmpty),
                 Field("volumeName", &S::volume_name, kOmitEmpty),
                 Field("storageClassName", &S::storage_class_name, kOmitEmpty),
                 Field("volumeMode", &S::volume_mode, kOmitEmpty));
};

template <>
struct Fields<PersistentVolumeClaimStatus> {
  using S = PersistentVolumeClaimStatus;
  static constexpr auto kList = std::tuple(Field("phase", &S::phase, kOmitEmpty),
                                           Field("accessModes", &S::access_modes, kOmitEmpty),
                                           Field("capacity", &S::capacity, kOmitEmpty));
};

template <>
struct Fields<PersistentVolumeClaim> {
  using S = PersistentVolumeClaim;
  static constexpr auto kList =
      std::tuple(Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec, kOmitEmpty),
                 Field("status", &S::status, kOmitEmpty));
};

template <>
struct Fields<SecretReference> {
  using S = SecretReference;
  static constexpr auto kList = std::tuple(Field("name", &S::name, kOmitEmpty),
                                           Field("namespace", &S::namespace_, kOmitEmpty));
};

template <>
struct Fields<CSIPersistentVolumeSource> {
  using S = CSIPersistentVolumeSource;
  static constexpr auto kList = std::tuple(
      Field("driver", &S::driver), Field("volumeHandle", &S::volume_handle),
      Field("readOnly", &S::read_only, kOmitEmpty), Field("fsType", &S::fs_type, kOmitEmpty),
      Field("volumeAttributes", &S::volume_attributes, kOmitEmpty),
      Field("controllerPublishSecretRef", &S::controller_publish_secret_ref, kOmitEmpty),
      Field("nodeStageSecretRef", &S::node_stage_secret_ref, kOmitEmpty),
      Field("nodePublishSecretRef", &S::node_publish_secret_ref, kOmitEmpty),
      Field("controllerExpandSecretRef", &S::controller_expand_secret_ref, kOmitEmpty),
      Field("nodeExpandSecretRef", &S::node_expand_secret_ref, kOmitEmpty));
};

template <>
struct Fields<LocalVolumeSource> {
  using S = LocalVolumeSource;
  static constexpr auto kList =
      std::tuple(Field("path", &S::path), Field("fsType", &S::fs_type, kOmitEmpty));
};

template <>
struct Fields<PersistentVolumeSpec> {
  using S = PersistentVolumeSpec;
  static constexpr auto kList = std::tuple(
      Field("capacity", &S::capacity, kOmitEmpty), Field("hostPath", &S::host_path, kOmitEmpty),
      Field("local", &S::local, kOmitEmpty), Field("csi", &S::csi, kOmitEmpty),
      Field("accessModes", &S::access_modes, kOmitEmpty),
      Field("claimRef", &S::claim_ref, kOmitEmpty),
      Field("storageClassName", &S::storage_class_name, kOmitEmpty),
      Field("mountOptions", &S::mount_options, kOmitEmpty),
      Field("volumeMode", &S::volume_mode, kOmitEmpty));
};

template <>
struct Fields<PersistentVolume> {
  using S = PersistentVolume;
  static constexpr auto kList =
      std::tuple(Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec, kOmitEmpty));
};

template <>
struct Fields<VolumeError> {
  using S = VolumeError;
  static constexpr auto kList =
      std::tuple(Field("time", &S::time, kOmitEmpty), Field("message", &S::message, kOmitEmpty));
};

template <>
struct Fields<VolumeAttachmentStatus> {
  using S = VolumeAttachmentStatus;
  static constexpr auto kList =
      std::tuple(Field("attached", &S::attached),
                 Field("attachmentMetadata", &S::attachment_metadata, kOmitEmpty),
                 Field("attachError", &S::attach_error, kOmitEmpty),
                 Field("detachError", &S::detach_error, kOmitEmpty));
};

template <>
struct Fields<VolumeAttachmentSource> {
  using S = VolumeAttachmentSource;
  static constexpr auto kList =
      std::tuple(Field("persistentVolumeName", &S::persistent_volume_name, kOmitEmpty));
};

template <>
struct Fields<VolumeAttachmentSpec> {
  using S = VolumeAttachmentSpec;
  static constexpr auto kList =
      std::tuple(Field("attacher", &S::attacher), Field("source", &S::source),
                 Field("nodeName", &S::node_name));
};

template <>
struct Fields<VolumeAttachment> {
  using S = VolumeAttachment;
  static constexpr auto kList =
      std::tuple(Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec),
                 Field("status", &S::status, kOmitEmpty));
};

}  // namespace kubelet::api::codec

#endif  // KUBELET_API_STORAGE_H_
