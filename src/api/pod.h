// core/v1 object model subset the kubelet needs for pods (upstream k8s.io/api/core/v1, v1.28).
//
// Plain value structs mirroring the Go types field for field (snake_case members, JSON names in
// the comments only where they differ from the obvious camelCase). Conventions:
//   * Go pointer fields ("unset" is observable) are std::optional<T>, or Box<T> (box.h: the same
//     interface, on the heap) for the large, usually unset ones: probes, lifecycle, security
//     contexts, env var sources.
//   * Go value fields use the zero value ("", 0, false, empty container) for "unset", exactly as
//     Go's omitempty does on the wire.
//   * metav1.Time is `Time` (second precision on the wire, zero value = unset, encodes as null);
//     *metav1.Time is std::optional<Time>.
//   * Resource quantities are kubelet::api::Quantity in a ResourceList (name -> quantity).
//   * Fields the kubelet never interprets (affinity, topology spread constraints, volume sources
//     other than the ones listed in Volume, windowsOptions, ...) are kept as RawJson: compact JSON
//     text that round-trips through the codec unchanged.
// Encoding/decoding lives in pod_codec.h, defaulting in pod_defaults.h, validation in
// pod_validation.h, static pod helpers (UID, QoS, full name) in static_pod.h.
// Value types; thread-compatible. All structs support == (defaulted, member-wise).
#ifndef KUBELET_API_POD_H_
#define KUBELET_API_POD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/box.h"
#include "api/meta.h"
#include "api/quantity.h"

