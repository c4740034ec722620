// The Kubelet: owns the node agent's long-running loops once start-up has wired its
// dependencies. This stage runs the runtime health loop (upstream's updateRuntimeUp: runtime
// Status every 5 s, RuntimeReady / NetworkReady tracked and logged on change); the pod sources,
// sync loop, pod workers and PLEG plug in here.
//
// Thread-safety: Start() and Stop() are called from the main thread; RuntimeReady() from any.
// Ownership: the Kubelet borrows the runtime services, which must outlive it.
#ifndef KUBELET_KUBELET_KUBELET_H_
#define KUBELET_KUBELET_KUBELET_H_

#include <atomic>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "cri/runtime_service.h"

namespace kubelet {

struct KubeletOptions {
  std::string node_name;
  absl::Duration runtime_status_period = absl::Seconds(5);
};

class Kubelet {
 public:
  Kubelet(KubeletOptions options, cri::RuntimeService& runtime, cri::ImageManagerService& images);
  ~Kubelet();

  void Start();
  void Stop();

  bool RuntimeReady() const { return runtime_ready_.load(); }
  bool NetworkReady() const { return network_ready_.load(); }

 private:
  void UpdateRuntimeUp();

  KubeletOptions options_;
  cri::RuntimeService& runtime_;
  cri::ImageManagerService& images_;
  std::atomic<bool> runtime_ready_{false};
  std::atomic<bool> network_ready_{false};
  bool first_update_ = true;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace kubelet

#endif  // KUBELET_KUBELET_KUBELET_H_
