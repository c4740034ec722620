#include "cri/runtime_service.h"

#include <utility>

namespace kubelet::cri {

void StreamCancellation::Cancel() {
  std::function<void()> hook;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_) return;
    cancelled_ = true;
    hook = std::move(hook_);
    hook_ = nullptr;
    if (hook) hook_running_ = true;
  }
  if (!hook) return;
  hook();
  absl::MutexLock lock(&mu_);
  hook_running_ = false;
}

bool StreamCancellation::IsCancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

void StreamCancellation::SetCancelHook(std::function<void()> hook) {
  {
    absl::MutexLock lock(&mu_);
    if (!cancelled_) {
      hook_ = std::move(hook);
      return;
    }
  }
  if (hook) hook();
}

void StreamCancellation::ClearCancelHook() {
  absl::MutexLock lock(&mu_);
  hook_ = nullptr;
  mu_.Await(absl::Condition(
      +[](bool* running) { return !*running; }, &hook_running_));
}

}  // namespace kubelet::cri
