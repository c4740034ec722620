// JSON field tables (codec.h) for the core/v1 Pod types of pod.h: one declarative description per
// type drives both the Go-compatible encoding and the path-naming decoding of pod_codec.h. Field
// names, order (Go declaration order) and omitempty follow upstream k8s.io/api/core/v1 v1.28;
// ObjectMeta's table is in meta_codec.h.
//
// Choices that keep the Pod's JSON byte-identical to what the kubelet always wrote (a static pod's
// config hash is computed from it):
//   * opaque members (affinity, topologySpreadConstraints, windowsOptions, the VolumeSource
//     members kept in Volume::other_sources) are kObject | kSortKeys RawJson: a JSON object whose
//     members are stored sorted, whatever order the manifest used;
//   * the nil slices Go writes as null without omitempty (PodSpec.containers,
//     ProjectedVolumeSource.sources) are kEmptyAsNull;
//   * the deprecated PodSpec.serviceAccount is a kFallback of serviceAccountName.
// Include this header (not pod.h) to use Encode/Decode/FromJson on these types directly; most
// callers want pod_codec.h, which adds kind/apiVersion checks, YAML and the pod-level policies.
// Constant tables; thread-safe.
#ifndef KUBELET_API_POD_FIELDS_H_
#define KUBELET_API_POD_FIELDS_H_

#include <tuple>

#include "api/codec.h"
#include "api/meta_codec.h"
#include "api/pod.h"

namespace kubelet::api::codec {

// Opaque Go structs.
inline constexpr uint32_t kOpaque = kOmitEmpty | kObject | kSortKeys;

template <>
struct Fields<LocalObjectReference> {
  using S = LocalObjectReference;
  static constexpr auto kList = std::tuple(Field("name", &S::name, kOmitEmpty));
};

// ---------------------------------------------------------------------------------------------
// Volumes.

template <>
struct Fields<HostPathVolumeSource> {
  using S = HostPathVolumeSource;
  static constexpr auto kList =
      std::tuple(Field("path", &S::path), Field("type", &S::type, kOmitEmpty));
};

template <>
struct Fields<EmptyDirVolumeSource> {
  using S = EmptyDirVolumeSource;
  static constexpr auto kList = std::tuple(Field("medium", &S::medium, kOmitEmpty),
                                           Field("sizeLimit", &S::size_limit, kOmitEmpty));
};

template <>
struct Fields<KeyToPath> {
  using S = KeyToPath;
  static constexpr auto kList = std::tuple(Field("key", &S::key), Field("path", &S::path),
                                           Field("mode", &S::mode, kOmitEmpty));
};

template <>
struct Fields<ObjectFieldSelector> {
  using S = ObjectFieldSelector;
  static constexpr auto kList = std::tuple(Field("apiVersion", &S::api_version, kOmitEmpty),
                                           Field("fieldPath", &S::field_path));
};

template <>
struct Fields<ResourceFieldSelector> {
  using S = ResourceFieldSelector;
  static constexpr auto kList =
      std::tuple(Field("containerName", &S::container_name, kOmitEmpty),
                 Field("resource", &S::resource), Field("divisor", &S::divisor, kOmitEmpty));
};

template <>
struct Fields<DownwardAPIVolumeFile> {
  using S = DownwardAPIVolumeFile;
  static constexpr auto kList =
      std::tuple(Field("path", &S::path), Field("fieldRef", &S::field_ref, kOmitEmpty),
                 Field("resourceFieldRef", &S::resource_field_ref, kOmitEmpty),
                 Field("mode", &S::mode, kOmitEmpty));
};

template <>
struct Fields<DownwardAPIVolumeSource> {
  using S = DownwardAPIVolumeSource;
  static constexpr auto kList = std::tuple(Field("items", &S::items, kOmitEmpty),
                                           Field("defaultMode", &S::default_mode, kOmitEmpty));
};

template <>
struct Fields<ConfigMapVolumeSource> {
  using S = ConfigMapVolumeSource;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name, kOmitEmpty), Field("items", &S::items, kOmitEmpty),
                 Field("defaultMode", &S::default_mode, kOmitEmpty),
                 Field("optional", &S::optional, kOmitEmpty));
};

