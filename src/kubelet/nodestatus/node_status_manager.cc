// Registration, status updates and the node Lease against the API server (see node_status.h).
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "api/codec.h"
#include "api/meta_codec.h"
#include "common/cancellation.h"
#include "common/guarded.h"
#include "common/jitter.h"
#include "common/log.h"
#include "kubelet/nodestatus/node_status.h"

namespace kubelet::nodestatus {
namespace {

// Upstream nodeStatusUpdateRetry and the lease controller's maxUpdateRetries.
constexpr int kUpdateRetries = 5;
// Registration back-off (upstream registerWithAPIServer) and the lease's maxBackoff.
constexpr absl::Duration kMaxBackoff = absl::Seconds(7);
// While the node is not Ready, its status is computed this often (upstream's fast status update
// polls until the runtime is ready).
constexpr absl::Duration kNotReadyInterval = absl::Seconds(1);

constexpr char kNodesPath[] = "/api/v1/nodes";
constexpr char kLeasesPath[] = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";

// The labels a NodeRestriction refusal names ("... is not allowed to set the following labels:
// a, b"), among those the node carries.
std::vector<std::string> RefusedLabels(absl::string_view message,
                                       const std::map<std::string, std::string>& labels) {
  std::vector<std::string> out;
  const absl::string_view marker = "is not allowed to set the following labels: ";
  const size_t at = message.find(marker);
  if (at == absl::string_view::npos) return out;
  for (absl::string_view l : absl::StrSplit(message.substr(at + marker.size()),
                                            absl::ByAnyChar(", "), absl::SkipEmpty())) {
    std::string key(l);
    if (labels.count(key) > 0) out.push_back(key);
  }
  return out;
}

absl::Status StatusOf(const absl::StatusOr<apiclient::Response>& r) {
  if (!r.ok()) return r.status();
  return apiclient::ResponseStatus(*r);
}

class Manager final : public NodeStatusManager {
 public:
  Manager(NodeStatusOptions options, std::shared_ptr<apiclient::RestClient> client, Clock& clock)
      : o_(std::move(options)), client_(std::move(client)), clock_(clock) {}

  ~Manager() override { Stop(); }

  void Start() override {
    absl::MutexLock lock(&mu_);
    if (started_ || stopping_) return;
    started_ = true;
    cancel_ = std::make_shared<Cancellation>();
    next_status_ = next_lease_ = clock_.Now();
    loop_ = LoopsOrOwn(o_.loops, own_loops_, clock_)
                .Start("node status loop", absl::InfinitePast(), [this, c = cancel_](bool) {
                  ScopedCancellation scope(c);
                  return Round();
                });
  }

  void Stop() override {
    std::shared_ptr<Cancellation> c;
    Loop* loop;
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      c = cancel_;
      loop = loop_.get();
    }
    if (c) c->Cancel();
    if (loop != nullptr) loop->Stop();
  }

  absl::Status SyncNodeStatus() override {
    if (!Registered()) {
      if (!o_.register_node) return UpdateStatus();
      absl::Status st = TryRegister();
      if (!st.ok()) return st;
    }
    return UpdateStatus();
  }

  absl::Status RenewLease() override {
    absl::Status last;
    for (int i = 0; i < kUpdateRetries; ++i) {
      if (Stopping()) return absl::CancelledError("stopping");
      if (!lease_) {
        absl::Status st = EnsureLease();
        if (!st.ok()) return st;
      }
      api::Lease lease = *lease_;
      lease.spec.holder_identity = o_.node_name;
      lease.spec.lease_duration_seconds = o_.lease_duration_seconds;
      absl::Time now = clock_.Now();
      const int64_t secs = absl::ToUnixSeconds(now);
      const int64_t micros = absl::ToInt64Microseconds(now - absl::FromUnixSeconds(secs));
      lease.spec.renew_time = api::MicroTime::FromUnix(secs, static_cast<int32_t>(micros * 1000));
      SetOwner(&lease);
      auto r = Do("PUT", absl::StrCat(kLeasesPath, "/", o_.node_name), api::Encode(lease));
      last = StatusOf(r);
      if (last.ok()) {
        auto decoded = api::Decode<api::Lease>(r->body);
        if (decoded.ok()) {
          lease_ = std::move(*decoded);
        } else {
          lease_.reset();
        }
        return absl::OkStatus();
      }
      // A conflict (someone else wrote it) or a vanished Lease (its owner Node was deleted and
      // the garbage collector took it): read or create it again.
      lease_.reset();
      if (absl::IsAborted(last) || absl::IsNotFound(last)) continue;
      KLOG_ERROR(last, "Failed to update lease");
      return last;
    }
    return absl::UnavailableError(
        absl::StrCat("failed ", kUpdateRetries, " attempts to update lease: ", last.message()));
  }

