// Exception boundaries. An exception that leaves a thread's entry point, a pool task or a
// timer/I/O callback calls std::terminate and takes the whole kubelet down, so code running at
// such a boundary runs its work through RunGuarded: whatever the work throws is caught, logged
// as an error naming the boundary, and the caller goes on (a loop to its next round, a pool to
// its next task).
//
// This is the last line of defence, not a way to report errors: errors are values, and library
// calls that report bad input by exception are wrapped where that input enters. A guard catches
// what slipped through, so one bad pod, container or request costs its own operation only.
//
// Thread-safety: stateless; call from any thread.
#ifndef KUBELET_COMMON_GUARDED_H_
#define KUBELET_COMMON_GUARDED_H_

#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace kubelet {

namespace internal {
// Logs an exception that reached the boundary `what`; `message` is its what(), or null when it
// was not a std::exception. Never throws.
void LogEscapedException(std::string_view what, const char* message) noexcept;
// *out = message (or "unknown exception" for null), left unchanged when that cannot allocate.
void AssignNoThrow(std::string* out, const char* message) noexcept;
}  // namespace internal

// Runs fn(). Returns true when it returned, false when it threw: the exception (of any type) was
// caught and logged with `what` as context, and its message stored in `*error` when `error` is
// not null (for a caller that turns it into an error value). Never throws.
template <typename Fn>
bool RunGuarded(std::string_view what, Fn&& fn, std::string* error = nullptr) noexcept {
  try {
    std::forward<Fn>(fn)();
    return true;
  } catch (const std::exception& e) {
    internal::LogEscapedException(what, e.what());
    if (error != nullptr) internal::AssignNoThrow(error, e.what());
  } catch (...) {
    internal::LogEscapedException(what, nullptr);
    if (error != nullptr) internal::AssignNoThrow(error, nullptr);
  }
  return false;
}

// Names the calling thread, or `thread`: the kernel's comm, `name`'s first 15 characters (ps,
// top, debuggers).
void NameThisThread(std::string_view name);
void NameThread(std::thread& thread, std::string_view name);

// A thread named `name` (NameThisThread) whose entry point runs `fn` under RunGuarded(name, ...):
// if fn throws, the thread logs and ends instead of terminating the process. A long-running loop
// should also guard each round itself, so it goes on after one round fails.
std::thread GuardedThread(std::string name, std::function<void()> fn);

}  // namespace kubelet

#endif  // KUBELET_COMMON_GUARDED_H_
