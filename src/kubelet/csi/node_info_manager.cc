#include "kubelet/csi/node_info_manager.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/meta_codec.h"
#include "api/node.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::csi {
namespace {

using Json = nlohmann::json;

constexpr char kCSINodesPath[] = "/apis/storage.k8s.io/v1/csinodes";
constexpr char kNodesPath[] = "/api/v1/nodes";

// The in-tree plugins whose CSI migration is on in v1.28 without a gate, sorted and joined.
constexpr char kMigratedPlugins[] =
    "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,"
    "kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/vsphere-volume";

class ApiNodeInfoManager final : public NodeInfoManager {
 public:
  ApiNodeInfoManager(apiclient::RestClient& client, Clock& clock, std::string node)
      : client_(client), clock_(clock), node_(std::move(node)) {}

  absl::Status InstallDriver(const std::string& driver, const std::string& node_id,
                             int64_t max_volumes,
                             const std::map<std::string, std::string>& topology) override {
    if (node_id.empty()) {
      return absl::InvalidArgumentError(
          "error adding CSI driver node info: driverNodeID must not be empty");
    }
    absl::MutexLock lock(&mu_);
    absl::Status st = Retry("error updating node", [&] {
      return UpdateNode(
          [&](api::ObjectMeta* md) { return AddNodeId(md, driver, node_id, topology); });
    });
    if (!st.ok()) {
      return absl::Status(
          st.code(),
          absl::StrCat("error updating Node object with CSI driver node info: ", st.message()));
    }
    st = Retry("error updating CSINode", [&] {
      return UpdateCSINode([&](Json* csinode) {
        return InstallInCSINode(csinode, driver, node_id, max_volumes, topology);
      });
    });
    if (!st.ok()) {
      return absl::Status(
          st.code(),
          absl::StrCat("error updating CSINode object with CSI driver node info: ", st.message()));
    }
    return absl::OkStatus();
  }

