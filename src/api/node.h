// core/v1 Node (upstream k8s.io/api/core/v1, v1.28) with its JSON field tables (codec.h).
//
// The kubelet registers its Node and updates its status (GET, modify, PUT/PATCH), so Node, its
// spec, status and node info keep members they do not model in `unknown` and send them back.
// Deprecated or never-interpreted parts (spec.configSource, status.config) are RawJson.
// Encode(node) / Decode<Node>(body) come from codec.h.
// Value types; thread-compatible. Constant tables; thread-safe.
#ifndef KUBELET_API_NODE_H_
#define KUBELET_API_NODE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "api/codec.h"
#include "api/meta.h"
#include "api/meta_codec.h"
#include "api/quantity.h"

namespace kubelet::api {

// Same alias as pod.h (v1.ResourceList); redeclaring it to the same type is allowed.
using ResourceList = std::map<std::string, Quantity>;

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
  std::optional<Time> time_added;
  bool operator==(const Taint&) const = default;
};

struct NodeSpec {
  std::string pod_cidr;                // podCIDR
  std::vector<std::string> pod_cidrs;  // podCIDRs
  std::string provider_id;             // providerID
  bool unschedulable = false;
  std::vector<Taint> taints;
  RawJson config_source;    // *NodeConfigSource (deprecated)
  std::string external_id;  // externalID (deprecated)
  RawJson unknown;
  bool operator==(const NodeSpec&) const = default;
};

struct NodeCondition {
  std::string type;    // Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable
  std::string status;  // True, False, Unknown
  Time last_heartbeat_time;
  Time last_transition_time;
  std::string reason;
  std::string message;
  bool operator==(const NodeCondition&) const = default;
};

struct NodeAddress {
  std::string type;  // Hostname, InternalIP, ExternalIP, InternalDNS, ExternalDNS
  std::string address;
  bool operator==(const NodeAddress&) const = default;
};

struct DaemonEndpoint {
  int32_t port = 0;  // "Port" (capitalized upstream, for backward compatibility)
  bool operator==(const DaemonEndpoint&) const = default;
};

struct NodeDaemonEndpoints {
  DaemonEndpoint kubelet_endpoint;
  bool operator==(const NodeDaemonEndpoints&) const = default;
};

struct NodeSystemInfo {
  std::string machine_id;   // machineID
  std::string system_uuid;  // systemUUID
  std::string boot_id;      // bootID
  std::string kernel_version;
  std::string os_image;
  std::string container_runtime_version;
  std::string kubelet_version;
  std::string kube_proxy_version;
  std::string operating_system;
  std::string architecture;
  RawJson unknown;
  bool operator==(const NodeSystemInfo&) const = default;
};

struct ContainerImage {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
  bool operator==(const ContainerImage&) const = default;
};

struct AttachedVolume {
  std::string name;
  std::string device_path;
  bool operator==(const AttachedVolume&) const = default;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
  std::string phase;  // deprecated, never set by the kubelet
  std::vector<NodeCondition> conditions;
  std::vector<NodeAddress> addresses;
  NodeDaemonEndpoints daemon_endpoints;
  NodeSystemInfo node_info;
  std::vector<ContainerImage> images;
  std::vector<std::string> volumes_in_use;
  std::vector<AttachedVolume> volumes_attached;
  RawJson config;  // *NodeConfigStatus (deprecated)
  RawJson unknown;
  bool operator==(const NodeStatus&) const = default;
};

struct Node {
  std::string kind = "Node";
  std::string api_version = "v1";
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;
  RawJson unknown;
  bool operator==(const Node&) const = default;
};

using NodeList = List<Node>;

inline constexpr char kNodeReady[] = "Ready";
inline constexpr char kNodeMemoryPressure[] = "MemoryPressure";
inline constexpr char kNodeDiskPressure[] = "DiskPressure";
inline constexpr char kNodePIDPressure[] = "PIDPressure";
inline constexpr char kNodeNetworkUnavailable[] = "NetworkUnavailable";
inline constexpr char kConditionTrue[] = "True";
inline constexpr char kConditionFalse[] = "False";
inline constexpr char kConditionUnknown[] = "Unknown";
inline constexpr char kNodeHostName[] = "Hostname";
inline constexpr char kNodeInternalIP[] = "InternalIP";
inline constexpr char kNodeExternalIP[] = "ExternalIP";
inline constexpr char kTaintNoSchedule[] = "NoSchedule";
inline constexpr char kTaintPreferNoSchedule[] = "PreferNoSchedule";
inline constexpr char kTaintNoExecute[] = "NoExecute";

}  // namespace kubelet::api

