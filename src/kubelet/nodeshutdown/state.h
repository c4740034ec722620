// The graceful shutdown state file, <root-dir>/graceful_node_shutdown_state (upstream
// nodeshutdown/storage.go): when the last graceful shutdown started and ended, so the
// kubelet_graceful_shutdown_{start,end}_time_seconds metrics survive the reboot that follows.
//
// Format (Go's encoding/json of a struct of two time.Time):
//   {"startTime":"2023-11-14T22:13:20.5Z","endTime":"0001-01-01T00:00:00Z"}
// Times are RFC 3339 with as many fractional digits as needed; the zero time (not set) is
// "0001-01-01T00:00:00Z". We write UTC; any offset is read.
//
// Store writes atomically (a temporary file renamed over the path, 0644). Load of a missing file
// is an empty state; a file that is not such JSON is an error naming the file, never a crash.
// Thread-compatible.
#ifndef KUBELET_KUBELET_NODESHUTDOWN_STATE_H_
#define KUBELET_KUBELET_NODESHUTDOWN_STATE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubelet::nodeshutdown {

inline constexpr char kLocalStorageStateFile[] = "graceful_node_shutdown_state";

struct ShutdownState {
  std::optional<absl::Time> start_time;
  std::optional<absl::Time> end_time;
  bool operator==(const ShutdownState&) const = default;
};

std::string EncodeShutdownState(const ShutdownState& state);
absl::StatusOr<ShutdownState> DecodeShutdownState(const std::string& text);

absl::Status StoreShutdownState(const std::string& path, const ShutdownState& state);
absl::StatusOr<ShutdownState> LoadShutdownState(const std::string& path);

// The metric value of a time: Unix seconds, 0 for the zero time (upstream timestamp()).
double ShutdownTimestamp(const std::optional<absl::Time>& t);

}  // namespace kubelet::nodeshutdown

#endif  // KUBELET_KUBELET_NODESHUTDOWN_STATE_H_
