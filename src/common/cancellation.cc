#include "common/cancellation.h"

#include <utility>

#include "common/guarded.h"

namespace kubelet {
namespace {
thread_local Cancellation* current = nullptr;
}  // namespace

void Cancellation::Cancel() {
  absl::MutexLock lock(&mu_);
  if (cancelled_.exchange(true, std::memory_order_acq_rel)) return;
  // Callbacks run on the cancelling thread: one that throws must neither escape into it nor
  // keep the others from running.
  for (auto& [id, fn] : callbacks_) RunGuarded("cancellation callback", fn);
  callbacks_.clear();
}

uint64_t Cancellation::Register(std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  if (IsCancelled()) return 0;
  uint64_t id = next_id_++;
  callbacks_.emplace(id, std::move(fn));
  return id;
}

void Cancellation::Unregister(uint64_t id) {
  absl::MutexLock lock(&mu_);
  callbacks_.erase(id);
}

Cancellation* CurrentCancellation() { return current; }

ScopedCancellation::ScopedCancellation(std::shared_ptr<Cancellation> c)
    : c_(std::move(c)), previous_(current) {
  current = c_.get();
}

ScopedCancellation::~ScopedCancellation() { current = previous_; }

OnCancel::OnCancel(std::function<void()> fn) : c_(current) {
  if (c_ != nullptr) id_ = c_->Register(std::move(fn));
}

OnCancel::~OnCancel() {
  if (c_ != nullptr && id_ != 0) c_->Unregister(id_);
}

}  // namespace kubelet