namespace kubelet::api::codec {

template <>
struct Fields<Taint> {
  using S = Taint;
  static constexpr std::string_view kGoName = "Taint";
  static constexpr auto kList =
      std::tuple(Field("key", &S::key), Field("value", &S::value, kOmitEmpty),
                 Field("effect", &S::effect, 0, "v1.TaintEffect"),
                 Field("timeAdded", &S::time_added, kOmitEmpty | kGoPointer, "v1.Time"));
};

template <>
struct Fields<NodeSpec> {
  using S = NodeSpec;
  static constexpr auto kList = std::tuple(
      Field("podCIDR", &S::pod_cidr, kOmitEmpty), Field("podCIDRs", &S::pod_cidrs, kOmitEmpty),
      Field("providerID", &S::provider_id, kOmitEmpty),
      Field("unschedulable", &S::unschedulable, kOmitEmpty),
      Field("taints", &S::taints, kOmitEmpty), Field("configSource", &S::config_source, kOmitEmpty),
      Field("externalID", &S::external_id, kOmitEmpty));
};

template <>
struct Fields<NodeCondition> {
  using S = NodeCondition;
  static constexpr auto kList = std::tuple(
      Field("type", &S::type), Field("status", &S::status),
      Field("lastHeartbeatTime", &S::last_heartbeat_time, kOmitEmpty),
      Field("lastTransitionTime", &S::last_transition_time, kOmitEmpty),
      Field("reason", &S::reason, kOmitEmpty), Field("message", &S::message, kOmitEmpty));
};

template <>
struct Fields<NodeAddress> {
  using S = NodeAddress;
  static constexpr auto kList = std::tuple(Field("type", &S::type), Field("address", &S::address));
};

template <>
struct Fields<DaemonEndpoint> {
  static constexpr auto kList = std::tuple(Field("Port", &DaemonEndpoint::port));
};

template <>
struct Fields<NodeDaemonEndpoints> {
  static constexpr auto kList =
      std::tuple(Field("kubeletEndpoint", &NodeDaemonEndpoints::kubelet_endpoint, kOmitEmpty));
};

template <>
struct Fields<NodeSystemInfo> {
  using S = NodeSystemInfo;
  static constexpr auto kList = std::tuple(
      Field("machineID", &S::machine_id), Field("systemUUID", &S::system_uuid),
      Field("bootID", &S::boot_id), Field("kernelVersion", &S::kernel_version),
      Field("osImage", &S::os_image),
      Field("containerRuntimeVersion", &S::container_runtime_version),
      Field("kubeletVersion", &S::kubelet_version),
      Field("kubeProxyVersion", &S::kube_proxy_version),
      Field("operatingSystem", &S::operating_system), Field("architecture", &S::architecture));
};

template <>
struct Fields<ContainerImage> {
  using S = ContainerImage;
  static constexpr auto kList =
      std::tuple(Field("names", &S::names), Field("sizeBytes", &S::size_bytes, kOmitEmpty));
};

template <>
struct Fields<AttachedVolume> {
  using S = AttachedVolume;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name), Field("devicePath", &S::device_path));
};

template <>
struct Fields<NodeStatus> {
  using S = NodeStatus;
  static constexpr auto kList = std::tuple(
      Field("capacity", &S::capacity, kOmitEmpty),
      Field("allocatable", &S::allocatable, kOmitEmpty), Field("phase", &S::phase, kOmitEmpty),
      Field("conditions", &S::conditions, kOmitEmpty),
      Field("addresses", &S::addresses, kOmitEmpty),
      Field("daemonEndpoints", &S::daemon_endpoints, kOmitEmpty),
      Field("nodeInfo", &S::node_info, kOmitEmpty), Field("images", &S::images, kOmitEmpty),
      Field("volumesInUse", &S::volumes_in_use, kOmitEmpty),
      Field("volumesAttached", &S::volumes_attached, kOmitEmpty),
      Field("config", &S::config, kOmitEmpty));
};

template <>
struct Fields<Node> {
  using S = Node;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec, kOmitEmpty),
      Field("status", &S::status, kOmitEmpty));
};

}  // namespace kubelet::api::codec

#endif  // KUBELET_API_NODE_H_
