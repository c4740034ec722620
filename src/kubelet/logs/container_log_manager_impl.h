// The CRI-backed ContainerLogManager: finds a container's log file through the runtime (labels
// the kubelet puts on containers) and reads it with ReadLogs; rotates the logs of running
// containers on one background thread (upstream pkg/kubelet/logs/container_log_manager.go).
//
// Which instance GetContainerLogs reads: the containers of the pod (newest pod UID) named
// `container`, newest first by restart count (metadata attempt) then creation time. Without
// `previous`, the newest one when it has started (running or exited), else the one before it;
// with `previous`, the one before the newest. Errors (as upstream's validateContainerLogStatus
// words them):
//   NotFound            pod "P" cannot be found - no logs available      (no sandbox, no container)
//                       container "C" in pod "P" is not available         (no instance yet)
//                       previous terminated container "C" in pod "P" not found
//   FailedPrecondition  container "C" in pod "P" is waiting to start: ContainerCreating
//
// Rotation, every `monitor_interval` (upstream logMonitorPeriod, 10s), for each RUNNING
// container whose log file is at least `max_size` bytes: remove leftover `.tmp` files and
// rotated files already compressed; remove the oldest rotated files so that at most
// max_files - 2 remain; gzip every uncompressed rotated file to `<file>.gz`; rename the log to
// `<path>.<YYYYMMDD-hhmmss>` (local time from the clock) and ask the runtime to reopen it
// (ReopenContainerLog). If reopening fails the file is renamed back so the next round retries.
// A missing log file of a running container is recreated with ReopenContainerLog first.
//
// Thread-safety: all methods are thread-safe. One rotation round runs at a time.
// Ownership: borrows the runtime and the clock; both must outlive the manager. The destructor
// calls Stop().
#ifndef KUBELET_KUBELET_LOGS_CONTAINER_LOG_MANAGER_IMPL_H_
#define KUBELET_KUBELET_LOGS_CONTAINER_LOG_MANAGER_IMPL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "config/kubelet_configuration.h"
#include "cri/runtime_service.h"
#include "kubelet/logs/container_log_manager.h"

namespace kubelet::logs {

struct ContainerLogManagerOptions {
  // containerLogMaxSize as a quantity ("10Mi"); a negative value disables rotation.
  std::string max_size = "10Mi";
  // containerLogMaxFiles; must be at least 2.
  int32_t max_files = 5;
  absl::Duration monitor_interval = absl::Seconds(10);
  // Where the kubelet puts pod logs; used only when the runtime reports a relative log path.
  std::string pod_logs_root = "/var/log/pods";
  // How long a following reader waits for file events before looking again.
  absl::Duration follow_check_period = absl::Seconds(1);
};

// Reads containerLogMaxSize and containerLogMaxFiles (checked by NewContainerLogManager).
ContainerLogManagerOptions ContainerLogManagerOptionsFromConfig(
    const config::KubeletConfiguration& c);
inline constexpr std::string_view kContainerLogManagerConfigFields[] = {"containerLogMaxSize",
                                                                        "containerLogMaxFiles"};

// Fails as upstream NewContainerLogManager for max_files < 2 ("invalid MaxFiles 1, must be > 1")
// and an unparsable max_size.
absl::StatusOr<std::unique_ptr<class ContainerLogManagerImpl>> NewContainerLogManager(
    cri::RuntimeService& runtime, Clock& clock, ContainerLogManagerOptions options);

class ContainerLogManagerImpl final : public ContainerLogManager {
 public:
  // Use NewContainerLogManager. `max_size_bytes` < 0 disables rotation.
  ContainerLogManagerImpl(cri::RuntimeService& runtime, Clock& clock,
                          ContainerLogManagerOptions options, int64_t max_size_bytes);
  ~ContainerLogManagerImpl() override;

  absl::Status GetContainerLogs(const std::string& namespace_, const std::string& pod,
                                const std::string& container, const LogOptions& options,
                                const LogSink& sink) override;
  // Starts the rotation thread (not when rotation is disabled). Idempotent; no-op after Stop().
  void Start() override;
  // Stops the rotation thread and ends every follower. Idempotent.
  void Stop() override;

  // One rotation round (what the thread runs each interval); for tests.
  absl::Status RotateLogs();
  // Rotates one container's log file now, whatever its size; for tests.
  absl::Status RotateLog(const std::string& container_id, const std::string& log_path);

 private:
  void Loop();

  cri::RuntimeService& runtime_;
  Clock& clock_;
  const ContainerLogManagerOptions options_;
  const int64_t max_size_bytes_;
  // eventfd made readable by Stop(); followers poll it.
  int stop_fd_ = -1;

  absl::Mutex rotate_mu_;  // serialises rotation rounds
  // Log paths of the running containers of the last round, by container ID.
  std::map<std::string, std::string> log_paths_ ABSL_GUARDED_BY(rotate_mu_);

  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::logs

#endif  // KUBELET_KUBELET_LOGS_CONTAINER_LOG_MANAGER_IMPL_H_
