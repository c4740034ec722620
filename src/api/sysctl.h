// Sysctl names as the API and the kubelet see them (upstream component-helpers node/util/sysctl
// and the name checks of core and policy validation).
// Pure functions; thread-safe.
#ifndef KUBELET_API_SYSCTL_H_
#define KUBELET_API_SYSCTL_H_

#include <string>
#include <string_view>

namespace kubelet::api {

// The kernel namespace a sysctl belongs to: kernel.sem and kernel.shm*, kernel.msg*,
// fs.mqueue.* are in the IPC namespace, net.* in the network namespace; any other is not known
// to be namespaced.
enum class SysctlNamespace { kUnknown, kNet, kIPC };
SysctlNamespace SysctlNamespaceOf(std::string_view name);
// "ipc" / "net" / "" as upstream prints them.
std::string_view SysctlNamespaceName(SysctlNamespace ns);

// ConvertSysctlVariableToDotsSeparator: a name whose first separator is '/' has its '.' and '/'
// swapped ("net/ipv4/ip_forward" -> "net.ipv4.ip_forward"); others are returned unchanged.
std::string NormalizeSysctlName(std::string_view name);

// A sysctl name: at most 253 characters matching
// ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$.
bool IsValidSysctlName(std::string_view name);
// A sysctl name or pattern (policy validation): at most 253 characters matching
// ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$ (a '*' only at the end).
bool IsValidSysctlPattern(std::string_view pattern);

}  // namespace kubelet::api

#endif  // KUBELET_API_SYSCTL_H_