  absl::Status UninstallDriver(const std::string& driver) override {
    absl::MutexLock lock(&mu_);
    absl::Status st = Retry("error updating CSINode", [&] {
      return UpdateCSINode([&](Json* csinode) { return RemoveFromCSINode(csinode, driver); },
                           /*create=*/false);
    });
    if (!st.ok()) {
      return absl::Status(
          st.code(),
          absl::StrCat("error removing CSI driver node info from CSINode object ", st.message()));
    }
    st = Retry("error updating node", [&] {
      return UpdateNode([&](api::ObjectMeta* md) { return RemoveNodeId(md, driver); });
    });
    if (!st.ok()) {
      return absl::Status(
          st.code(),
          absl::StrCat("error removing CSI driver node info from Node object ", st.message()));
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<apiclient::Response> Call(const std::string& method, const std::string& path,
                                           std::string body = {}, std::string content_type = {}) {
    apiclient::Request r;
    r.method = method;
    r.path = path;
    r.body = std::move(body);
    r.content_type = std::move(content_type);
    return client_.Do(r);
  }

  // Tries `fn` up to 4 times, 10 ms apart growing x5 (upstream's updateBackoff).
  absl::Status Retry(const std::string& what, const std::function<absl::Status()>& fn) {
    absl::Duration wait = absl::Milliseconds(10);
    absl::Status last;
    for (int i = 0; i < 4; ++i) {
      try {
        last = fn();
      } catch (const std::exception& e) {  // an object of unexpected shape from the server
        last = absl::DataLossError(e.what());
      }
      if (last.ok()) return last;
      if (absl::IsInvalidArgument(last)) break;  // not worth another try
      absl::Mutex sleep_mu;
      absl::MutexLock sleep(&sleep_mu);
      const bool never = false;
      clock_.AwaitWithTimeout(sleep_mu, absl::Condition(&never), wait);
      wait *= 5;
    }
    return absl::Status(last.code(), absl::StrCat(what, ": ", last.message()));
  }

  // The Node as the API server has it.
  absl::StatusOr<api::Node> GetNode() {
    absl::StatusOr<apiclient::Response> got = Call("GET", absl::StrCat(kNodesPath, "/", node_));
    if (!got.ok()) return got.status();
    if (absl::Status st = apiclient::ResponseStatus(*got); !st.ok()) return st;
    return api::FromJson<api::Node>(apiclient::ParseBoundedJson(got->body));
  }

  // GETs the Node, applies `change` to its metadata (true when it changed something), PATCHes
  // the labels and annotations that differ.
  absl::Status UpdateNode(const std::function<absl::StatusOr<bool>(api::ObjectMeta*)>& change) {
    absl::StatusOr<api::Node> node = GetNode();
    if (!node.ok()) return node.status();
    const api::ObjectMeta before = node->metadata;
    absl::StatusOr<bool> changed = change(&node->metadata);
    if (!changed.ok()) return changed.status();
    if (!*changed) return absl::OkStatus();
    absl::StatusOr<apiclient::Response> r =
        Call("PATCH", absl::StrCat(kNodesPath, "/", node_),
             api::SerializeJson(api::MetadataMapsPatch(before, node->metadata)),
             apiclient::kStrategicMergePatchType);
    if (!r.ok()) return r.status();
    return apiclient::ResponseStatus(*r);
  }

  // The driver -> node ID map of the annotation (empty when absent).
  static absl::StatusOr<Json> NodeIds(const api::ObjectMeta& md) {
    auto it = md.annotations.find(kNodeIdAnnotation);
    if (it == md.annotations.end()) return Json::object();
    Json ids = apiclient::ParseBoundedJson(it->second);
    if (!ids.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat("failed to parse node's \"", kNodeIdAnnotation,
                                                     "\" annotation value (",
                                                     log::Quote(it->second), ")"));
    }
    return ids;
  }

  static absl::StatusOr<bool> AddNodeId(api::ObjectMeta* md, const std::string& driver,
                                        const std::string& node_id,
                                        const std::map<std::string, std::string>& topology) {
    absl::StatusOr<Json> ids = NodeIds(*md);
    if (!ids.ok()) return ids.status();
    bool changed = false;
    if (ids->value(driver, "") != node_id) {
      (*ids)[driver] = node_id;
      md->annotations[kNodeIdAnnotation] = ids->dump();  // keys sorted, compact
      changed = true;
    }
    for (const auto& [k, v] : topology) {
      auto it = md->labels.find(k);
      if (it == md->labels.end()) {
        md->labels[k] = v;
        changed = true;
      } else if (it->second != v) {
        return absl::InvalidArgumentError(
            absl::StrCat("detected topology value collision: driver reported \"", k, "\":\"", v,
                         "\" but existing label is \"", k, "\":\"", it->second, "\""));
      }
    }
    return changed;
  }

  static absl::StatusOr<bool> RemoveNodeId(api::ObjectMeta* md, const std::string& driver) {
    absl::StatusOr<Json> ids = NodeIds(*md);
    if (!ids.ok() || !ids->contains(driver)) return false;
    ids->erase(driver);
    if (ids->empty()) {
      md->annotations.erase(kNodeIdAnnotation);
    } else {
      md->annotations[kNodeIdAnnotation] = ids->dump();
    }
    return true;
  }

  // GETs the CSINode (creating it when missing and `create`), applies `change`, PUTs it back.
  absl::Status UpdateCSINode(const std::function<bool(Json*)>& change, bool create = true) {
    const std::string path = absl::StrCat(kCSINodesPath, "/", node_);
    absl::StatusOr<apiclient::Response> got = Call("GET", path);
    if (!got.ok()) return got.status();
    if (got->code == 404) {
      if (!create) return absl::OkStatus();
      absl::StatusOr<Json> created = CreateCSINode();
      if (!created.ok()) return created.status();
      Json csinode = *std::move(created);
      if (!change(&csinode)) return absl::OkStatus();
      return Put(path, csinode);
    }
    if (absl::Status st = apiclient::ResponseStatus(*got); !st.ok()) return st;
    Json csinode = apiclient::ParseBoundedJson(got->body);
    if (!csinode.is_object()) return absl::DataLossError("the CSINode is not a JSON object");
    if (!change(&csinode)) return absl::OkStatus();
    return Put(path, csinode);
  }

  absl::Status Put(const std::string& path, const Json& csinode) {
    absl::StatusOr<apiclient::Response> r = Call("PUT", path, csinode.dump());
    if (!r.ok()) return r.status();
    return apiclient::ResponseStatus(*r);
  }

  absl::StatusOr<Json> CreateCSINode() {
    absl::StatusOr<api::Node> node = GetNode();
    if (!node.ok()) return node.status();
    const std::string& uid = node->metadata.uid;
    Json csinode = {
        {"apiVersion", "storage.k8s.io/v1"},
        {"kind", "CSINode"},
        {"metadata",
         {{"name", node_},
          {"annotations", {{kMigratedPluginsAnnotation, kMigratedPlugins}}},
          {"ownerReferences",
           Json::array(
               {{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node_}, {"uid", uid}}})}}},
        {"spec", {{"drivers", Json::array()}}}};
    absl::StatusOr<apiclient::Response> r = Call("POST", kCSINodesPath, csinode.dump());
    if (!r.ok()) return r.status();
    if (absl::Status st = apiclient::ResponseStatus(*r); !st.ok()) return st;
    Json out = apiclient::ParseBoundedJson(r->body);
    if (!out.is_object()) return absl::DataLossError("the created CSINode is not a JSON object");
    return out;
  }

