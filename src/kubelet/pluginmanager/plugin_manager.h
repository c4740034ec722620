// The kubelet plugin manager: discovers plugins (CSI drivers' registrars, device plugins) by the
// registration sockets they create below <root-dir>/plugins_registry, asks each what it is, hands
// it to the handler registered for its type, and tells it the outcome; a plugin whose socket goes
// away is deregistered. Upstream v1.28's pluginmanager, in one component:
//  * Discovery (plugin_watcher.h): the directory is created (0755) and watched recursively with
//    inotify; sockets present at Start are found by a walk. Names starting with '.' are ignored
//    when created (a walk at Start still descends into dot directories, as upstream's). A socket
//    that is created again (a plugin restart) is a new generation: deregistered, then registered.
//  * Reconciling, every `reconcile_period` (1 s) on the manager's thread, removals first: a
//    registered plugin whose socket is gone or re-created is deregistered (no call to the plugin);
//    then each socket not registered in its current generation is registered:
//      dial (10 s) -> GetInfo (1 s) -> handler for PluginInfo.type (none: Notify(false, "no
//      handler registered for plugin type: T at socket S")) -> an empty endpoint becomes the
//      socket -> handler.ValidatePlugin (error: Notify(false, "plugin validation failed with err:
//      E")) -> recorded as registered -> handler.RegisterPlugin (error: Notify(false, "plugin
//      registration failed with err: E")) -> Notify(true) (5 s).
//    A failed attempt before the plugin is recorded is retried with exponential back-off per
//    socket (500 ms doubling, at most 2m2s). As upstream v1.28, a plugin whose RegisterPlugin or
//    final Notify failed stays recorded and is not retried until its socket is re-created.
//  * Logs and errors use upstream's texts ("RegisterPlugin error -- ...", "OperationExecutor.
//    RegisterPlugin failed", "Operation for \"S\" failed. No retries permitted until ...").
// Handlers run on the manager's thread, one operation at a time. A plugin that hangs costs only
// its timeouts; nothing here touches pods. Thread-safety: AddHandler before Start; Plugins() from
// any thread. Stop() (or the destructor) ends the thread and waits for it.
#ifndef KUBELET_KUBELET_PLUGINMANAGER_PLUGIN_MANAGER_H_
#define KUBELET_KUBELET_PLUGINMANAGER_PLUGIN_MANAGER_H_

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace kubelet::pluginmanager {

// The plugin types of the registration API.
inline constexpr char kCSIPlugin[] = "CSIPlugin";
inline constexpr char kDevicePlugin[] = "DevicePlugin";
inline constexpr char kDRAPlugin[] = "DRAPlugin";

// What a plugin type's owner (the CSI volume plugin, the device manager) implements.
class PluginHandler {
 public:
  virtual ~PluginHandler() = default;
  // Whether the plugin can be registered (versions, name clashes); no side effects.
  virtual absl::Status ValidatePlugin(const std::string& name, const std::string& endpoint,
                                      const std::vector<std::string>& versions) = 0;
  virtual absl::Status RegisterPlugin(const std::string& name, const std::string& endpoint,
                                      const std::vector<std::string>& versions) = 0;
  virtual void DeRegisterPlugin(const std::string& name) = 0;
};

// A registration socket's answer to GetInfo.
struct PluginInfo {
  std::string type;
  std::string name;
  std::string endpoint;
  std::vector<std::string> supported_versions;
};

// Talks to one plugin's registration socket (registration_client.h has the gRPC one).
class RegistrationClient {
 public:
  virtual ~RegistrationClient() = default;
  // Connects within `dial_timeout`, then calls GetInfo within `timeout`.
  virtual absl::StatusOr<PluginInfo> GetInfo(const std::string& socket_path,
                                             absl::Duration dial_timeout,
                                             absl::Duration timeout) = 0;
  // NotifyRegistrationStatus; an error only when the call itself failed.
  virtual absl::Status NotifyRegistrationStatus(const std::string& socket_path, bool registered,
                                                const std::string& error,
                                                absl::Duration timeout) = 0;
};

struct PluginManagerOptions {
  std::string registry_dir;              // <root-dir>/plugins_registry
  Clock* clock = nullptr;                // required
  RegistrationClient* client = nullptr;  // required; borrowed
  absl::Duration reconcile_period = absl::Seconds(1);
  absl::Duration dial_timeout = absl::Seconds(10);
  absl::Duration get_info_timeout = absl::Seconds(1);
  absl::Duration notify_timeout = absl::Seconds(5);
  absl::Duration initial_backoff = absl::Milliseconds(500);
  absl::Duration max_backoff = absl::Minutes(2) + absl::Seconds(2);
};

// A plugin as the manager has registered it.
struct RegisteredPlugin {
  std::string socket_path;
  std::string type;
  std::string name;
  std::string endpoint;
};

class PluginWatcher;

class PluginManager {
 public:
  explicit PluginManager(PluginManagerOptions options);
  ~PluginManager();
  PluginManager(const PluginManager&) = delete;
  PluginManager& operator=(const PluginManager&) = delete;

  // Before Start. `handler` is borrowed and must outlive the manager.
  void AddHandler(const std::string& type, PluginHandler* handler);
  // Creates and watches the directory, finds the sockets already there and starts the thread.
  absl::Status Start();
  void Stop();

  std::vector<RegisteredPlugin> Plugins() const;

 private:
  struct Desired {
    uint64_t generation = 0;
  };
  struct Actual {
    uint64_t generation = 0;
    PluginHandler* handler = nullptr;
    RegisteredPlugin plugin;
  };
  struct Backoff {
    absl::Time retry_at;
    absl::Duration last;
  };

  void Loop();
  void DrainWatcher();
  void Reconcile();
  // One registration attempt (its error as upstream words it).
  absl::Status Register(const std::string& socket, uint64_t generation);
  void Unregister(const std::string& socket);
  void NoteFailure(const std::string& socket, const absl::Status& st);

  PluginManagerOptions options_;
  std::map<std::string, PluginHandler*> handlers_;
  std::unique_ptr<PluginWatcher> watcher_;
  std::unique_ptr<Timer> tick_;
  int stop_fd_ = -1;
  std::thread thread_;
  uint64_t next_generation_ = 1;

  // Owned by the manager's thread.
  std::map<std::string, Desired> desired_;
  std::map<std::string, Backoff> backoff_;

  mutable absl::Mutex mu_;
  std::map<std::string, Actual> actual_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::pluginmanager

#endif  // KUBELET_KUBELET_PLUGINMANAGER_PLUGIN_MANAGER_H_
