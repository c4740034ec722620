#include "kubelet/pluginmanager/plugin_manager.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/duration.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/pluginmanager/plugin_watcher.h"

namespace kubelet::pluginmanager {

PluginManager::PluginManager(PluginManagerOptions options) : options_(std::move(options)) {}

PluginManager::~PluginManager() { Stop(); }

void PluginManager::AddHandler(const std::string& type, PluginHandler* handler) {
  handlers_[type] = handler;
}

absl::Status PluginManager::Start() {
  if (options_.clock == nullptr || options_.client == nullptr) {
    return absl::InvalidArgumentError(
        "plugin manager: a clock and a registration client are needed");
  }
  std::vector<WatchEvent> existing;
  absl::StatusOr<std::unique_ptr<PluginWatcher>> w =
      PluginWatcher::Start(options_.registry_dir, &existing);
  if (!w.ok()) return w.status();
  watcher_ = std::move(*w);
  for (const WatchEvent& e : existing) desired_[e.path] = Desired{next_generation_++};
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) return absl::UnavailableError("eventfd failed");
  tick_ = options_.clock->NewTimer();
  KLOG_INFO("Starting Kubelet Plugin Manager");
  KLOG_V(2, "The desired_state_of_world populator (plugin watcher) starts");
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void PluginManager::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (stop_fd_ >= 0) {
    ::close(stop_fd_);
    stop_fd_ = -1;
  }
}

std::vector<RegisteredPlugin> PluginManager::Plugins() const {
  absl::MutexLock lock(&mu_);
  std::vector<RegisteredPlugin> out;
  for (const auto& [socket, a] : actual_) out.push_back(a.plugin);
  return out;
}

void PluginManager::Loop() {
  Reconcile();
  tick_->Reset(options_.clock->Now() + options_.reconcile_period);
  for (;;) {
    struct pollfd fds[3] = {
        {stop_fd_, POLLIN, 0}, {watcher_->fd(), POLLIN, 0}, {tick_->fd(), POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      KLOG_ERROR(absl::InternalError("poll failed"), "Plugin manager stopped");
      return;
    }
    if (fds[0].revents != 0) return;
    if (fds[1].revents != 0) DrainWatcher();
    if (fds[2].revents != 0) {
      tick_->Clear();
      Reconcile();
      tick_->Reset(options_.clock->Now() + options_.reconcile_period);
    }
  }
}

void PluginManager::DrainWatcher() {
  for (const WatchEvent& e : watcher_->Read()) {
    if (e.kind == WatchEvent::Kind::kSocketCreated) {
      if (desired_.count(e.path) != 0) {
        KLOG_V(2, "Plugin exists in desired state cache, timestamp will be updated", "path",
               e.path);
      } else {
        KLOG_V(2, "Adding socket path or updating timestamp to desired state cache", "path",
               e.path);
      }
      desired_[e.path] = Desired{next_generation_++};
      backoff_.erase(e.path);
    } else if (desired_.erase(e.path) != 0) {
      KLOG_V(2, "Removing socket path from desired state cache", "path", e.path);
      backoff_.erase(e.path);
    }
  }
}

void PluginManager::Reconcile() {
  std::vector<std::string> stale;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [socket, a] : actual_) {
      auto d = desired_.find(socket);
      if (d == desired_.end() || d->second.generation != a.generation) {
        if (d != desired_.end()) {
          KLOG_V(5,
                 "An updated version of plugin has been found, unregistering the plugin first "
                 "before reregistering",
                 "path", socket);
        }
        stale.push_back(socket);
      }
    }
  }
  for (const std::string& socket : stale) {
    KLOG_V(5, "Starting operationExecutor.UnregisterPlugin", "path", socket);
    Unregister(socket);
  }
  const absl::Time now = options_.clock->Now();
  for (const auto& [socket, d] : desired_) {
    {
      absl::MutexLock lock(&mu_);
      auto a = actual_.find(socket);
      if (a != actual_.end() && a->second.generation == d.generation) continue;
    }
    auto b = backoff_.find(socket);
    if (b != backoff_.end() && now < b->second.retry_at) continue;
    KLOG_V(5, "Starting operationExecutor.RegisterPlugin", "path", socket);
    KLOG_V(1, "OperationExecutor.RegisterPlugin started", "path", socket);
    absl::Status st = Register(socket, d.generation);
    if (st.ok()) {
      backoff_.erase(socket);
      continue;
    }
    KLOG_ERROR(st, "OperationExecutor.RegisterPlugin failed", "path", socket);
    NoteFailure(socket, st);
  }
}