template <>
struct Fields<SecretVolumeSource> {
  using S = SecretVolumeSource;
  static constexpr auto kList = std::tuple(Field("secretName", &S::secret_name, kOmitEmpty),
                                           Field("items", &S::items, kOmitEmpty),
                                           Field("defaultMode", &S::default_mode, kOmitEmpty),
                                           Field("optional", &S::optional, kOmitEmpty));
};

template <>
struct Fields<PersistentVolumeClaimVolumeSource> {
  using S = PersistentVolumeClaimVolumeSource;
  static constexpr auto kList =
      std::tuple(Field("claimName", &S::claim_name), Field("readOnly", &S::read_only, kOmitEmpty));
};

template <>
struct Fields<SecretProjection> {
  using S = SecretProjection;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name, kOmitEmpty), Field("items", &S::items, kOmitEmpty),
                 Field("optional", &S::optional, kOmitEmpty));
};

template <>
struct Fields<ConfigMapProjection> {
  using S = ConfigMapProjection;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name, kOmitEmpty), Field("items", &S::items, kOmitEmpty),
                 Field("optional", &S::optional, kOmitEmpty));
};

template <>
struct Fields<DownwardAPIProjection> {
  using S = DownwardAPIProjection;
  static constexpr auto kList = std::tuple(Field("items", &S::items, kOmitEmpty));
};

template <>
struct Fields<ServiceAccountTokenProjection> {
  using S = ServiceAccountTokenProjection;
  static constexpr auto kList = std::tuple(
      Field("audience", &S::audience, kOmitEmpty),
      Field("expirationSeconds", &S::expiration_seconds, kOmitEmpty), Field("path", &S::path));
};

template <>
struct Fields<VolumeProjection> {
  using S = VolumeProjection;
  static constexpr auto kList = std::tuple(
      Field("secret", &S::secret, kOmitEmpty), Field("downwardAPI", &S::downward_api, kOmitEmpty),
      Field("configMap", &S::config_map, kOmitEmpty),
      Field("serviceAccountToken", &S::service_account_token, kOmitEmpty));
};

template <>
struct Fields<ProjectedVolumeSource> {
  using S = ProjectedVolumeSource;
  static constexpr auto kList = std::tuple(Field("sources", &S::sources, kEmptyAsNull),
                                           Field("defaultMode", &S::default_mode, kOmitEmpty));
};

// Volume = name + the inline VolumeSource: typed members and opaque entries of other_sources
// interleaved in Go declaration order; a VolumeSource member not listed here is unknown.
template <>
struct Fields<Volume> {
  using S = Volume;
  static constexpr auto kList = std::tuple(
      Field("name", &S::name), Field("hostPath", &S::host_path, kOmitEmpty),
      Field("emptyDir", &S::empty_dir, kOmitEmpty),
      Entry("gcePersistentDisk", &S::other_sources, kOpaque),
      Entry("awsElasticBlockStore", &S::other_sources, kOpaque),
      Entry("gitRepo", &S::other_sources, kOpaque), Field("secret", &S::secret, kOmitEmpty),
      Entry("nfs", &S::other_sources, kOpaque), Entry("iscsi", &S::other_sources, kOpaque),
      Entry("glusterfs", &S::other_sources, kOpaque),
      Field("persistentVolumeClaim", &S::persistent_volume_claim, kOmitEmpty),
      Entry("rbd", &S::other_sources, kOpaque), Entry("flexVolume", &S::other_sources, kOpaque),
      Entry("cinder", &S::other_sources, kOpaque), Entry("cephfs", &S::other_sources, kOpaque),
      Entry("flocker", &S::other_sources, kOpaque),
      Field("downwardAPI", &S::downward_api, kOmitEmpty), Entry("fc", &S::other_sources, kOpaque),
      Entry("azureFile", &S::other_sources, kOpaque),
      Field("configMap", &S::config_map, kOmitEmpty),
      Entry("vsphereVolume", &S::other_sources, kOpaque),
      Entry("quobyte", &S::other_sources, kOpaque), Entry("azureDisk", &S::other_sources, kOpaque),
      Entry("photonPersistentDisk", &S::other_sources, kOpaque),
      Field("projected", &S::projected, kOmitEmpty),
      Entry("portworxVolume", &S::other_sources, kOpaque),
      Entry("scaleIO", &S::other_sources, kOpaque), Entry("storageos", &S::other_sources, kOpaque),
      Entry("csi", &S::other_sources, kOpaque), Entry("ephemeral", &S::other_sources, kOpaque));
};