  bool Registered() const override {
    absl::MutexLock lock(&mu_);
    return registered_;
  }
  std::string NodeUID() const override {
    absl::MutexLock lock(&mu_);
    return node_uid_;
  }

 private:
  bool Stopping() const {
    absl::MutexLock lock(&mu_);
    return stopping_;
  }

  absl::StatusOr<apiclient::Response> Do(const std::string& method, const std::string& path,
                                         std::string body = "",
                                         const std::string& content_type = "") {
    apiclient::Request req;
    req.method = method;
    req.path = path;
    req.body = std::move(body);
    req.content_type = content_type.empty() && !req.body.empty()
                           ? std::string(apiclient::kJsonContentType)
                           : content_type;
    req.timeout = o_.request_timeout;
    return client_->Do(req);
  }

  void SetRegistered(bool registered, const std::string& uid) {
    absl::MutexLock lock(&mu_);
    registered_ = registered;
    if (registered) node_uid_ = uid;
  }

  // The data of one round, from the callbacks (no lock held).
  struct Inputs {
    MachineFacts machine;
    std::vector<ImageInfo> images;
    std::vector<std::string> readiness_errors;
    std::vector<std::string> volumes_in_use;
  };
  Inputs Gather() {
    Inputs in;
    if (o_.machine) in.machine = o_.machine();
    if (o_.runtime_version) {
      auto v = o_.runtime_version();
      if (v.ok()) runtime_version_ = *v;
    }
    if (o_.images) {
      auto images = o_.images();
      if (images.ok()) {
        in.images = std::move(*images);
        last_images_ = in.images;
      } else {
        in.images = last_images_;
        KLOG_ERROR(images.status(), "Error getting image list");
      }
    }
    if (o_.readiness_errors) in.readiness_errors = o_.readiness_errors();
    if (o_.volumes_in_use) in.volumes_in_use = o_.volumes_in_use();
    return in;
  }

  // tryRegisterWithAPIServer.
  absl::Status TryRegister() {
    KLOG_INFO("Attempting to register node", "node", o_.node_name);
    Inputs in = Gather();
    api::Node initial = InitialNode(o_);
    for (const std::string& l : refused_labels_) initial.metadata.labels.erase(l);
    api::Node node = initial;
    SetNodeStatus(o_, in.machine, runtime_version_, in.images, in.readiness_errors,
                  in.volumes_in_use, clock_.Now(), &node);
    auto r = Do("POST", kNodesPath, api::Encode(node));
    absl::Status st = StatusOf(r);
    // NodeRestriction refuses labels a node may not set on itself (the role labels OpenShift's
    // kubelet passes): register without the ones it names rather than never registering.
    if (absl::IsPermissionDenied(st)) {
      std::vector<std::string> refused = RefusedLabels(st.message(), node.metadata.labels);
      if (!refused.empty()) {
        KLOG_WARNING("The API server refused labels of this node; registering without them", "node",
                     o_.node_name, "labels", absl::StrJoin(refused, ","), "reason",
                     std::string(st.message()));
        for (const std::string& l : refused) {
          refused_labels_.insert(l);
          initial.metadata.labels.erase(l);
          node.metadata.labels.erase(l);
        }
        r = Do("POST", kNodesPath, api::Encode(node));
        st = StatusOf(r);
      }
    }
    if (st.ok()) {
      auto created = api::Decode<api::Node>(r->body);
      SetRegistered(true, created.ok() ? created->metadata.uid : "");
      KLOG_INFO("Successfully registered node", "node", o_.node_name);
      register_failures_ = 0;
      return absl::OkStatus();
    }
    if (!absl::IsAlreadyExists(st)) return RegisterFailed(st);

    auto got = Do("GET", absl::StrCat(kNodesPath, "/", o_.node_name));
    st = StatusOf(got);
    if (!st.ok()) return RegisterFailed(st);
    auto existing = api::Decode<api::Node>(got->body);
    if (!existing.ok()) return RegisterFailed(existing.status());
    api::Node before = *existing;
    if (ReconcileExistingNode(initial, &*existing)) {
      auto p = Do("PATCH", absl::StrCat(kNodesPath, "/", o_.node_name),
                  api::SerializeJson(api::MetadataMapsPatch(before.metadata, existing->metadata)),
                  apiclient::kMergePatchType);
      st = StatusOf(p);
      if (!st.ok()) return RegisterFailed(st);
    }
    KLOG_INFO("Node was previously registered", "node", o_.node_name);
    SetRegistered(true, existing->metadata.uid);
    KLOG_INFO("Successfully registered node", "node", o_.node_name);
    register_failures_ = 0;
    return absl::OkStatus();
  }