void PluginManager::NoteFailure(const std::string& socket, const absl::Status& st) {
  Backoff& b = backoff_[socket];
  b.last = b.last == absl::ZeroDuration() ? options_.initial_backoff : b.last * 2;
  if (b.last > options_.max_backoff) b.last = options_.max_backoff;
  b.retry_at = options_.clock->Now() + b.last;
  KLOG_ERROR(st, absl::StrCat("Operation for \"", socket, "\" failed. No retries permitted until ",
                              absl::FormatTime(absl::RFC3339_full, b.retry_at, absl::UTCTimeZone()),
                              " (durationBeforeRetry ", FormatGoDuration(b.last), ")"));
}

absl::Status PluginManager::Register(const std::string& socket, uint64_t generation) {
  RegistrationClient& client = *options_.client;
  absl::StatusOr<PluginInfo> info =
      client.GetInfo(socket, options_.dial_timeout, options_.get_info_timeout);
  if (!info.ok()) return info.status();
  auto notify_failure = [&](const std::string& msg) {
    absl::Status n = client.NotifyRegistrationStatus(socket, false, msg, options_.notify_timeout);
    if (!n.ok()) KLOG_ERROR(n, "Failed to send registration status", "path", socket);
  };
  auto h = handlers_.find(info->type);
  if (h == handlers_.end() || h->second == nullptr) {
    const std::string msg =
        absl::StrCat("RegisterPlugin error -- no handler registered for plugin type: ", info->type,
                     " at socket ", socket);
    notify_failure(msg);
    return absl::FailedPreconditionError(msg);
  }
  PluginHandler* handler = h->second;
  if (info->endpoint.empty()) info->endpoint = socket;
  if (absl::Status v =
          handler->ValidatePlugin(info->name, info->endpoint, info->supported_versions);
      !v.ok()) {
    notify_failure(
        absl::StrCat("RegisterPlugin error -- plugin validation failed with err: ", v.message()));
    return absl::FailedPreconditionError(
        "RegisterPlugin error -- pluginHandler.ValidatePluginFunc failed");
  }
  {
    // Recorded before RegisterPlugin, so that a socket deleted meanwhile is deregistered.
    absl::MutexLock lock(&mu_);
    actual_[socket] = Actual{generation, handler,
                             RegisteredPlugin{socket, info->type, info->name, info->endpoint}};
  }
  if (absl::Status r =
          handler->RegisterPlugin(info->name, info->endpoint, info->supported_versions);
      !r.ok()) {
    const std::string msg =
        absl::StrCat("RegisterPlugin error -- plugin registration failed with err: ", r.message());
    absl::Status n = client.NotifyRegistrationStatus(socket, false, msg, options_.notify_timeout);
    return n.ok() ? absl::UnknownError(msg) : n;
  }
  absl::Status n = client.NotifyRegistrationStatus(socket, true, "", options_.notify_timeout);
  if (!n.ok()) {
    return absl::UnavailableError(
        absl::StrCat("RegisterPlugin error -- failed to send registration status at socket ",
                     socket, ", err: ", n.message()));
  }
  return absl::OkStatus();
}

void PluginManager::Unregister(const std::string& socket) {
  Actual a;
  {
    absl::MutexLock lock(&mu_);
    auto it = actual_.find(socket);
    if (it == actual_.end()) return;
    a = std::move(it->second);
    actual_.erase(it);
  }
  if (a.handler == nullptr) {
    KLOG_ERROR(absl::InternalError(absl::StrCat(
                   "UnregisterPlugin error -- failed to get plugin handler for ", socket)),
               "OperationExecutor.UnregisterPlugin failed", "path", socket);
    return;
  }
  a.handler->DeRegisterPlugin(a.plugin.name);
  KLOG_V(4, "DeRegisterPlugin called", "pluginName", a.plugin.name, "pluginHandler", a.plugin.type);
}

}  // namespace kubelet::pluginmanager