// ---------------------------------------------------------------------------------------------
// Containers.

template <>
struct Fields<ContainerPort> {
  using S = ContainerPort;
  static constexpr auto kList = std::tuple(
      Field("name", &S::name, kOmitEmpty), Field("hostPort", &S::host_port, kOmitEmpty),
      Field("containerPort", &S::container_port), Field("protocol", &S::protocol, kOmitEmpty),
      Field("hostIP", &S::host_ip, kOmitEmpty));
};

template <>
struct Fields<ConfigMapEnvSource> {
  using S = ConfigMapEnvSource;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name, kOmitEmpty), Field("optional", &S::optional, kOmitEmpty));
};

template <>
struct Fields<SecretEnvSource> {
  using S = SecretEnvSource;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name, kOmitEmpty), Field("optional", &S::optional, kOmitEmpty));
};

template <>
struct Fields<EnvFromSource> {
  using S = EnvFromSource;
  static constexpr auto kList = std::tuple(Field("prefix", &S::prefix, kOmitEmpty),
                                           Field("configMapRef", &S::config_map_ref, kOmitEmpty),
                                           Field("secretRef", &S::secret_ref, kOmitEmpty));
};

template <>
struct Fields<ConfigMapKeySelector> {
  using S = ConfigMapKeySelector;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name, kOmitEmpty), Field("key", &S::key),
                 Field("optional", &S::optional, kOmitEmpty));
};

template <>
struct Fields<SecretKeySelector> {
  using S = SecretKeySelector;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name, kOmitEmpty), Field("key", &S::key),
                 Field("optional", &S::optional, kOmitEmpty));
};

template <>
struct Fields<EnvVarSource> {
  using S = EnvVarSource;
  static constexpr auto kList =
      std::tuple(Field("fieldRef", &S::field_ref, kOmitEmpty),
                 Field("resourceFieldRef", &S::resource_field_ref, kOmitEmpty),
                 Field("configMapKeyRef", &S::config_map_key_ref, kOmitEmpty),
                 Field("secretKeyRef", &S::secret_key_ref, kOmitEmpty));
};

template <>
struct Fields<EnvVar> {
  using S = EnvVar;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name), Field("value", &S::value, kOmitEmpty),
                 Field("valueFrom", &S::value_from, kOmitEmpty));
};

template <>
struct Fields<ResourceClaim> {
  using S = ResourceClaim;
  static constexpr auto kList = std::tuple(Field("name", &S::name));
};

template <>
struct Fields<ResourceRequirements> {
  using S = ResourceRequirements;
  static constexpr auto kList = std::tuple(Field("limits", &S::limits, kOmitEmpty),
                                           Field("requests", &S::requests, kOmitEmpty),
                                           Field("claims", &S::claims, kOmitEmpty));
};

template <>
struct Fields<ContainerResizePolicy> {
  using S = ContainerResizePolicy;
  static constexpr auto kList = std::tuple(Field("resourceName", &S::resource_name),
                                           Field("restartPolicy", &S::restart_policy));
};

template <>
struct Fields<VolumeMount> {
  using S = VolumeMount;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name), Field("readOnly", &S::read_only, kOmitEmpty),
                 Field("mountPath", &S::mount_path), Field("subPath", &S::sub_path, kOmitEmpty),
                 Field("mountPropagation", &S::mount_propagation, kOmitEmpty),
                 Field("subPathExpr", &S::sub_path_expr, kOmitEmpty));
};

template <>
struct Fields<VolumeDevice> {
  using S = VolumeDevice;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name), Field("devicePath", &S::device_path));
};

template <>
struct Fields<ExecAction> {
  using S = ExecAction;
  static constexpr auto kList = std::tuple(Field("command", &S::command, kOmitEmpty));
};

template <>
struct Fields<HTTPHeader> {
  using S = HTTPHeader;
  static constexpr auto kList = std::tuple(Field("name", &S::name), Field("value", &S::value));
};