  // Quiet while the API server is away: the first failure of a streak is an error, the
  // following ones are verbose.
  absl::Status RegisterFailed(const absl::Status& st) {
    if (register_failures_++ == 0) {
      KLOG_ERROR(st, "Unable to register node with API server", "node", o_.node_name);
    } else {
      KLOG_V(2, "Unable to register node with API server", "node", o_.node_name, "err", st,
             "attempts", register_failures_);
    }
    return st;
  }

  // updateNodeStatus: up to kUpdateRetries tries of tryUpdateNodeStatus.
  absl::Status UpdateStatus() {
    KLOG_V(5, "Updating node status");
    absl::Status st;
    for (int i = 0; i < kUpdateRetries; ++i) {
      if (Stopping()) return absl::CancelledError("stopping");
      st = TryUpdateStatus(i);
      if (st.ok() || absl::IsNotFound(st)) return st;
      KLOG_ERROR(st, "Error updating node status, will retry");
    }
    return absl::UnavailableError(
        absl::StrCat("update node status exceeds retry count: ", st.message()));
  }

  // tryUpdateNodeStatus: the first try starts from the watched Node, else from the API server's
  // cache; retries (after a conflict or an error) read from etcd.
  absl::StatusOr<api::Node> CurrentNode(int try_number) {
    if (try_number == 0 && o_.watched_node) {
      if (std::optional<api::Node> n = o_.watched_node()) return *std::move(n);
    }
    const std::string path = absl::StrCat(kNodesPath, "/", o_.node_name);
    auto got = Do("GET", try_number == 0 ? path + "?resourceVersion=0" : path);
    absl::Status st = StatusOf(got);
    // The cache may lag behind a Node registered a moment ago: only etcd says it is gone.
    if (try_number == 0 && absl::IsNotFound(st)) {
      got = Do("GET", path);
      st = StatusOf(got);
    }
    if (!st.ok()) return st;
    return api::Decode<api::Node>(got->body);
  }

  absl::Status TryUpdateStatus(int try_number) {
    absl::StatusOr<api::Node> original = CurrentNode(try_number);
    if (absl::IsNotFound(original.status())) return NodeGone();
    if (!original.ok())
      return absl::Status(
          original.status().code(),
          absl::StrCat("error getting node \"", o_.node_name, "\": ", original.status().message()));
    if (!original->metadata.uid.empty()) SetRegistered(true, original->metadata.uid);

    Inputs in = Gather();
    api::Node node = *original;
    const absl::Time now = clock_.Now();
    SetNodeStatus(o_, in.machine, runtime_version_, in.images, in.readiness_errors,
                  in.volumes_in_use, now, &node);
    last_ready_ = false;
    for (const api::NodeCondition& c : node.status.conditions) {
      if (c.type == api::kNodeReady) last_ready_ = c.status == api::kConditionTrue;
    }
    const bool changed = NodeStatusChanged(original->status, node.status);
    if (!changed && last_report_.has_value() && now - *last_report_ < o_.report_frequency) {
      if (o_.volumes_reported) o_.volumes_reported(original->status.volumes_in_use);
      return absl::OkStatus();
    }
    auto r = Do("PATCH", absl::StrCat(kNodesPath, "/", o_.node_name, "/status"),
                StatusPatch(*original, node), apiclient::kStrategicMergePatchType);
    absl::Status st = StatusOf(r);
    if (absl::IsNotFound(st)) return NodeGone();
    if (!st.ok()) return st;
    last_report_ = now;
    if (o_.volumes_reported) {
      auto updated = api::Decode<api::Node>(r->body);
      o_.volumes_reported(updated.ok() ? updated->status.volumes_in_use
                                       : node.status.volumes_in_use);
    }
    return absl::OkStatus();
  }

