// Container logs: reading the CRI log files for the kubelet API (/containerLogs) and rotating
// them (upstream pkg/kubelet/kuberuntime/logs and pkg/kubelet/logs).
//
// Contract (the interface the HTTP API relies on; the implementation may add members):
// - GetContainerLogs streams the logs of one container into `sink`, blocking the calling thread:
//   the newest instance of the container, or the one before it with `previous`. Without
//   `follow` it returns once the file is read; with it, it keeps reading until the container has
//   stopped and its file is drained, the sink returns false (client gone), or Stop() is called.
//   NotFound when the pod or container is unknown (message as upstream shows to kubectl).
// - Start() begins rotation: every containerLogMonitorInterval each running container's log is
//   rotated when it exceeds containerLogMaxSize, keeping containerLogMaxFiles files (older ones
//   gzip-compressed as upstream names them), then the runtime is asked to reopen the log.
// Thread-safety: all methods are thread-safe; GetContainerLogs may run on many threads at once.
// Ownership: borrows the CRI runtime service and clock, which must outlive the manager.
#ifndef KUBELET_KUBELET_LOGS_CONTAINER_LOG_MANAGER_H_
#define KUBELET_KUBELET_LOGS_CONTAINER_LOG_MANAGER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace kubelet::logs {

// The query parameters of /containerLogs (upstream v1.PodLogOptions).
struct LogOptions {
  bool follow = false;
  bool previous = false;
  bool timestamps = false;
  std::optional<int64_t> tail_lines;
  std::optional<int64_t> limit_bytes;
  std::optional<int64_t> since_seconds;
  std::optional<absl::Time> since_time;
};

// Receives log output in order; returns false to stop reading.
using LogSink = std::function<bool(std::string_view data)>;

class ContainerLogManager {
 public:
  virtual ~ContainerLogManager() = default;

  virtual absl::Status GetContainerLogs(const std::string& namespace_, const std::string& pod,
                                        const std::string& container, const LogOptions& options,
                                        const LogSink& sink) = 0;
  virtual void Start() = 0;
  virtual void Stop() = 0;
};

}  // namespace kubelet::logs

#endif  // KUBELET_KUBELET_LOGS_CONTAINER_LOG_MANAGER_H_