template <>
struct Fields<HTTPGetAction> {
  using S = HTTPGetAction;
  static constexpr auto kList =
      std::tuple(Field("path", &S::path, kOmitEmpty), Field("port", &S::port),
                 Field("host", &S::host, kOmitEmpty), Field("scheme", &S::scheme, kOmitEmpty),
                 Field("httpHeaders", &S::http_headers, kOmitEmpty));
};

template <>
struct Fields<TCPSocketAction> {
  using S = TCPSocketAction;
  static constexpr auto kList =
      std::tuple(Field("port", &S::port), Field("host", &S::host, kOmitEmpty));
};

template <>
struct Fields<GRPCAction> {
  using S = GRPCAction;
  // service is a *string without omitempty upstream: null when unset.
  static constexpr auto kList = std::tuple(Field("port", &S::port), Field("service", &S::service));
};

// Probe = the inline ProbeHandler (flattened in the C++ struct) + the probe's own members.
template <>
struct Fields<Probe> {
  using S = Probe;
  static constexpr auto kList = std::tuple(
      Field("exec", &S::exec, kOmitEmpty), Field("httpGet", &S::http_get, kOmitEmpty),
      Field("tcpSocket", &S::tcp_socket, kOmitEmpty), Field("grpc", &S::grpc, kOmitEmpty),
      Field("initialDelaySeconds", &S::initial_delay_seconds, kOmitEmpty),
      Field("timeoutSeconds", &S::timeout_seconds, kOmitEmpty),
      Field("periodSeconds", &S::period_seconds, kOmitEmpty),
      Field("successThreshold", &S::success_threshold, kOmitEmpty),
      Field("failureThreshold", &S::failure_threshold, kOmitEmpty),
      Field("terminationGracePeriodSeconds", &S::termination_grace_period_seconds, kOmitEmpty));
};

template <>
struct Fields<LifecycleHandler> {
  using S = LifecycleHandler;
  static constexpr auto kList =
      std::tuple(Field("exec", &S::exec, kOmitEmpty), Field("httpGet", &S::http_get, kOmitEmpty),
                 Field("tcpSocket", &S::tcp_socket, kOmitEmpty));
};

template <>
struct Fields<Lifecycle> {
  using S = Lifecycle;
  static constexpr auto kList = std::tuple(Field("postStart", &S::post_start, kOmitEmpty),
                                           Field("preStop", &S::pre_stop, kOmitEmpty));
};

template <>
struct Fields<Capabilities> {
  using S = Capabilities;
  static constexpr auto kList =
      std::tuple(Field("add", &S::add, kOmitEmpty), Field("drop", &S::drop, kOmitEmpty));
};

template <>
struct Fields<SELinuxOptions> {
  using S = SELinuxOptions;
  static constexpr auto kList =
      std::tuple(Field("user", &S::user, kOmitEmpty), Field("role", &S::role, kOmitEmpty),
                 Field("type", &S::type, kOmitEmpty), Field("level", &S::level, kOmitEmpty));
};

template <>
struct Fields<SeccompProfile> {
  using S = SeccompProfile;
  static constexpr auto kList = std::tuple(
      Field("type", &S::type), Field("localhostProfile", &S::localhost_profile, kOmitEmpty));
};

template <>
struct Fields<SecurityContext> {
  using S = SecurityContext;
  static constexpr auto kList =
      std::tuple(Field("capabilities", &S::capabilities, kOmitEmpty),
                 Field("privileged", &S::privileged, kOmitEmpty),
                 Field("seLinuxOptions", &S::se_linux_options, kOmitEmpty),
                 Field("windowsOptions", &S::windows_options, kOpaque),
                 Field("runAsUser", &S::run_as_user, kOmitEmpty),
                 Field("runAsGroup", &S::run_as_group, kOmitEmpty),
                 Field("runAsNonRoot", &S::run_as_non_root, kOmitEmpty),
                 Field("readOnlyRootFilesystem", &S::read_only_root_filesystem, kOmitEmpty),
                 Field("allowPrivilegeEscalation", &S::allow_privilege_escalation, kOmitEmpty),
                 Field("procMount", &S::proc_mount, kOmitEmpty),
                 Field("seccompProfile", &S::seccomp_profile, kOmitEmpty));
};

