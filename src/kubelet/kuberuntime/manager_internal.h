// Internal helpers shared by the manager's translation units (kuberuntime_manager.cc,
// kuberuntime_container.cc, kuberuntime_gc.cc). Not part of the package's interface.
#ifndef KUBELET_KUBELET_KUBERUNTIME_MANAGER_INTERNAL_H_
#define KUBELET_KUBELET_KUBERUNTIME_MANAGER_INTERNAL_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "api/pod.h"
#include "cri/proto/api.pb.h"
#include "kubelet/container/runtime.h"

namespace kubelet::kuberuntime::internal {

inline constexpr size_t kMaxTerminationMessageLength = 1024 * 4;
inline constexpr size_t kMaxTerminationMessageLogLength = 1024 * 2;
inline constexpr int kMaxTerminationMessageLogLines = 80;

container::SyncResult NewSyncResult(container::SyncResult::Action action, std::string target);
// Marks `r` failed with an upstream-style error text.
void Fail(container::SyncResult& r, const std::string& reason, const std::string& message);

// mkdir -p with `mode` for created components. False (and `err`) on failure.
bool MkdirAll(const std::string& path, mode_t mode, std::string* err);
// rm -rf. False (and `err`) on failure.
bool RemoveAll(const std::string& path, std::string* err);

// The primary IP and additional IPs a sandbox reports (none when any is not an IP address).
std::vector<std::string> DeterminePodSandboxIPs(const runtime::v1::PodSandboxStatus& status);

// getTerminationMessage + readLastStringFromContainerLogs: the content (at most 4 KiB, the
// file's end) of the file mounted at `termination_message_path`; with `fallback_to_logs` and an
// empty/missing file, the last 80 lines (at most 2 KiB) of the CRI log.
std::string ReadTerminationMessage(const runtime::v1::ContainerStatus& status,
                                   const std::string& termination_message_path,
                                   bool fallback_to_logs);

// The content of the kubelet-managed /etc/hosts (ensureHostsFile).
std::string ManagedHostsFileContent(const std::vector<std::string>& ips,
                                    const std::string& hostname, const std::string& domain,
                                    const std::vector<api::HostAlias>& aliases);
std::string HostsEntriesFromHostAliases(const std::vector<api::HostAlias>& aliases);

}  // namespace kubelet::kuberuntime::internal

#endif  // KUBELET_KUBELET_KUBERUNTIME_MANAGER_INTERNAL_H_
