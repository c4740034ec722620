#include "kubelet/nodeshutdown/testing/fake_logind.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/duration.h"

namespace kubelet::nodeshutdown::testing {

class FakeLogind::Connection final : public Logind {
 public:
  Connection(FakeLogind& fake, int id) : fake_(fake), id_(id) {}
  ~Connection() override {
    absl::MutexLock l(&fake_.mu_);
    fake_.interrupted_.erase(id_);
    if (fake_.current_ == id_) {
      fake_.current_ = 0;
      fake_.monitoring_ = false;
      fake_.events_.clear();
    }
  }

  absl::StatusOr<absl::Duration> CurrentInhibitDelay() override {
    absl::MutexLock l(&fake_.mu_);
    fake_.calls_.push_back("CurrentInhibitDelay");
    if (absl::Status st = Check(); !st.ok()) return st;
    if (absl::Status st = fake_.TakeFailure("CurrentInhibitDelay"); !st.ok()) return st;
    return fake_.inhibit_delay_max_;
  }

  absl::StatusOr<InhibitLock> InhibitShutdown() override {
    absl::MutexLock l(&fake_.mu_);
    fake_.calls_.push_back("InhibitShutdown");
    if (absl::Status st = Check(); !st.ok()) return st;
    if (absl::Status st = fake_.TakeFailure("InhibitShutdown"); !st.ok()) return st;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
    }
    fake_.lock_read_ends_.push_back(fds[0]);
    return InhibitLock{fds[1]};
  }

  absl::Status ReleaseInhibitLock(InhibitLock lock) override {
    {
      absl::MutexLock l(&fake_.mu_);
      fake_.calls_.push_back("ReleaseInhibitLock");
    }
    if (close(lock.fd) != 0) {
      return absl::InternalError(
          absl::StrCat("unable to close systemd inhibitor lock: ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }

  absl::Status ReloadLogindConf() override {
    absl::MutexLock l(&fake_.mu_);
    fake_.calls_.push_back("ReloadLogindConf");
    if (absl::Status st = Check(); !st.ok()) return st;
    if (absl::Status st = fake_.TakeFailure("ReloadLogindConf"); !st.ok()) return st;
    if (fake_.override_.has_value() && !fake_.ignore_override_) {
      fake_.inhibit_delay_max_ = *fake_.override_;
    }
    return absl::OkStatus();
  }

  absl::Status OverrideInhibitDelay(absl::Duration inhibit_delay_max) override {
    absl::MutexLock l(&fake_.mu_);
    fake_.calls_.push_back(
        absl::StrCat("OverrideInhibitDelay ", FormatGoDuration(inhibit_delay_max)));
    if (absl::Status st = fake_.TakeFailure("OverrideInhibitDelay"); !st.ok()) return st;
    fake_.override_ = inhibit_delay_max;
    return absl::OkStatus();
  }

  absl::Status MonitorShutdown() override {
    absl::MutexLock l(&fake_.mu_);
    fake_.calls_.push_back("MonitorShutdown");
    if (absl::Status st = Check(); !st.ok()) return st;
    if (absl::Status st = fake_.TakeFailure("MonitorShutdown"); !st.ok()) return st;
    fake_.monitoring_ = true;
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<bool>> WaitForShutdownEvent() override {
    absl::MutexLock l(&fake_.mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(fake_.mu_) {
      return fake_.interrupted_[id_] || fake_.current_ != id_ || !fake_.events_.empty();
    };
    fake_.mu_.Await(absl::Condition(&ready));
    if (fake_.current_ == id_ && !fake_.events_.empty()) {
      bool event = fake_.events_.front();
      fake_.events_.pop_front();
      return std::optional<bool>(event);
    }
    if (fake_.interrupted_[id_]) {
      fake_.interrupted_[id_] = false;
      return std::optional<bool>();
    }
    return absl::UnavailableError("the bus connection ended");
  }

  void Interrupt() override {
    absl::MutexLock l(&fake_.mu_);
    fake_.interrupted_[id_] = true;
    ++fake_.interrupts_;
  }

 private:
  absl::Status Check() ABSL_EXCLUSIVE_LOCKS_REQUIRED(fake_.mu_) {
    if (fake_.current_ != id_) return absl::UnavailableError("the bus connection ended");
    return absl::OkStatus();
  }

  FakeLogind& fake_;
  const int id_;
};

FakeLogind::FakeLogind(absl::Duration inhibit_delay_max) : inhibit_delay_max_(inhibit_delay_max) {}

FakeLogind::~FakeLogind() {
  absl::MutexLock l(&mu_);
  for (int fd : lock_read_ends_) close(fd);
}

LogindFactory FakeLogind::Factory() {
  return [this]() -> absl::StatusOr<std::unique_ptr<Logind>> {
    absl::MutexLock l(&mu_);
    calls_.push_back("Connect");
    if (connect_failures_ > 0) {
      --connect_failures_;
      return connect_failure_;
    }
    const int id = ++connections_;
    current_ = id;
    monitoring_ = false;
    events_.clear();
    interrupted_[id] = false;
    return std::unique_ptr<Logind>(std::make_unique<Connection>(*this, id));
  };
}

void FakeLogind::set_inhibit_delay_max(absl::Duration d) {
  absl::MutexLock l(&mu_);
  inhibit_delay_max_ = d;
}

absl::Duration FakeLogind::inhibit_delay_max() const {
  absl::MutexLock l(&mu_);
  return inhibit_delay_max_;
}

void FakeLogind::set_ignore_override(bool ignore) {
  absl::MutexLock l(&mu_);
  ignore_override_ = ignore;
}

void FakeLogind::FailNext(const std::string& method, absl::Status status) {
  absl::MutexLock l(&mu_);
  failures_[method].push_back(std::move(status));
}

void FakeLogind::FailConnect(int times, absl::Status status) {
  absl::MutexLock l(&mu_);
  connect_failures_ = times;
  connect_failure_ = std::move(status);
}

absl::Status FakeLogind::TakeFailure(const std::string& method) {
  auto it = failures_.find(method);
  if (it == failures_.end() || it->second.empty()) return absl::OkStatus();
  absl::Status st = std::move(it->second.front());
  it->second.pop_front();
  return st;
}

void FakeLogind::Emit(bool shutting_down) {
  absl::MutexLock l(&mu_);
  if (current_ != 0 && monitoring_) events_.push_back(shutting_down);
}

void FakeLogind::Disconnect() {
  absl::MutexLock l(&mu_);
  current_ = 0;
  monitoring_ = false;
  events_.clear();
}

int FakeLogind::HeldLocks() const {
  absl::MutexLock l(&mu_);
  int held = 0;
  for (int fd : lock_read_ends_) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)) != 0) continue;
    ++held;
  }
  return held;
}

int FakeLogind::Connections() const {
  absl::MutexLock l(&mu_);
  return connections_;
}

bool FakeLogind::Monitoring() const {
  absl::MutexLock l(&mu_);
  return current_ != 0 && monitoring_;
}

int FakeLogind::Interrupts() const {
  absl::MutexLock l(&mu_);
  return interrupts_;
}

std::vector<std::string> FakeLogind::Calls() const {
  absl::MutexLock l(&mu_);
  return calls_;
}

}  // namespace kubelet::nodeshutdown::testing
