// What the in-process runtimes share (the unit tests' FakeRuntime, cri/testing/, and the hollow
// nodes' SimRuntime, cri/sim/): the List* filters as containerd applies them (id, state, sandbox
// id, every label of the selector), the list items made from a status, and Docker's image
// reference normalisation ("busybox" -> "docker.io/library/busybox:latest"; "sha256:" ids and
// digest references keep their digest).
// Thread-safety: pure functions.
#ifndef KUBELET_CRI_IN_PROCESS_H_
#define KUBELET_CRI_IN_PROCESS_H_

#include <string>
#include <string_view>

#include "cri/proto/api.pb.h"

namespace kubelet::cri {

// Every key of `selector` is in `labels` with the same value.
bool LabelsMatch(const google::protobuf::Map<std::string, std::string>& labels,
                 const google::protobuf::Map<std::string, std::string>& selector);

bool SandboxMatches(const std::string& id, const runtime::v1::PodSandboxStatus& status,
                    const runtime::v1::PodSandboxFilter* filter);
runtime::v1::PodSandbox SandboxListItem(const std::string& id,
                                        const runtime::v1::PodSandboxStatus& status);

bool ContainerMatches(const std::string& id, const std::string& pod_sandbox_id,
                      const runtime::v1::ContainerStatus& status,
                      const runtime::v1::ContainerFilter* filter);
runtime::v1::Container ContainerListItem(const std::string& id, const std::string& pod_sandbox_id,
                                         const runtime::v1::ContainerStatus& status);

std::string NormalizeImageRef(std::string_view ref);

}  // namespace kubelet::cri

#endif  // KUBELET_CRI_IN_PROCESS_H_
