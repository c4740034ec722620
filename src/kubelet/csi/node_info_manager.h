// What a registered CSI driver changes on the API server (upstream's nodeinfomanager, v1.28):
//  * the Node: annotation csi.volume.kubernetes.io/nodeid, a JSON map driver -> node ID (keys
//    sorted; removed when the last driver goes), and one label per topology segment (a label
//    already there with another value is an error: "detected topology value collision: driver
//    reported "k":"v" but existing label is "k":"cur""; labels are never removed). Written with a
//    strategic-merge PATCH of the Node's metadata, only when something changed (upstream patches
//    through nodes/<name>/status; the object ends the same).
//  * the CSINode <node name> (storage.k8s.io/v1): created when missing, owned by the Node, with
//    the storage.alpha.kubernetes.io/migrated-plugins annotation; spec.drivers gets
//    {name, nodeID, topologyKeys (sorted), allocatable.count when maxVolumes > 0}, appended after
//    the other drivers; rewritten (PUT) only when the node ID or the topology keys changed; on
//    uninstall the entry is dropped (an empty CSINode is kept).
// Install writes the Node, then the CSINode; Uninstall the CSINode, then the Node. Each write
// retries conflicts and errors 4 times (10 ms, x5). An empty node ID is refused ("error adding
// CSI driver node info: driverNodeID must not be empty"). Thread-safe (calls are serialized).
#ifndef KUBELET_KUBELET_CSI_NODE_INFO_MANAGER_H_
#define KUBELET_KUBELET_CSI_NODE_INFO_MANAGER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "apiclient/rest_client.h"
#include "common/clock.h"

namespace kubelet::csi {

inline constexpr char kNodeIdAnnotation[] = "csi.volume.kubernetes.io/nodeid";
inline constexpr char kMigratedPluginsAnnotation[] = "storage.alpha.kubernetes.io/migrated-plugins";

class NodeInfoManager {
 public:
  virtual ~NodeInfoManager() = default;
  virtual absl::Status InstallDriver(const std::string& driver, const std::string& node_id,
                                     int64_t max_volumes,
                                     const std::map<std::string, std::string>& topology) = 0;
  virtual absl::Status UninstallDriver(const std::string& driver) = 0;
};

// On the API client; `client` and `clock` are borrowed.
std::unique_ptr<NodeInfoManager> NewApiNodeInfoManager(apiclient::RestClient& client, Clock& clock,
                                                       std::string node_name);

}  // namespace kubelet::csi

#endif  // KUBELET_KUBELET_CSI_NODE_INFO_MANAGER_H_
