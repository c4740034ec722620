#include "kubelet/kubelet.h"

#include "common/log.h"

namespace kubelet {

Kubelet::Kubelet(KubeletOptions options, cri::RuntimeService& runtime,
                 cri::ImageManagerService& images)
    : options_(std::move(options)), runtime_(runtime), images_(images) {}

Kubelet::~Kubelet() { Stop(); }

void Kubelet::Start() {
  KLOG_INFO("Starting kubelet main sync loop", "node", options_.node_name);
  thread_ = std::thread([this] {
    do {
      UpdateRuntimeUp();
    } while (!stop_.WaitForNotificationWithTimeout(options_.runtime_status_period));
  });
}

void Kubelet::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void Kubelet::UpdateRuntimeUp() {
  auto status = runtime_.Status(false);
  if (!status.ok()) {
    KLOG_ERROR(status.status(), "Container runtime sanity check failed");
    runtime_ready_ = false;
    return;
  }
  bool runtime_ready = false, network_ready = false;
  std::string network_message;
  for (const auto& cond : status->status().conditions()) {
    if (cond.type() == "RuntimeReady") runtime_ready = cond.status();
    if (cond.type() == "NetworkReady") {
      network_ready = cond.status();
      network_message = cond.reason() + ": " + cond.message();
    }
  }
  if (network_ready != network_ready_.load() || first_update_) {
    if (network_ready) {
      KLOG_V(2, "Container runtime network ready");
    } else {
      KLOG_ERROR(absl::UnavailableError(network_message), "Container runtime network not ready",
                 "networkReady", network_ready);
    }
  }
  if (runtime_ready != runtime_ready_.load() || first_update_) {
    if (runtime_ready) {
      KLOG_INFO("Container runtime status", "runtimeReady", true);
    } else {
      KLOG_ERROR(absl::UnavailableError("RuntimeReady=false"), "Container runtime not ready");
    }
  }
  first_update_ = false;
  network_ready_ = network_ready;
  runtime_ready_ = runtime_ready;
}

}  // namespace kubelet
