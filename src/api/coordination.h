// coordination.k8s.io/v1 Lease (upstream v1.28) with its JSON field tables (codec.h): the node
// heartbeat the kubelet renews in kube-node-lease. Times are MicroTime on the wire.
// Value types; thread-compatible. Constant tables; thread-safe.
#ifndef KUBELET_API_COORDINATION_H_
#define KUBELET_API_COORDINATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "api/codec.h"
#include "api/meta.h"
#include "api/meta_codec.h"

namespace kubelet::api {

struct LeaseSpec {
  std::optional<std::string> holder_identity;
  std::optional<int32_t> lease_duration_seconds;
  std::optional<MicroTime> acquire_time;
  std::optional<MicroTime> renew_time;
  std::optional<int32_t> lease_transitions;
  RawJson unknown;
  bool operator==(const LeaseSpec&) const = default;
};

struct Lease {
  std::string kind = "Lease";
  std::string api_version = "coordination.k8s.io/v1";
  ObjectMeta metadata;
  LeaseSpec spec;
  RawJson unknown;
  bool operator==(const Lease&) const = default;
};

inline constexpr char kNodeLeaseNamespace[] = "kube-node-lease";

}  // namespace kubelet::api

namespace kubelet::api::codec {

template <>
struct Fields<LeaseSpec> {
  using S = LeaseSpec;
  static constexpr auto kList =
      std::tuple(Field("holderIdentity", &S::holder_identity, kOmitEmpty),
                 Field("leaseDurationSeconds", &S::lease_duration_seconds, kOmitEmpty),
                 Field("acquireTime", &S::acquire_time, kOmitEmpty),
                 Field("renewTime", &S::renew_time, kOmitEmpty),
                 Field("leaseTransitions", &S::lease_transitions, kOmitEmpty));
};

template <>
struct Fields<Lease> {
  using S = Lease;
  static constexpr auto kList = std::tuple(
      Field("kind", &S::kind, kOmitEmpty), Field("apiVersion", &S::api_version, kOmitEmpty),
      Field("metadata", &S::metadata, kOmitEmpty), Field("spec", &S::spec, kOmitEmpty));
};

}  // namespace kubelet::api::codec

#endif  // KUBELET_API_COORDINATION_H_