  absl::Status NodeGone() {
    KLOG_WARNING("Node not found on the API server, registering it again", "node", o_.node_name);
    {
      absl::MutexLock lock(&mu_);
      registered_ = false;
    }
    last_report_.reset();
    return absl::NotFoundError(absl::StrCat("node \"", o_.node_name, "\" not found"));
  }

  // A strategic merge patch of the parts of the status the kubelet owns. Conditions merge by
  // type (others' conditions stay); the addresses are replaced as a whole when the stored list
  // holds an address we no longer report.
  static std::string StatusPatch(const api::Node& original, const api::Node& node) {
    api::Json status = api::ToJson(node.status);
    api::Json out = api::Json::object();
    for (const char* key :
         {"capacity", "allocatable", "conditions", "daemonEndpoints", "nodeInfo", "images"}) {
      if (status.contains(key)) out[key] = status[key];
    }
    api::Json addresses = api::Json::array();
    bool stale = false;
    for (const api::NodeAddress& a : original.status.addresses) {
      stale |= std::find(node.status.addresses.begin(), node.status.addresses.end(), a) ==
               node.status.addresses.end();
    }
    if (stale) addresses.push_back(api::Json{{"$patch", "replace"}});
    for (const api::NodeAddress& a : node.status.addresses) {
      addresses.push_back(api::Json{{"type", a.type}, {"address", a.address}});
    }
    out["addresses"] = addresses;
    api::Json conditions = api::Json::array();
    for (const api::NodeCondition& c : node.status.conditions) {
      if (c.type == api::kNodeReady || c.type == api::kNodeMemoryPressure ||
          c.type == api::kNodeDiskPressure || c.type == api::kNodePIDPressure) {
        conditions.push_back(api::ToJson(c));
      }
    }
    out["conditions"] = conditions;
    // A list without a patch strategy: replaced as a whole, removed by null.
    if (!node.status.volumes_in_use.empty()) {
      out["volumesInUse"] = status["volumesInUse"];
    } else if (!original.status.volumes_in_use.empty()) {
      out["volumesInUse"] = nullptr;
    }
    return api::SerializeJson(api::Json{{"status", out}});
  }

  // backoffEnsureLease's one attempt: reads the Lease, creating it when absent.
  absl::Status EnsureLease() {
    const std::string path = absl::StrCat(kLeasesPath, "/", o_.node_name);
    auto got = Do("GET", path);
    absl::Status st = StatusOf(got);
    if (st.ok()) {
      auto lease = api::Decode<api::Lease>(got->body);
      if (!lease.ok()) return lease.status();
      lease_ = std::move(*lease);
      return absl::OkStatus();
    }
    if (!absl::IsNotFound(st)) return st;
    api::Lease lease;
    lease.metadata.name = o_.node_name;
    lease.metadata.namespace_ = api::kNodeLeaseNamespace;
    lease.spec.holder_identity = o_.node_name;
    lease.spec.lease_duration_seconds = o_.lease_duration_seconds;
    lease.spec.renew_time = api::MicroTime::FromUnix(absl::ToUnixSeconds(clock_.Now()));
    SetOwner(&lease);
    auto created = Do("POST", kLeasesPath, api::Encode(lease));
    st = StatusOf(created);
    if (absl::IsAlreadyExists(st)) return absl::AbortedError("lease created concurrently");
    if (!st.ok()) return st;
    auto decoded = api::Decode<api::Lease>(created->body);
    if (!decoded.ok()) return decoded.status();
    lease_ = std::move(*decoded);
    return absl::OkStatus();
  }

