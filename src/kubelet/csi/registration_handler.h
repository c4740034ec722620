// The CSI driver registry and the plugin manager's handler for "CSIPlugin" (upstream's
// csi_plugin.go RegistrationHandler, v1.28):
//  * ValidatePlugin: the versions must hold a usable 1.x (csi_version.h), and a driver of the
//    same name must not be registered with an equal or higher version ("... failed. Another
//    driver with the same name is already registered with a higher supported version: "V"").
//  * RegisterPlugin: records name -> {endpoint, highest version}, calls NodeGetInfo (2 min) and
//    installs the driver's node info (node_info_manager.h); a failure of either undoes the record.
//  * DeRegisterPlugin: drops the record and uninstalls the node info.
// Log lines carry upstream's "kubernetes.io/csi: " prefix. Thread-safe.
#ifndef KUBELET_KUBELET_CSI_REGISTRATION_HANDLER_H_
#define KUBELET_KUBELET_CSI_REGISTRATION_HANDLER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "kubelet/csi/csi_client.h"
#include "kubelet/csi/csi_version.h"
#include "kubelet/csi/node_info_manager.h"
#include "kubelet/pluginmanager/plugin_manager.h"

namespace kubelet::csi {

struct Driver {
  std::string endpoint;
  Version highest_version;
};

// Registered drivers by name. Thread-safe.
class DriverRegistry {
 public:
  void Set(const std::string& name, Driver d);
  void Delete(const std::string& name);
  std::optional<Driver> Get(const std::string& name) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, Driver> drivers_ ABSL_GUARDED_BY(mu_);
};

class RegistrationHandler final : public pluginmanager::PluginHandler {
 public:
  // All borrowed; `node_info` may be null (standalone: no API server to tell).
  RegistrationHandler(DriverRegistry& drivers, CsiClient& client, NodeInfoManager* node_info,
                      absl::Duration timeout = absl::Minutes(2))
      : drivers_(drivers), client_(client), node_info_(node_info), timeout_(timeout) {}

  absl::Status ValidatePlugin(const std::string& name, const std::string& endpoint,
                              const std::vector<std::string>& versions) override;
  absl::Status RegisterPlugin(const std::string& name, const std::string& endpoint,
                              const std::vector<std::string>& versions) override;
  void DeRegisterPlugin(const std::string& name) override;

 private:
  absl::StatusOr<Version> ValidateVersions(const std::string& caller, const std::string& name,
                                           const std::vector<std::string>& versions);
  void Unregister(const std::string& name);

  DriverRegistry& drivers_;
  CsiClient& client_;
  NodeInfoManager* node_info_;
  const absl::Duration timeout_;
};

}  // namespace kubelet::csi

#endif  // KUBELET_KUBELET_CSI_REGISTRATION_HANDLER_H_
