#include "common/guarded.h"

#include <pthread.h>

#include <string>

#include "absl/status/status.h"
#include "common/log.h"

namespace kubelet {

namespace internal {

void LogEscapedException(std::string_view what, const char* message) noexcept {
  // Logging allocates; when the exception was bad_alloc that may throw again, and a throw from
  // here would terminate, so it is dropped.
  try {
    KLOG_ERROR(absl::InternalError(message != nullptr ? message : "unknown exception"),
               "Unhandled exception caught", "boundary", what);
  } catch (...) {
  }
}

void AssignNoThrow(std::string* out, const char* message) noexcept {
  try {
    *out = message != nullptr ? message : "unknown exception";
  } catch (...) {
  }
}

}  // namespace internal

namespace {

void SetComm(pthread_t thread, std::string_view name) {
  const std::string comm(name.substr(0, 15));
  pthread_setname_np(thread, comm.c_str());
}

}  // namespace

void NameThisThread(std::string_view name) { SetComm(pthread_self(), name); }

void NameThread(std::thread& thread, std::string_view name) {
  SetComm(thread.native_handle(), name);
}

std::thread GuardedThread(std::string name, std::function<void()> fn) {
  return std::thread([name = std::move(name), fn = std::move(fn)] {
    NameThisThread(name);
    RunGuarded(name, fn);
  });
}

}  // namespace kubelet