template <>
struct Fields<Container> {
  using S = Container;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name), Field("image", &S::image, kOmitEmpty),
                 Field("command", &S::command, kOmitEmpty), Field("args", &S::args, kOmitEmpty),
                 Field("workingDir", &S::working_dir, kOmitEmpty),
                 Field("ports", &S::ports, kOmitEmpty), Field("envFrom", &S::env_from, kOmitEmpty),
                 Field("env", &S::env, kOmitEmpty), Field("resources", &S::resources, kOmitEmpty),
                 Field("resizePolicy", &S::resize_policy, kOmitEmpty),
                 Field("restartPolicy", &S::restart_policy, kOmitEmpty),
                 Field("volumeMounts", &S::volume_mounts, kOmitEmpty),
                 Field("volumeDevices", &S::volume_devices, kOmitEmpty),
                 Field("livenessProbe", &S::liveness_probe, kOmitEmpty),
                 Field("readinessProbe", &S::readiness_probe, kOmitEmpty),
                 Field("startupProbe", &S::startup_probe, kOmitEmpty),
                 Field("lifecycle", &S::lifecycle, kOmitEmpty),
                 Field("terminationMessagePath", &S::termination_message_path, kOmitEmpty),
                 Field("terminationMessagePolicy", &S::termination_message_policy, kOmitEmpty),
                 Field("imagePullPolicy", &S::image_pull_policy, kOmitEmpty),
                 Field("securityContext", &S::security_context, kOmitEmpty),
                 Field("stdin", &S::stdin_, kOmitEmpty),
                 Field("stdinOnce", &S::stdin_once, kOmitEmpty), Field("tty", &S::tty, kOmitEmpty));
};

// EphemeralContainer embeds EphemeralContainerCommon (the Container members).
template <>
struct Fields<EphemeralContainer> {
  using S = EphemeralContainer;
  static constexpr auto kList = std::tuple(
      Inline(&S::common), Field("targetContainerName", &S::target_container_name, kOmitEmpty));
};

// ---------------------------------------------------------------------------------------------
// Pod spec.

template <>
struct Fields<Sysctl> {
  using S = Sysctl;
  static constexpr auto kList = std::tuple(Field("name", &S::name), Field("value", &S::value));
};

template <>
struct Fields<PodSecurityContext> {
  using S = PodSecurityContext;
  static constexpr auto kList = std::tuple(
      Field("seLinuxOptions", &S::se_linux_options, kOmitEmpty),
      Field("windowsOptions", &S::windows_options, kOpaque),
      Field("runAsUser", &S::run_as_user, kOmitEmpty),
      Field("runAsGroup", &S::run_as_group, kOmitEmpty),
      Field("runAsNonRoot", &S::run_as_non_root, kOmitEmpty),
      Field("supplementalGroups", &S::supplemental_groups, kOmitEmpty),
      Field("fsGroup", &S::fs_group, kOmitEmpty), Field("sysctls", &S::sysctls, kOmitEmpty),
      Field("fsGroupChangePolicy", &S::fs_group_change_policy, kOmitEmpty),
      Field("seccompProfile", &S::seccomp_profile, kOmitEmpty));
};

template <>
struct Fields<Toleration> {
  using S = Toleration;
  static constexpr auto kList =
      std::tuple(Field("key", &S::key, kOmitEmpty), Field("operator", &S::operator_, kOmitEmpty),
                 Field("value", &S::value, kOmitEmpty), Field("effect", &S::effect, kOmitEmpty),
                 Field("tolerationSeconds", &S::toleration_seconds, kOmitEmpty));
};

template <>
struct Fields<HostAlias> {
  using S = HostAlias;
  static constexpr auto kList =
      std::tuple(Field("ip", &S::ip, kOmitEmpty), Field("hostnames", &S::hostnames, kOmitEmpty));
};

template <>
struct Fields<PodDNSConfigOption> {
  using S = PodDNSConfigOption;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name, kOmitEmpty), Field("value", &S::value, kOmitEmpty));
};

template <>
struct Fields<PodDNSConfig> {
  using S = PodDNSConfig;
  static constexpr auto kList = std::tuple(Field("nameservers", &S::nameservers, kOmitEmpty),
                                           Field("searches", &S::searches, kOmitEmpty),
                                           Field("options", &S::options, kOmitEmpty));
};

