// The resources the kubelet allocated to pods' containers and its last resize decisions
// (upstream pkg/kubelet/status/state, v1.28, behind the InPlacePodVerticalScaling gate): what
// admission counts for running pods, what containerStatuses[].allocatedResources shows, and
// status.resize between syncs.
//
// Checkpointed in <root-dir>/pod_status_manager_state in upstream's checkpoint manager format,
// byte-compatible so a node can switch between this kubelet and upstream's:
//
//   {"data":"{\"allocationEntries\":{\"<pod UID>\":{\"<container>\":{\"cpu\":\"500m\",
//    \"memory\":\"128Mi\"}}},\"resizeStatusEntries\":{\"<pod UID>\":\"InProgress\"}}",
//    "checksum":1234567890}
//
// `data` is Go's json.Marshal of PodResourceAllocationInfo (maps sorted by key, both members
// omitted when empty, a container without requests as null, quantities in canonical form);
// `checksum` is the checkpoint manager's: FNV-1a 32 over the go-spew text of the data string,
// "(string)" followed by the data. A file that does not parse or whose checksum does not match
// fails Open with upstream's message ("could not restore state from checkpoint: ..., please drain
// this node and delete pod allocation checkpoint file ... before restarting Kubelet"); a missing
// file is created empty. Every change is written at once (a failed write is logged and
// returned, the in-memory state keeps the change, as upstream).
//
// Thread-safety: thread-safe.
#ifndef KUBELET_KUBELET_STATUS_ALLOCATION_STATE_H_
#define KUBELET_KUBELET_STATUS_ALLOCATION_STATE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"

namespace kubelet::status {

inline constexpr char kPodStatusManagerStateFile[] = "pod_status_manager_state";

// status.resize values (v1.PodResizeStatus).
inline constexpr char kResizeProposed[] = "Proposed";
inline constexpr char kResizeInProgress[] = "InProgress";
inline constexpr char kResizeDeferred[] = "Deferred";
inline constexpr char kResizeInfeasible[] = "Infeasible";

// upstream state.PodResourceAllocationInfo.
struct PodResourceAllocationInfo {
  // pod UID -> container name -> allocated requests.
  std::map<std::string, std::map<std::string, api::ResourceList>> allocation_entries;
  // pod UID -> last resize decision.
  std::map<std::string, std::string> resize_status_entries;
  bool operator==(const PodResourceAllocationInfo&) const = default;
};

// The checkpoint's `data` text (Go's json.Marshal of the info).
std::string EncodeAllocationData(const PodResourceAllocationInfo& info);
// The checkpoint manager's checksum of a data string.
uint64_t AllocationChecksum(std::string_view data);
// The whole file.
std::string MarshalAllocationCheckpoint(const PodResourceAllocationInfo& info);
// Parses and verifies a file's text ("checkpoint is corrupted" on a checksum mismatch; other
// errors name the member).
absl::StatusOr<PodResourceAllocationInfo> UnmarshalAllocationCheckpoint(std::string_view text);

class AllocationState {
 public:
  // In memory only: nothing is read or written.
  AllocationState();
  // Backed by <state_dir>/pod_status_manager_state: restored from it, or created empty.
  static absl::StatusOr<std::unique_ptr<AllocationState>> Open(const std::string& state_dir);

  // The requests allocated to a container; nullopt when none is recorded.
  std::optional<api::ResourceList> GetContainerResourceAllocation(
      const std::string& uid, const std::string& container) const;
  // Records every app container's spec requests as its allocation (upstream SetPodAllocation).
  absl::Status SetPodAllocation(const api::Pod& pod);
  std::optional<std::string> GetPodResizeStatus(const std::string& uid) const;
  // "" removes the pod's entry.
  absl::Status SetPodResizeStatus(const std::string& uid, const std::string& resize_status);
  // Drops a container's allocation, or with `container` "" the pod's allocations and resize
  // status. A pod left without container allocations loses its resize status too.
  absl::Status Delete(const std::string& uid, const std::string& container = "");
  // Pods with an allocation or a resize status.
  std::set<std::string> PodUIDs() const;
  PodResourceAllocationInfo Snapshot() const;
  // The file, or "" in memory.
  const std::string& path() const { return path_; }

 private:
  absl::Status StoreLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::string path_;
  mutable absl::Mutex mu_;
  PodResourceAllocationInfo info_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::status

#endif  // KUBELET_KUBELET_STATUS_ALLOCATION_STATE_H_