  static bool SetMigrationAnnotation(Json* csinode) {
    Json& ann = (*csinode)["metadata"]["annotations"];
    if (ann.is_object() && ann.value(kMigratedPluginsAnnotation, "") == kMigratedPlugins) {
      return false;
    }
    ann[kMigratedPluginsAnnotation] = kMigratedPlugins;
    return true;
  }

  static bool InstallInCSINode(Json* csinode, const std::string& driver, const std::string& node_id,
                               int64_t max_volumes,
                               const std::map<std::string, std::string>& topology) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : topology) keys.push_back(k);  // std::map: sorted
    Json& spec = (*csinode)["spec"];
    Json drivers = spec.value("drivers", Json::array());
    if (!drivers.is_array()) drivers = Json::array();
    bool migration_changed = SetMigrationAnnotation(csinode);
    for (const Json& d : drivers) {
      if (!d.is_object() || d.value("name", "") != driver) continue;
      std::set<std::string> have;
      for (const Json& k : d.value("topologyKeys", Json::array())) {
        if (k.is_string()) have.insert(k.get<std::string>());
      }
      if (d.value("nodeID", "") == node_id &&
          have == std::set<std::string>(keys.begin(), keys.end()) && !migration_changed) {
        return false;
      }
    }
    Json kept = Json::array();
    for (const Json& d : drivers) {
      if (!d.is_object() || d.value("name", "") != driver) kept.push_back(d);
    }
    Json entry = {{"name", driver}, {"nodeID", node_id}, {"topologyKeys", keys}};
    if (max_volumes > 0) {
      int64_t count = max_volumes;
      if (count > 2147483647) {
        KLOG_INFO("Exceeded max supported attach limit value, truncating it to 2147483647");
        count = 2147483647;
      }
      entry["allocatable"] = {{"count", count}};
    } else {
      KLOG_ERROR(absl::InvalidArgumentError(
                     absl::StrCat("Invalid attach limit value ", max_volumes,
                                  " cannot be added to CSINode object for \"", driver, "\"")),
                 "Invalid attach limit");
    }
    kept.push_back(std::move(entry));
    spec["drivers"] = std::move(kept);
    return true;
  }

  static bool RemoveFromCSINode(Json* csinode, const std::string& driver) {
    Json& spec = (*csinode)["spec"];
    Json drivers = spec.value("drivers", Json::array());
    if (!drivers.is_array()) return false;
    Json kept = Json::array();
    for (const Json& d : drivers) {
      if (!d.is_object() || d.value("name", "") != driver) kept.push_back(d);
    }
    if (kept.size() == drivers.size()) return false;
    spec["drivers"] = std::move(kept);
    return true;
  }

  apiclient::RestClient& client_;
  Clock& clock_;
  const std::string node_;
  absl::Mutex mu_;
};

}  // namespace

std::unique_ptr<NodeInfoManager> NewApiNodeInfoManager(apiclient::RestClient& client, Clock& clock,
                                                       std::string node_name) {
  return std::make_unique<ApiNodeInfoManager>(client, clock, std::move(node_name));
}

}  // namespace kubelet::csi