  // The owner reference to the Node, once its uid is known (setNodeOwnerFunc).
  void SetOwner(api::Lease* lease) {
    const std::string uid = NodeUID();
    if (uid.empty()) return;
    if (lease->metadata.owner_references.size() == 1 &&
        lease->metadata.owner_references[0].uid == uid) {
      return;
    }
    lease->metadata.owner_references = {
        api::OwnerReference{.api_version = "v1", .kind = "Node", .name = o_.node_name, .uid = uid}};
  }

  void RequestStatusUpdate() override {
    absl::MutexLock lock(&mu_);
    status_requested_ = true;
    if (loop_) loop_->Wake();
  }

  // The loop's body: the status round and the Lease renewal that are due (or a requested
  // status round); returns when the next is due.
  absl::Time Round() {
    bool requested;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return absl::InfiniteFuture();
      requested = status_requested_;
      status_requested_ = false;
    }
    const absl::Duration renew_interval =
        absl::Seconds(o_.lease_duration_seconds) * 0.25 > absl::ZeroDuration()
            ? absl::Seconds(o_.lease_duration_seconds) * 0.25
            : absl::Seconds(10);
    absl::Time now = clock_.Now();
    if (requested && Registered()) next_status_ = std::min(next_status_, now);
    if (now >= next_status_) {
      const bool was_registered = Registered();
      absl::Status st = SyncNodeStatus();
      now = clock_.Now();
      if (Stopping()) return absl::InfiniteFuture();
      if (!Registered() && o_.register_node) {
        // Registration failed (or the Node vanished): retry soon, backing off to 7 s.
        if (absl::IsNotFound(st) && was_registered) {
          register_step_ = absl::Milliseconds(100);
          next_status_ = now;
        } else {
          register_step_ = std::min(register_step_ * 2, kMaxBackoff);
          next_status_ = now + register_step_;
        }
      } else {
        register_step_ = absl::Milliseconds(100);
        if (!st.ok()) KLOG_ERROR(st, "Unable to update node status");
        next_status_ = now + Jitter(last_ready_ ? o_.update_frequency
                                                : std::min(o_.update_frequency, kNotReadyInterval),
                                    o_.period_jitter);
        // A freshly registered Node gets its owner reference on the Lease without waiting.
        if (!was_registered && Registered()) next_lease_ = now;
      }
    }
    if (now >= next_lease_) {
      absl::Status st = RenewLease();
      now = clock_.Now();
      if (Stopping()) return absl::InfiniteFuture();
      if (st.ok()) {
        lease_failures_ = 0;
        lease_step_ = absl::Milliseconds(100);
        next_lease_ = now + Jitter(renew_interval, o_.period_jitter);
      } else {
        lease_step_ = std::min(lease_step_ * 2, kMaxBackoff);
        if (lease_failures_++ == 0) {
          KLOG_ERROR(st, "Failed to ensure lease exists, will retry", "interval", lease_step_);
        } else {
          KLOG_V(2, "Failed to ensure lease exists, will retry", "err", st, "interval",
                 lease_step_);
        }
        next_lease_ = now + lease_step_;
      }
    }
    return std::min(next_status_, next_lease_);
  }

  const NodeStatusOptions o_;
  const std::shared_ptr<apiclient::RestClient> client_;
  // Labels the API server refused at registration (status thread only).
  std::set<std::string> refused_labels_;
  Clock& clock_;

  std::unique_ptr<Loops> own_loops_;
  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool status_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  std::string node_uid_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Cancellation> cancel_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Loop> loop_ ABSL_GUARDED_BY(mu_);

  // Used by the loop only (or the caller of the one-round methods).
  absl::Time next_status_ = absl::InfinitePast();
  absl::Time next_lease_ = absl::InfinitePast();
  absl::Duration register_step_ = absl::Milliseconds(100);
  absl::Duration lease_step_ = absl::Milliseconds(100);
  int lease_failures_ = 0;
  std::optional<api::Lease> lease_;
  std::optional<absl::Time> last_report_;
  std::string runtime_version_;
  std::vector<ImageInfo> last_images_;
  bool last_ready_ = false;
  int register_failures_ = 0;
};

}  // namespace

std::unique_ptr<NodeStatusManager> NewNodeStatusManager(
    NodeStatusOptions options, std::shared_ptr<apiclient::RestClient> client, Clock& clock) {
  return std::make_unique<Manager>(std::move(options), std::move(client), clock);
}

}  // namespace kubelet::nodestatus