template <>
struct Fields<PodReadinessGate> {
  using S = PodReadinessGate;
  static constexpr auto kList = std::tuple(Field("conditionType", &S::condition_type));
};

template <>
struct Fields<PodOS> {
  using S = PodOS;
  static constexpr auto kList = std::tuple(Field("name", &S::name));
};

template <>
struct Fields<PodSchedulingGate> {
  using S = PodSchedulingGate;
  static constexpr auto kList = std::tuple(Field("name", &S::name));
};

template <>
struct Fields<ClaimSource> {
  using S = ClaimSource;
  static constexpr auto kList =
      std::tuple(Field("resourceClaimName", &S::resource_claim_name, kOmitEmpty),
                 Field("resourceClaimTemplateName", &S::resource_claim_template_name, kOmitEmpty));
};

template <>
struct Fields<PodResourceClaim> {
  using S = PodResourceClaim;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name), Field("source", &S::source, kOmitEmpty));
};

template <>
struct Fields<PodSpec> {
  using S = PodSpec;
  static constexpr auto kList = std::tuple(
      Field("volumes", &S::volumes, kOmitEmpty),
      Field("initContainers", &S::init_containers, kOmitEmpty),
      Field("containers", &S::containers, kEmptyAsNull),
      Field("ephemeralContainers", &S::ephemeral_containers, kOmitEmpty),
      Field("restartPolicy", &S::restart_policy, kOmitEmpty),
      Field("terminationGracePeriodSeconds", &S::termination_grace_period_seconds, kOmitEmpty),
      Field("activeDeadlineSeconds", &S::active_deadline_seconds, kOmitEmpty),
      Field("dnsPolicy", &S::dns_policy, kOmitEmpty),
      Field("nodeSelector", &S::node_selector, kOmitEmpty),
      Field("serviceAccountName", &S::service_account_name, kOmitEmpty),
      Field("serviceAccount", &S::service_account_name, kOmitEmpty | kFallback),
      Field("automountServiceAccountToken", &S::automount_service_account_token, kOmitEmpty),
      Field("nodeName", &S::node_name, kOmitEmpty),
      Field("hostNetwork", &S::host_network, kOmitEmpty),
      Field("hostPID", &S::host_pid, kOmitEmpty), Field("hostIPC", &S::host_ipc, kOmitEmpty),
      Field("shareProcessNamespace", &S::share_process_namespace, kOmitEmpty),
      Field("securityContext", &S::security_context, kOmitEmpty),
      Field("imagePullSecrets", &S::image_pull_secrets, kOmitEmpty),
      Field("hostname", &S::hostname, kOmitEmpty), Field("subdomain", &S::subdomain, kOmitEmpty),
      Field("affinity", &S::affinity, kOpaque),
      Field("schedulerName", &S::scheduler_name, kOmitEmpty),
      Field("tolerations", &S::tolerations, kOmitEmpty),
      Field("hostAliases", &S::host_aliases, kOmitEmpty),
      Field("priorityClassName", &S::priority_class_name, kOmitEmpty),
      Field("priority", &S::priority, kOmitEmpty), Field("dnsConfig", &S::dns_config, kOmitEmpty),
      Field("readinessGates", &S::readiness_gates, kOmitEmpty),
      Field("runtimeClassName", &S::runtime_class_name, kOmitEmpty),
      Field("enableServiceLinks", &S::enable_service_links, kOmitEmpty),
      Field("preemptionPolicy", &S::preemption_policy, kOmitEmpty),
      Field("overhead", &S::overhead, kOmitEmpty),
      Field("topologySpreadConstraints", &S::topology_spread_constraints, kOpaque),
      Field("setHostnameAsFQDN", &S::set_hostname_as_fqdn, kOmitEmpty),
      Field("os", &S::os, kOmitEmpty), Field("hostUsers", &S::host_users, kOmitEmpty),
      Field("schedulingGates", &S::scheduling_gates, kOmitEmpty),
      Field("resourceClaims", &S::resource_claims, kOmitEmpty));
};

// ---------------------------------------------------------------------------------------------
// Pod status.

