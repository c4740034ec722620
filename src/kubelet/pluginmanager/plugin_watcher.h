// Internal to the plugin manager: the registration directory watched with inotify, recursively.
// Reports sockets that appear (at Start, by a walk; later, by IN_CREATE) and paths that are
// deleted (IN_DELETE; no check that they were sockets, as upstream). Not thread-safe: used by the
// manager's thread (Start before the thread runs).
#ifndef KUBELET_KUBELET_PLUGINMANAGER_PLUGIN_WATCHER_H_
#define KUBELET_KUBELET_PLUGINMANAGER_PLUGIN_WATCHER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kubelet::pluginmanager {

struct WatchEvent {
  enum class Kind { kSocketCreated, kRemoved };
  Kind kind;
  std::string path;
};

class PluginWatcher {
 public:
  // Creates `dir` (0755, parents too), watches it and every directory below it, and returns the
  // sockets already there in `*existing`.
  static absl::StatusOr<std::unique_ptr<PluginWatcher>> Start(const std::string& dir,
                                                              std::vector<WatchEvent>* existing);
  ~PluginWatcher();
  PluginWatcher(const PluginWatcher&) = delete;
  PluginWatcher& operator=(const PluginWatcher&) = delete;

  int fd() const { return fd_; }
  // The events pending on fd() (non-blocking; empty when none).
  std::vector<WatchEvent> Read();

 private:
  explicit PluginWatcher(int fd) : fd_(fd) {}
  // Watches `dir` and walks it: sub-directories are watched in turn, sockets reported.
  void WatchTree(const std::string& dir, std::vector<WatchEvent>* out);
  void HandleCreate(const std::string& path, std::vector<WatchEvent>* out);

  int fd_;
  std::map<int, std::string> dirs_;  // watch descriptor -> directory
};

}  // namespace kubelet::pluginmanager

#endif  // KUBELET_KUBELET_PLUGINMANAGER_PLUGIN_WATCHER_H_
