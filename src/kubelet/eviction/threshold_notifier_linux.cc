// cgroup v1 memory threshold events: an eventfd registered through cgroup.event_control as
// "<eventfd> <fd of the watched file> <threshold>"; a second eventfd wakes the thread to stop.
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "kubelet/eviction/threshold_notifier.h"

namespace kubelet::eviction {
namespace {

class DisabledNotifier final : public CgroupNotifier {};

class EventfdNotifier final : public CgroupNotifier {
 public:
  EventfdNotifier(int event_fd, int stop_fd, std::function<void()> on_crossed)
      : event_fd_(event_fd), stop_fd_(stop_fd), on_crossed_(std::move(on_crossed)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~EventfdNotifier() override {
    uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof(one));
    thread_.join();
    // Closing the eventfd is what unregisters the event in the kernel.
    ::close(event_fd_);
    ::close(stop_fd_);
  }

 private:
  void Loop() {
    for (;;) {
      pollfd fds[2] = {{event_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        KLOG_ERROR(absl::InternalError(std::strerror(errno)),
                   "Eviction manager: error while waiting for memcg events");
        return;
      }
      if (fds[1].revents != 0) return;
      if (fds[0].revents & POLLIN) {
        uint64_t count = 0;
        if (::read(event_fd_, &count, sizeof(count)) == sizeof(count)) on_crossed_();
      } else if (fds[0].revents != 0) {
        return;  // POLLHUP/POLLERR: the cgroup is gone.
      }
    }
  }

  const int event_fd_;
  const int stop_fd_;
  std::function<void()> on_crossed_;
  std::thread thread_;
};

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CgroupNotifier>> NewCgroupNotifier(
    const std::string& path, const std::string& attribute, int64_t threshold,
    std::function<void()> on_crossed) {
  const std::string control = path + "/cgroup.event_control";
  if (::access(control.c_str(), F_OK) != 0) {
    // cgroup v2 (or no memory controller here): nothing to register, as upstream.
    KLOG_V(2, "Eviction manager: memcg threshold events are not available", "path", path);
    return std::unique_ptr<CgroupNotifier>(std::make_unique<DisabledNotifier>());
  }
  const std::string watched = path + "/" + attribute;
  int watch_fd = ::open(watched.c_str(), O_RDONLY | O_CLOEXEC);
  if (watch_fd < 0) return Errno("open " + watched);
  int event_fd = ::eventfd(0, EFD_CLOEXEC);
  if (event_fd < 0) {
    absl::Status st = Errno("eventfd");
    ::close(watch_fd);
    return st;
  }
  int control_fd = ::open(control.c_str(), O_WRONLY | O_CLOEXEC);
  if (control_fd < 0) {
    absl::Status st = Errno("open " + control);
    ::close(watch_fd);
    ::close(event_fd);
    return st;
  }
  const std::string line = absl::StrCat(event_fd, " ", watch_fd, " ", threshold);
  const ssize_t n = ::write(control_fd, line.data(), line.size());
  absl::Status st =
      n == static_cast<ssize_t>(line.size()) ? absl::OkStatus() : Errno("write " + control);
  ::close(control_fd);
  // The kernel holds its own reference to the watched file once registered.
  ::close(watch_fd);
  if (!st.ok()) {
    ::close(event_fd);
    return st;
  }
  int stop_fd = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0) {
    absl::Status err = Errno("eventfd");
    ::close(event_fd);
    return err;
  }
  return std::unique_ptr<CgroupNotifier>(
      std::make_unique<EventfdNotifier>(event_fd, stop_fd, std::move(on_crossed)));
}

}  // namespace kubelet::eviction
