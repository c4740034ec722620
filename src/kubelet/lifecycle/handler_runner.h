// HandlerRunner runs a container's v1.28 lifecycle handlers (postStart, preStop), as upstream
// pkg/kubelet/lifecycle's handlerRunner: exec through CRI ExecSync; httpGet against the pod IP
// (or the handler's host) over HTTP or HTTPS without certificate verification, falling back to
// HTTP when an HTTPS request reaches a plain-HTTP server; tcpSocket is rejected as upstream
// 1.28 does ("invalid handler"). A failure returns a status whose message is the text upstream
// puts into the FailedPostStartHook / FailedPreStopHook event and the container's status.
//
// Thread-safety: Run may be called from several pod-worker threads at once; it blocks for at
// most `timeout` (unbounded when infinite, as upstream postStart). The runner borrows the
// RuntimeService, which must outlive it.
#ifndef KUBELET_KUBELET_LIFECYCLE_HANDLER_RUNNER_H_
#define KUBELET_KUBELET_LIFECYCLE_HANDLER_RUNNER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "cri/runtime_service.h"
#include "kubelet/container/runtime.h"

namespace kubelet::lifecycle {

class HandlerRunner {
 public:
  struct Options {
    // The node's IPs, primary first: the host for httpGet handlers of hostNetwork pods whose
    // sandbox reports no IP.
    std::vector<std::string> node_ips;
    // The pod's primary IP. Unset: asked from CRI (the pod's ready sandbox's network status).
    std::function<absl::StatusOr<std::string>(const api::Pod&)> pod_ip;
  };

  HandlerRunner(cri::RuntimeService& runtime, Options options);

  // Runs `handler` for container `id` of `pod`. `timeout` bounds exec and HTTP handlers
  // (infinite: no bound). OK when the handler ran; an exec handler fails on a non-zero exit
  // code, an HTTP handler only when the request could not be made (upstream ignores the status
  // code of hook responses).
  absl::Status Run(const container::ContainerID& id, const api::Pod& pod,
                   const api::Container& container, const api::LifecycleHandler& handler,
                   absl::Duration timeout);

 private:
  absl::Status RunHttp(const api::Pod& pod, const api::Container& container,
                       const api::HTTPGetAction& action, absl::Duration timeout);
  absl::StatusOr<std::string> PodIP(const api::Pod& pod);

  cri::RuntimeService& runtime_;
  const Options options_;
};

// upstream format.Pod: "<name>_<namespace>(<uid>)".
std::string FormatPodForHook(const api::Pod& pod);

}  // namespace kubelet::lifecycle

#endif  // KUBELET_KUBELET_LIFECYCLE_HANDLER_RUNNER_H_
