// A plugin's registration endpoint for tests: a real gRPC Registration server on a unix socket
// (so the manager's own client, watcher and socket handling are exercised), answering GetInfo
// with a given PluginInfo and recording the statuses it is notified of. Thread-safe.
#ifndef KUBELET_KUBELET_PLUGINMANAGER_TESTING_FAKE_PLUGIN_H_
#define KUBELET_KUBELET_PLUGINMANAGER_TESTING_FAKE_PLUGIN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kubelet/pluginmanager/plugin_manager.h"

namespace kubelet::pluginmanager::testing {

struct NotifiedStatus {
  bool registered = false;
  std::string error;
};

class FakePlugin {
 public:
  // Serves on `socket_path` (created by the server).
  static absl::StatusOr<std::unique_ptr<FakePlugin>> Start(const std::string& socket_path,
                                                           PluginInfo info);
  ~FakePlugin();  // stops serving and removes the socket

  std::vector<NotifiedStatus> Notified() const;
  int GetInfoCalls() const;
  const std::string& socket_path() const;

  class Impl;

 private:
  explicit FakePlugin(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubelet::pluginmanager::testing

#endif  // KUBELET_KUBELET_PLUGINMANAGER_TESTING_FAKE_PLUGIN_H_
