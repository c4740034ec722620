// core/v1 ObjectReference, Service, ConfigMap and Secret (upstream k8s.io/api/core/v1, v1.28) with
// their JSON field tables (codec.h).
//
// Service carries what service environment variables need (cluster IPs, ports, type); the rest of
// the spec is modelled too, except sessionAffinityConfig (RawJson). ConfigMap.binaryData and
// Secret.data are Go []byte: std::string values with the kBase64 option, so they hold the decoded
// bytes and go over the wire as base64.
// Value types; thread-compatible. Constant tables; thread-safe.
#ifndef KUBELET_API_CORE_MISC_H_
#define KUBELET_API_CORE_MISC_H_

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

struct ObjectReference {
  std::string kind;
  std::string namespace_;  // "namespace"
  std::string name;
  std::string uid;
  std::string api_version;  // apiVersion
  std::string resource_version;
  std::string field_path;  // e.g. "spec.containers{web}"
  bool operator==(const ObjectReference&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Service.

struct ServicePort {
  std::string name;
  std::string protocol;  // TCP (default), UDP, SCTP
  std::optional<std::string> app_protocol;
  int32_t port = 0;
  IntOrString target_port;  // always written (a Go struct): 0 when unset
  int32_t node_port = 0;
  bool operator==(const ServicePort&) const = default;
};

struct ServiceSpec {
  std::vector<ServicePort> ports;
  StringMap selector;
  std::string cluster_ip;                 // clusterIP: "", "None" (headless) or an address
  std::vector<std::string> cluster_ips;   // clusterIPs
  std::string type;                       // ClusterIP, NodePort, LoadBalancer, ExternalName
  std::vector<std::string> external_ips;  // externalIPs
  std::string session_affinity;
  std::string load_balancer_ip;  // loadBalancerIP
  std::vector<std::string> load_balancer_source_ranges;
  std::string external_name;
  std::string external_traffic_policy;
  int32_t health_check_node_port = 0;
  bool publish_not_ready_addresses = false;
  RawJson session_affinity_config;
  std::vector<std::string> ip_families;         // ipFamilies
  std::optional<std::string> ip_family_policy;  // ipFamilyPolicy
  std::optional<bool> allocate_load_balancer_node_ports;
  std::optional<std::string> load_balancer_class;
  std::optional<std::string> internal_traffic_policy;
  RawJson unknown;
  bool operator==(const ServiceSpec&) const = default;
};

struct LoadBalancerStatus {
  std::vector<RawJson> ingress;
  bool operator==(const LoadBalancerStatus&) const = default;
};

struct ServiceStatus {
  LoadBalancerStatus load_balancer;
  std::vector<RawJson> conditions;
  bool operator==(const ServiceStatus&) const = default;
};

struct Service {
  std::string kind = "Service";
  std::string api_version = "v1";
  ObjectMeta metadata;
  ServiceSpec spec;
  ServiceStatus status;
  bool operator==(const Service&) const = default;
};

inline constexpr char kClusterIPNone[] = "None";
inline constexpr char kServiceTypeExternalName[] = "ExternalName";

// ---------------------------------------------------------------------------------------------
// ConfigMap and Secret.

struct ConfigMap {
  std::string kind = "ConfigMap";
  std::string api_version = "v1";
  ObjectMeta metadata;
  std::optional<bool> immutable;
  StringMap data;
  std::map<std::string, std::string> binary_data;  // bytes (base64 on the wire)
  bool operator==(const ConfigMap&) const = default;
};

struct Secret {
  std::string kind = "Secret";
  std::string api_version = "v1";
  ObjectMeta metadata;
  std::optional<bool> immutable;
  std::map<std::string, std::string> data;  // bytes (base64 on the wire)
  StringMap string_data;                    // write-only; the API server folds it into data
  std::string type;                         // Opaque, kubernetes.io/service-account-token, ...
  bool operator==(const Secret&) const = default;
};

}  // namespace kubelet::api

namespace kubelet::api::codec {

template <>
struct Fields<ObjectReference> {
  using S = ObjectReference;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("namespace", &S::namespace_, kOmitEmpty),
      Field("name", &S::name, kOmitEmpty), Field("uid", &S::uid, kOmitEmpty),
      Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("resourceVersion", &S::resource_version, kOmitEmpty),
      Field("fieldPath", &S::field_path, kOmitEmpty));
};

template <>
struct Fields<ServicePort> {
  using S = ServicePort;
  static constexpr auto kList =
      std::tuple(Field("name", &S::name, kOmitEmpty), Field("protocol", &S::protocol, kOmitEmpty),
                 Field("appProtocol", &S::app_protocol, kOmitEmpty), Field("port", &S::port),
                 Field("targetPort", &S::target_port, kOmitEmpty),
                 Field("nodePort", &S::node_port, kOmitEmpty));
};

template <>
struct Fields<ServiceSpec> {
  using S = ServiceSpec;
  static constexpr auto kList = std::tuple(
      Field("ports", &S::ports, kOmitEmpty), Field("selector", &S::selector, kOmitEmpty),
      Field("clusterIP", &S::cluster_ip, kOmitEmpty),
      Field("clusterIPs", &S::cluster_ips, kOmitEmpty), Field("type", &S::type, kOmitEmpty),
      Field("externalIPs", &S::external_ips, kOmitEmpty),
      Field("sessionAffinity", &S::session_affinity, kOmitEmpty),
      Field("loadBalancerIP", &S::load_balancer_ip, kOmitEmpty),
      Field("loadBalancerSourceRanges", &S::load_balancer_source_ranges, kOmitEmpty),
      Field("externalName", &S::external_name, kOmitEmpty),
      Field("externalTrafficPolicy", &S::external_traffic_policy, kOmitEmpty),
      Field("healthCheckNodePort", &S::health_check_node_port, kOmitEmpty),
      Field("publishNotReadyAddresses", &S::publish_not_ready_addresses, kOmitEmpty),
      Field("sessionAffinityConfig", &S::session_affinity_config, kOmitEmpty),
      Field("ipFamilies", &S::ip_families, kOmitEmpty),
      Field("ipFamilyPolicy", &S::ip_family_policy, kOmitEmpty),
      Field("allocateLoadBalancerNodePorts", &S::allocate_load_balancer_node_ports, kOmitEmpty),
      Field("loadBalancerClass", &S::load_balancer_class, kOmitEmpty),
      Field("internalTrafficPolicy", &S::internal_traffic_policy, kOmitEmpty));
};

template <>
struct Fields<LoadBalancerStatus> {
  static constexpr auto kList =
      std::tuple(Field("ingress", &LoadBalancerStatus::ingress, kOmitEmpty));
};

template <>
struct Fields<ServiceStatus> {
  using S = ServiceStatus;
  static constexpr auto kList = std::tuple(Field("loadBalancer", &S::load_balancer, kOmitEmpty),
                                           Field("conditions", &S::conditions, kOmitEmpty));
};

template <>
struct Fields<Service> {
  using S = Service;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec, kOmitEmpty),
      Field("status", &S::status, kOmitEmpty));
};

template <>
struct Fields<ConfigMap> {
  using S = ConfigMap;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata, kOmitEmpty), Field("immutable", &S::immutable, kOmitEmpty),
      Field("data", &S::data, kOmitEmpty),
      Field("binaryData", &S::binary_data, kOmitEmpty | kBase64));
};

template <>
struct Fields<Secret> {
  using S = Secret;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata, kOmitEmpty), Field("immutable", &S::immutable, kOmitEmpty),
      Field("data", &S::data, kOmitEmpty | kBase64),
      Field("stringData", &S::string_data, kOmitEmpty), Field("type", &S::type, kOmitEmpty));
};

}  // namespace kubelet::api::codec

#endif  // KUBELET_API_CORE_MISC_H_
