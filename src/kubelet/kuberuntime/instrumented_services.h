// Instrumented CRI services (upstream kuberuntime instrumentedRuntimeService): every call is
// forwarded to the wrapped service and counted in kubelet_runtime_operations_total,
// kubelet_runtime_operations_errors_total and kubelet_runtime_operations_duration_seconds with
// upstream's operation_type names ("run_podsandbox", "create_container", "pull_image", ...).
// Thread-safety: as thread-safe as the wrapped service. Ownership: borrows it.
#ifndef KUBELET_KUBELET_KUBERUNTIME_INSTRUMENTED_SERVICES_H_
#define KUBELET_KUBELET_KUBERUNTIME_INSTRUMENTED_SERVICES_H_

#include <memory>

#include "cri/runtime_service.h"

namespace kubelet::kuberuntime {

std::unique_ptr<cri::RuntimeService> NewInstrumentedRuntimeService(cri::RuntimeService& inner);
std::unique_ptr<cri::ImageManagerService> NewInstrumentedImageService(
    cri::ImageManagerService& inner);

}  // namespace kubelet::kuberuntime

#endif  // KUBELET_KUBELET_KUBERUNTIME_INSTRUMENTED_SERVICES_H_
