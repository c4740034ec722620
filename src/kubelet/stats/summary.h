// The stats/v1alpha1 Summary (upstream k8s.io/kubelet/pkg/apis/stats/v1alpha1) as plain values,
// and its JSON encoding with upstream's field names.
//
// Contract: every figure is optional; an unset figure is left out of the JSON (upstream's
// pointer fields with omitempty). Times encode as metav1.Time (RFC 3339, UTC, seconds); an unset
// time (absl::InfinitePast) encodes as null where upstream's field is not omitempty.
// The extra members marked "not encoded" carry what /metrics/cadvisor needs besides the Summary.
// Thread-safety: plain values. Ownership: values.
#ifndef KUBELET_KUBELET_STATS_SUMMARY_H_
#define KUBELET_KUBELET_STATS_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace kubelet::stats {

struct CPUStats {
  absl::Time time = absl::InfinitePast();
  std::optional<uint64_t> usage_nano_cores;
  std::optional<uint64_t> usage_core_nano_seconds;
};

struct MemoryStats {
  absl::Time time = absl::InfinitePast();
  std::optional<uint64_t> available_bytes;
  std::optional<uint64_t> usage_bytes;
  std::optional<uint64_t> working_set_bytes;
  std::optional<uint64_t> rss_bytes;
  std::optional<uint64_t> page_faults;
  std::optional<uint64_t> major_page_faults;
};

struct InterfaceStats {
  std::string name;
  std::optional<uint64_t> rx_bytes;
  std::optional<uint64_t> rx_errors;
  std::optional<uint64_t> tx_bytes;
  std::optional<uint64_t> tx_errors;
};

// The default interface inline (as upstream embeds it) plus every interface.
struct NetworkStats {
  absl::Time time = absl::InfinitePast();
  InterfaceStats default_interface;
  std::vector<InterfaceStats> interfaces;
};

struct FsStats {
  absl::Time time = absl::InfinitePast();
  std::optional<uint64_t> available_bytes;
  std::optional<uint64_t> capacity_bytes;
  std::optional<uint64_t> used_bytes;
  std::optional<uint64_t> inodes_free;
  std::optional<uint64_t> inodes;
  std::optional<uint64_t> inodes_used;
  // Not encoded: a path on the file system the figures describe ("" when unknown), for
  // /metrics/cadvisor's device label.
  std::string path;
};

struct PVCReference {
  std::string name;
  std::string namespace_;
};

struct VolumeStats {
  std::string name;
  FsStats fs;
  std::optional<PVCReference> pvc_ref;  // pvcRef: claim-backed volumes
  std::optional<bool> abnormal;         // volumeHealthStats.abnormal
};

struct ContainerStats {
  std::string name;
  absl::Time start_time = absl::InfinitePast();
  std::optional<CPUStats> cpu;
  std::optional<MemoryStats> memory;
  std::optional<FsStats> rootfs;
  std::optional<FsStats> logs;
  // Not encoded: runtime id, image and cgroup path (for /metrics/cadvisor).
  std::string id;
  std::string image;
  std::string cgroup;
};

struct PodReference {
  std::string name;
  std::string namespace_;
  std::string uid;
};

struct PodStats {
  PodReference pod_ref;
  absl::Time start_time = absl::InfinitePast();
  std::vector<ContainerStats> containers;
  std::optional<CPUStats> cpu;
  std::optional<MemoryStats> memory;
  std::optional<NetworkStats> network;
  std::vector<VolumeStats> volumes;
  std::optional<FsStats> ephemeral_storage;
  std::optional<uint64_t> process_count;
  // Not encoded: the pod's cgroup path ("" when unknown).
  std::string cgroup;
};

struct RlimitStats {
  absl::Time time = absl::InfinitePast();
  std::optional<int64_t> max_pid;
  std::optional<int64_t> num_of_running_processes;
};

struct NodeStats {
  std::string node_name;
  std::vector<ContainerStats> system_containers;
  absl::Time start_time = absl::InfinitePast();
  std::optional<CPUStats> cpu;
  std::optional<MemoryStats> memory;
  std::optional<NetworkStats> network;
  std::optional<FsStats> fs;
  std::optional<FsStats> image_fs;  // "runtime": {"imageFs": ...}
  std::optional<RlimitStats> rlimit;
};

struct Summary {
  NodeStats node;
  std::vector<PodStats> pods;
};

// The Summary as upstream's JSON document ({"node": {...}, "pods": [...]}).
std::string SummaryToJson(const Summary& summary);

// metav1.Time's wire form: "2006-01-02T15:04:05Z".
std::string FormatTime(absl::Time t);

}  // namespace kubelet::stats

#endif  // KUBELET_KUBELET_STATS_SUMMARY_H_