namespace kubelet::api {

using ResourceList = std::map<std::string, Quantity>;

// RawJson, Time, IntOrString, OwnerReference and ObjectMeta live in api/meta.h.

// ---------------------------------------------------------------------------------------------
// Metadata.

struct LocalObjectReference {
  std::string name;
  bool operator==(const LocalObjectReference&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Volumes.

struct HostPathVolumeSource {
  std::string path;
  std::optional<std::string> type;  // "", DirectoryOrCreate, Directory, FileOrCreate, ...
  bool operator==(const HostPathVolumeSource&) const = default;
};

struct EmptyDirVolumeSource {
  std::string medium;  // "", "Memory", "HugePages", "HugePages-<size>"
  std::optional<Quantity> size_limit;
  bool operator==(const EmptyDirVolumeSource&) const = default;
};

struct KeyToPath {
  std::string key;
  std::string path;
  std::optional<int32_t> mode;
  bool operator==(const KeyToPath&) const = default;
};

struct ObjectFieldSelector {
  std::string api_version;  // apiVersion
  std::string field_path;
  bool operator==(const ObjectFieldSelector&) const = default;
};

struct ResourceFieldSelector {
  std::string container_name;
  std::string resource;
  Quantity divisor;  // always encoded (Go struct, omitempty has no effect): "0" when unset
  bool operator==(const ResourceFieldSelector&) const = default;
};

struct DownwardAPIVolumeFile {
  std::string path;
  std::optional<ObjectFieldSelector> field_ref;
  std::optional<ResourceFieldSelector> resource_field_ref;
  std::optional<int32_t> mode;
  bool operator==(const DownwardAPIVolumeFile&) const = default;
};

struct DownwardAPIVolumeSource {
  std::vector<DownwardAPIVolumeFile> items;
  std::optional<int32_t> default_mode;
  bool operator==(const DownwardAPIVolumeSource&) const = default;
};

struct ConfigMapVolumeSource {
  std::string name;
  std::vector<KeyToPath> items;
  std::optional<int32_t> default_mode;
  std::optional<bool> optional;
  bool operator==(const ConfigMapVolumeSource&) const = default;
};

struct SecretVolumeSource {
  std::string secret_name;
  std::vector<KeyToPath> items;
  std::optional<int32_t> default_mode;
  std::optional<bool> optional;
  bool operator==(const SecretVolumeSource&) const = default;
};

struct PersistentVolumeClaimVolumeSource {
  std::string claim_name;
  bool read_only = false;
  bool operator==(const PersistentVolumeClaimVolumeSource&) const = default;
};

struct SecretProjection {
  std::string name;
  std::vector<KeyToPath> items;
  std::optional<bool> optional;
  bool operator==(const SecretProjection&) const = default;
};

struct ConfigMapProjection {
  std::string name;
  std::vector<KeyToPath> items;
  std::optional<bool> optional;
  bool operator==(const ConfigMapProjection&) const = default;
};

struct DownwardAPIProjection {
  std::vector<DownwardAPIVolumeFile> items;
  bool operator==(const DownwardAPIProjection&) const = default;
};

struct ServiceAccountTokenProjection {
  std::string audience;
  std::optional<int64_t> expiration_seconds;
  std::string path;
  bool operator==(const ServiceAccountTokenProjection&) const = default;
};

struct VolumeProjection {
  std::optional<SecretProjection> secret;
  std::optional<DownwardAPIProjection> downward_api;  // downwardAPI
  std::optional<ConfigMapProjection> config_map;
  std::optional<ServiceAccountTokenProjection> service_account_token;
  bool operator==(const VolumeProjection&) const = default;
};

struct ProjectedVolumeSource {
  std::vector<VolumeProjection> sources;  // always encoded (no omitempty upstream)
  std::optional<int32_t> default_mode;
  bool operator==(const ProjectedVolumeSource&) const = default;
};

// Volume = name + exactly one VolumeSource member (validation enforces "exactly one").
struct Volume {
  std::string name;
  std::optional<HostPathVolumeSource> host_path;
  std::optional<EmptyDirVolumeSource> empty_dir;
  std::optional<SecretVolumeSource> secret;
  std::optional<PersistentVolumeClaimVolumeSource> persistent_volume_claim;
  std::optional<DownwardAPIVolumeSource> downward_api;  // downwardAPI
  std::optional<ConfigMapVolumeSource> config_map;
  std::optional<ProjectedVolumeSource> projected;
  // Every other upstream VolumeSource member (nfs, iscsi, csi, ephemeral, rbd, ...), keyed by its
  // JSON name, kept opaque (the Volume field table in pod_fields.h lists the accepted names).
  std::map<std::string, RawJson> other_sources;
  bool operator==(const Volume&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Containers.

struct ContainerPort {
  std::string name;
  int32_t host_port = 0;
  int32_t container_port = 0;
  std::string protocol;  // TCP (default), UDP, SCTP
  std::string host_ip;   // hostIP
  bool operator==(const ContainerPort&) const = default;
};

struct ConfigMapEnvSource {
  std::string name;
  std::optional<bool> optional;
  bool operator==(const ConfigMapEnvSource&) const = default;
};

struct SecretEnvSource {
  std::string name;
  std::optional<bool> optional;
  bool operator==(const SecretEnvSource&) const = default;
};

struct EnvFromSource {
  std::string prefix;
  std::optional<ConfigMapEnvSource> config_map_ref;
  std::optional<SecretEnvSource> secret_ref;
  bool operator==(const EnvFromSource&) const = default;
};

struct ConfigMapKeySelector {
  std::string name;
  std::string key;
  std::optional<bool> optional;
  bool operator==(const ConfigMapKeySelector&) const = default;
};

struct SecretKeySelector {
  std::string name;
  std::string key;
  std::optional<bool> optional;
  bool operator==(const SecretKeySelector&) const = default;
};

struct EnvVarSource {
  std::optional<ObjectFieldSelector> field_ref;
  std::optional<ResourceFieldSelector> resource_field_ref;
  std::optional<ConfigMapKeySelector> config_map_key_ref;
  std::optional<SecretKeySelector> secret_key_ref;
  bool operator==(const EnvVarSource&) const = default;
};

struct EnvVar {
  std::string name;
  std::string value;
  Box<EnvVarSource> value_from;
  bool operator==(const EnvVar&) const = default;
};

struct ResourceClaim {
  std::string name;
  bool operator==(const ResourceClaim&) const = default;
};

struct ResourceRequirements {
  ResourceList limits;
  ResourceList requests;
  std::vector<ResourceClaim> claims;
  bool operator==(const ResourceRequirements&) const = default;
};

struct ContainerResizePolicy {
  std::string resource_name;
  std::string restart_policy;  // NotRequired, RestartContainer
  bool operator==(const ContainerResizePolicy&) const = default;
};

struct VolumeMount {
  std::string name;
  bool read_only = false;
  std::string mount_path;
  std::string sub_path;
  std::optional<std::string> mount_propagation;  // None, HostToContainer, Bidirectional
  std::string sub_path_expr;
  bool operator==(const VolumeMount&) const = default;
};

struct VolumeDevice {
  std::string name;
  std::string device_path;
  bool operator==(const VolumeDevice&) const = default;
};

struct ExecAction {
  std::vector<std::string> command;
  bool operator==(const ExecAction&) const = default;
};

struct HTTPHeader {
  std::string name;
  std::string value;
  bool operator==(const HTTPHeader&) const = default;
};

struct HTTPGetAction {
  std::string path;
  IntOrString port;
  std::string host;
  std::string scheme;  // HTTP (default), HTTPS
  std::vector<HTTPHeader> http_headers;
  bool operator==(const HTTPGetAction&) const = default;
};

struct TCPSocketAction {
  IntOrString port;
  std::string host;
  bool operator==(const TCPSocketAction&) const = default;
};

struct GRPCAction {
  int32_t port = 0;
  std::optional<std::string> service;  // encoded even when unset ("service": null), as upstream
  bool operator==(const GRPCAction&) const = default;
};

struct Probe {
  // ProbeHandler (inline): exactly one should be set.
  std::optional<ExecAction> exec;
  std::optional<HTTPGetAction> http_get;
  std::optional<TCPSocketAction> tcp_socket;
  std::optional<GRPCAction> grpc;
  int32_t initial_delay_seconds = 0;
  int32_t timeout_seconds = 0;
  int32_t period_seconds = 0;
  int32_t success_threshold = 0;
  int32_t failure_threshold = 0;
  std::optional<int64_t> termination_grace_period_seconds;
  bool operator==(const Probe&) const = default;
};

// v1.28 LifecycleHandler (exec / httpGet / tcpSocket; "sleep" arrived in 1.29 and is ignored).
struct LifecycleHandler {
  std::optional<ExecAction> exec;
  std::optional<HTTPGetAction> http_get;
  std::optional<TCPSocketAction> tcp_socket;
  bool operator==(const LifecycleHandler&) const = default;
};

struct Lifecycle {
  std::optional<LifecycleHandler> post_start;
  std::optional<LifecycleHandler> pre_stop;
  bool operator==(const Lifecycle&) const = default;
};

struct Capabilities {
  std::vector<std::string> add;
  std::vector<std::string> drop;
  bool operator==(const Capabilities&) const = default;
};

struct SELinuxOptions {
  std::string user;
  std::string role;
  std::string type;
  std::string level;
  bool operator==(const SELinuxOptions&) const = default;
};

struct SeccompProfile {
  std::string type;  // RuntimeDefault, Unconfined, Localhost
  std::optional<std::string> localhost_profile;
  bool operator==(const SeccompProfile&) const = default;
};

struct SecurityContext {
  std::optional<Capabilities> capabilities;
  std::optional<bool> privileged;
  std::optional<SELinuxOptions> se_linux_options;  // seLinuxOptions
  std::optional<RawJson> windows_options;
  std::optional<int64_t> run_as_user;
  std::optional<int64_t> run_as_group;
  std::optional<bool> run_as_non_root;
  std::optional<bool> read_only_root_filesystem;
  std::optional<bool> allow_privilege_escalation;
  std::optional<std::string> proc_mount;  // Default, Unmasked
  std::optional<SeccompProfile> seccomp_profile;
  bool operator==(const SecurityContext&) const = default;
};

struct Container {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::string working_dir;
  std::vector<ContainerPort> ports;
  std::vector<EnvFromSource> env_from;
  std::vector<EnvVar> env;
  ResourceRequirements resources;  // always encoded ("resources": {})
  std::vector<ContainerResizePolicy> resize_policy;
  std::optional<std::string> restart_policy;  // init containers only: "Always" = sidecar
  std::vector<VolumeMount> volume_mounts;
  std::vector<VolumeDevice> volume_devices;
  Box<Probe> liveness_probe;
  Box<Probe> readiness_probe;
  Box<Probe> startup_probe;
  Box<Lifecycle> lifecycle;
  std::string termination_message_path;
  std::string termination_message_policy;  // File, FallbackToLogsOnError
  std::string image_pull_policy;           // Always, IfNotPresent, Never
  Box<SecurityContext> security_context;
  bool stdin_ = false;  // "stdin" (renamed: stdin is a libc macro)
  bool stdin_once = false;
  bool tty = false;
  bool operator==(const Container&) const = default;
};

// EphemeralContainer = EphemeralContainerCommon (same fields as Container) + targetContainerName.
struct EphemeralContainer {
  Container common;
  std::string target_container_name;
  bool operator==(const EphemeralContainer&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Pod spec.

struct Sysctl {
  std::string name;
  std::string value;
  bool operator==(const Sysctl&) const = default;
};

struct PodSecurityContext {
  std::optional<SELinuxOptions> se_linux_options;
  std::optional<RawJson> windows_options;
  std::optional<int64_t> run_as_user;
  std::optional<int64_t> run_as_group;
  std::optional<bool> run_as_non_root;
  std::vector<int64_t> supplemental_groups;
  std::optional<int64_t> fs_group;
  std::vector<Sysctl> sysctls;
  std::optional<std::string> fs_group_change_policy;  // OnRootMismatch, Always
  std::optional<SeccompProfile> seccomp_profile;
  bool operator==(const PodSecurityContext&) const = default;
};

struct Toleration {
  std::string key;
  std::string operator_;  // "operator": Exists, Equal ("" = Equal)
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute ("" = all)
  std::optional<int64_t> toleration_seconds;
  bool operator==(const Toleration&) const = default;
};

struct HostAlias {
  std::string ip;
  std::vector<std::string> hostnames;
  bool operator==(const HostAlias&) const = default;
};

struct PodDNSConfigOption {
  std::string name;
  std::optional<std::string> value;
  bool operator==(const PodDNSConfigOption&) const = default;
};

struct PodDNSConfig {
  std::vector<std::string> nameservers;
  std::vector<std::string> searches;
  std::vector<PodDNSConfigOption> options;
  bool operator==(const PodDNSConfig&) const = default;
};

struct PodReadinessGate {
  std::string condition_type;
  bool operator==(const PodReadinessGate&) const = default;
};

struct PodOS {
  std::string name;  // linux, windows
  bool operator==(const PodOS&) const = default;
};

struct PodSchedulingGate {
  std::string name;
  bool operator==(const PodSchedulingGate&) const = default;
};

struct ClaimSource {
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
  bool operator==(const ClaimSource&) const = default;
};

struct PodResourceClaim {
  std::string name;
  ClaimSource source;  // always encoded ("source": {})
  bool operator==(const PodResourceClaim&) const = default;
};

struct PodSpec {
  std::vector<Volume> volumes;
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  std::vector<EphemeralContainer> ephemeral_containers;
  std::string restart_policy;  // Always, OnFailure, Never
  std::optional<int64_t> termination_grace_period_seconds;
  std::optional<int64_t> active_deadline_seconds;
  std::string dns_policy;  // ClusterFirst, ClusterFirstWithHostNet, Default, None
  StringMap node_selector;
  // serviceAccountName; the deprecated "serviceAccount" is folded in on decode (when
  // serviceAccountName is empty) and mirrored on encode, as the v1 conversion does.
  std::string service_account_name;
  std::optional<bool> automount_service_account_token;
  std::string node_name;
  bool host_network = false;
  bool host_pid = false;  // hostPID
  bool host_ipc = false;  // hostIPC
  std::optional<bool> share_process_namespace;
  Box<PodSecurityContext> security_context;
  std::vector<LocalObjectReference> image_pull_secrets;
  std::string hostname;
  std::string subdomain;
  std::optional<RawJson> affinity;
  std::string scheduler_name;
  std::vector<Toleration> tolerations;
  std::vector<HostAlias> host_aliases;
  std::string priority_class_name;
  std::optional<int32_t> priority;
  std::optional<PodDNSConfig> dns_config;
  std::vector<PodReadinessGate> readiness_gates;
  std::optional<std::string> runtime_class_name;
  std::optional<bool> enable_service_links;
  std::optional<std::string> preemption_policy;  // PreemptLowerPriority, Never
  ResourceList overhead;
  std::vector<RawJson> topology_spread_constraints;
  std::optional<bool> set_hostname_as_fqdn;  // setHostnameAsFQDN
  std::optional<PodOS> os;
  std::optional<bool> host_users;
  std::vector<PodSchedulingGate> scheduling_gates;
  std::vector<PodResourceClaim> resource_claims;
  bool operator==(const PodSpec&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Pod status.

struct PodCondition {
  std::string type;    // PodScheduled, Initialized, ContainersReady, Ready, ...
  std::string status;  // True, False, Unknown
  Time last_probe_time;
  Time last_transition_time;
  std::string reason;
  std::string message;
  bool operator==(const PodCondition&) const = default;
};

struct PodIP {
  std::string ip;
  bool operator==(const PodIP&) const = default;
};

struct HostIP {
  std::string ip;
  bool operator==(const HostIP&) const = default;
};

struct ContainerStateWaiting {
  std::string reason;
  std::string message;
  bool operator==(const ContainerStateWaiting&) const = default;
};

struct ContainerStateRunning {
  Time started_at;
  bool operator==(const ContainerStateRunning&) const = default;
};

struct ContainerStateTerminated {
  int32_t exit_code = 0;
  int32_t signal = 0;
  std::string reason;
  std::string message;
  Time started_at;
  Time finished_at;
  std::string container_id;  // containerID
  bool operator==(const ContainerStateTerminated&) const = default;
};

struct ContainerState {
  std::optional<ContainerStateWaiting> waiting;
  std::optional<ContainerStateRunning> running;
  std::optional<ContainerStateTerminated> terminated;
  bool operator==(const ContainerState&) const = default;
};

struct ContainerStatus {
  std::string name;
  ContainerState state;       // always encoded ("state": {})
  ContainerState last_state;  // "lastState", always encoded
  bool ready = false;
  int32_t restart_count = 0;
  std::string image;
  std::string image_id;      // imageID (always encoded)
  std::string container_id;  // containerID
  std::optional<bool> started;
  ResourceList allocated_resources;
  std::optional<ResourceRequirements> resources;
  bool operator==(const ContainerStatus&) const = default;
};

struct PodStatus {
  std::string phase;  // Pending, Running, Succeeded, Failed, Unknown
  std::vector<PodCondition> conditions;
  std::string message;
  std::string reason;
  std::string nominated_node_name;
  std::string host_ip;  // hostIP
  std::vector<HostIP> host_ips;
  std::string pod_ip;  // podIP
  std::vector<PodIP> pod_ips;
  std::optional<Time> start_time;
  std::vector<ContainerStatus> init_container_statuses;
  std::vector<ContainerStatus> container_statuses;
  std::string qos_class;  // qosClass: Guaranteed, Burstable, BestEffort
  std::vector<ContainerStatus> ephemeral_container_statuses;
  std::string resize;
  std::vector<RawJson> resource_claim_statuses;
  bool operator==(const PodStatus&) const = default;
};

struct Pod {
  // TypeMeta. DecodePod clears these (the upstream decode goes through the internal type, which
  // has no TypeMeta); EncodePodJson always writes "Pod"/"v1".
  std::string kind;
  std::string api_version;
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  bool operator==(const Pod&) const = default;
};

// A pod shared, immutable, by everything that holds the same version of it (the pod manager,
// the pod workers, their callers): a new version is a new object.
using PodPtr = std::shared_ptr<const Pod>;

// ---------------------------------------------------------------------------------------------
// Well-known values.

inline constexpr char kRestartPolicyAlways[] = "Always";
inline constexpr char kRestartPolicyOnFailure[] = "OnFailure";
inline constexpr char kRestartPolicyNever[] = "Never";

inline constexpr char kDNSClusterFirst[] = "ClusterFirst";
inline constexpr char kDNSClusterFirstWithHostNet[] = "ClusterFirstWithHostNet";
inline constexpr char kDNSDefault[] = "Default";
inline constexpr char kDNSNone[] = "None";

inline constexpr char kPullAlways[] = "Always";
inline constexpr char kPullIfNotPresent[] = "IfNotPresent";
inline constexpr char kPullNever[] = "Never";

inline constexpr char kProtocolTCP[] = "TCP";
inline constexpr char kProtocolUDP[] = "UDP";
inline constexpr char kProtocolSCTP[] = "SCTP";

inline constexpr char kPodPending[] = "Pending";
inline constexpr char kPodRunning[] = "Running";
inline constexpr char kPodSucceeded[] = "Succeeded";
inline constexpr char kPodFailed[] = "Failed";
inline constexpr char kPodUnknown[] = "Unknown";

inline constexpr char kResourceCPU[] = "cpu";
inline constexpr char kResourceMemory[] = "memory";
inline constexpr char kResourceEphemeralStorage[] = "ephemeral-storage";

inline constexpr char kTerminationMessagePathDefault[] = "/dev/termination-log";
inline constexpr char kTerminationMessageReadFile[] = "File";
inline constexpr char kTerminationMessageFallbackToLogsOnError[] = "FallbackToLogsOnError";
inline constexpr char kDefaultSchedulerName[] = "default-scheduler";
inline constexpr int64_t kDefaultTerminationGracePeriodSeconds = 30;
inline constexpr int32_t kDefaultVolumeMode = 0644;  // Secret/ConfigMap/DownwardAPI/Projected

inline constexpr char kContainerRestartPolicyAlways[] = "Always";

// True for an init container with restartPolicy: Always (a sidecar, KEP-753).
inline bool IsRestartableInitContainer(const Container& c) {
  return c.restart_policy.has_value() && *c.restart_policy == kContainerRestartPolicyAlways;
}

}  // namespace kubelet::api

#endif  // KUBELET_API_POD_H_