template <>
struct Fields<PodCondition> {
  using S = PodCondition;
  static constexpr auto kList = std::tuple(
      Field("type", &S::type), Field("status", &S::status),
      Field("lastProbeTime", &S::last_probe_time, kOmitEmpty),
      Field("lastTransitionTime", &S::last_transition_time, kOmitEmpty),
      Field("reason", &S::reason, kOmitEmpty), Field("message", &S::message, kOmitEmpty));
};

template <>
struct Fields<PodIP> {
  using S = PodIP;
  static constexpr auto kList = std::tuple(Field("ip", &S::ip, kOmitEmpty));
};

template <>
struct Fields<HostIP> {
  using S = HostIP;
  static constexpr auto kList = std::tuple(Field("ip", &S::ip, kOmitEmpty));
};

template <>
struct Fields<ContainerStateWaiting> {
  using S = ContainerStateWaiting;
  static constexpr auto kList = std::tuple(Field("reason", &S::reason, kOmitEmpty),
                                           Field("message", &S::message, kOmitEmpty));
};

template <>
struct Fields<ContainerStateRunning> {
  using S = ContainerStateRunning;
  static constexpr auto kList = std::tuple(Field("startedAt", &S::started_at, kOmitEmpty));
};

template <>
struct Fields<ContainerStateTerminated> {
  using S = ContainerStateTerminated;
  static constexpr auto kList =
      std::tuple(Field("exitCode", &S::exit_code), Field("signal", &S::signal, kOmitEmpty),
                 Field("reason", &S::reason, kOmitEmpty), Field("message", &S::message, kOmitEmpty),
                 Field("startedAt", &S::started_at, kOmitEmpty),
                 Field("finishedAt", &S::finished_at, kOmitEmpty),
                 Field("containerID", &S::container_id, kOmitEmpty));
};

template <>
struct Fields<ContainerState> {
  using S = ContainerState;
  static constexpr auto kList = std::tuple(Field("waiting", &S::waiting, kOmitEmpty),
                                           Field("running", &S::running, kOmitEmpty),
                                           Field("terminated", &S::terminated, kOmitEmpty));
};

template <>
struct Fields<ContainerStatus> {
  using S = ContainerStatus;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name), Field("state", &S::state, kOmitEmpty),
                 Field("lastState", &S::last_state, kOmitEmpty), Field("ready", &S::ready),
                 Field("restartCount", &S::restart_count), Field("image", &S::image),
                 Field("imageID", &S::image_id), Field("containerID", &S::container_id, kOmitEmpty),
                 Field("started", &S::started, kOmitEmpty),
                 Field("allocatedResources", &S::allocated_resources, kOmitEmpty),
                 Field("resources", &S::resources, kOmitEmpty));
};

template <>
struct Fields<PodStatus> {
  using S = PodStatus;
  static constexpr auto kList = std::tuple(
      Field("phase", &S::phase, kOmitEmpty), Field("conditions", &S::conditions, kOmitEmpty),
      Field("message", &S::message, kOmitEmpty), Field("reason", &S::reason, kOmitEmpty),
      Field("nominatedNodeName", &S::nominated_node_name, kOmitEmpty),
      Field("hostIP", &S::host_ip, kOmitEmpty), Field("hostIPs", &S::host_ips, kOmitEmpty),
      Field("podIP", &S::pod_ip, kOmitEmpty), Field("podIPs", &S::pod_ips, kOmitEmpty),
      Field("startTime", &S::start_time, kOmitEmpty),
      Field("initContainerStatuses", &S::init_container_statuses, kOmitEmpty),
      Field("containerStatuses", &S::container_statuses, kOmitEmpty),
      Field("qosClass", &S::qos_class, kOmitEmpty),
      Field("ephemeralContainerStatuses", &S::ephemeral_container_statuses, kOmitEmpty),
      Field("resize", &S::resize, kOmitEmpty),
      Field("resourceClaimStatuses", &S::resource_claim_statuses, kOpaque));
};

template <>
struct Fields<Pod> {
  using S = Pod;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec, kOmitEmpty),
      Field("status", &S::status, kOmitEmpty));
};

}  // namespace kubelet::api::codec

#endif  // KUBELET_API_POD_FIELDS_H_
