// The API server pod source (upstream pkg/kubelet/config/apiserver.go): the pods bound to this
// node, as a list-and-watch of /api/v1/pods?fieldSelector=spec.nodeName=<node>, delivered to
// PodConfig as full snapshots (SET) of source "api", as upstream's UndeltaStore does.
//
// This class knows nothing of the API client: whoever runs the list-and-watch (a Reflector, in
// src/app) hands it the raw JSON objects through Replace/Add/Update/Delete, which have the
// shape of apiclient::ResourceEventHandler. Each object is decoded once, when it arrives
// (api::DecodePod + api::SetDefaultsPod; list items, which the API server sends without kind and
// apiVersion, count as v1 Pods) into one shared api::PodPtr, and each call delivers the snapshot of
// the stored pods (keyed by <namespace>/<name>). An object that fails to decode is logged once per
// content ("Failed to decode pod from the API server") and changes nothing: a pod known before
// keeps its last good version (a pod is never stopped because a new version of it cannot be read),
// an unknown one stays out. The other pods are unaffected. A failing API server never reaches this
// class: the last snapshot delivered stays in force until the next list or event.
//
// The constructor registers source "api" with PodConfig (AddSource), so the kubelet's
// sources-ready state waits for the first list, as upstream.
//
// Offline autonomy (beyond upstream) is the feeder's: a checkpointed reflector
// (apiclient/checkpointed_reflector.h) hands the pods it checkpointed to Replace() when the
// first list is late, and the first list then replaces them (pods deleted meanwhile stop).
//
// Thread-safety: the handler methods may be called from any thread, one at a time or
// concurrently (serialized internally). They block while PodConfig's queue is full, until
// Stop(). Stop() may be called from any thread; afterwards deliveries are dropped.
// Ownership: PodConfig is borrowed and must outlive the ApiSource.
#ifndef KUBELET_KUBELET_PODSOURCE_API_SOURCE_H_
#define KUBELET_KUBELET_PODSOURCE_API_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/pod.h"
#include "kubelet/podsource/pod_config.h"
#include "nlohmann/json.hpp"

namespace kubelet::podsource {

inline constexpr char kApiSourceName[] = "api";

class ApiSource {
 public:
  explicit ApiSource(PodConfig& config);
  ApiSource(const ApiSource&) = delete;
  ApiSource& operator=(const ApiSource&) = delete;

  // The complete list: objects absent from it are gone.
  void Replace(std::vector<nlohmann::json> objects);
  void Add(const nlohmann::json& object);
  void Update(const nlohmann::json& object);
  void Delete(const nlohmann::json& object);

  // Ends blocked and later deliveries.
  void Stop();

  // Snapshots delivered so far (for tests and diagnostics).
  uint64_t deliveries() const { return deliveries_.load(); }

 private:
  // Decodes `object` into pods_[key] (see the header comment for failures).
  void Store(const std::string& key, const nlohmann::json& object,
             std::map<std::string, api::PodPtr>* previous)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(deliver_mu_);
  // Delivers the current set of pods. Called with deliver_mu_ held.
  void Deliver() ABSL_EXCLUSIVE_LOCKS_REQUIRED(deliver_mu_);

  PodConfig& config_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> deliveries_{0};

  // Serializes change + delivery so snapshots reach PodConfig in the order of the changes.
  absl::Mutex deliver_mu_;
  // One object per pod version, built when it is decoded and shared with PodConfig (and, through
  // it, the kubelet); a pod whose object did not change is handed on as the same object.
  std::map<std::string, api::PodPtr> pods_ ABSL_GUARDED_BY(deliver_mu_);
  // Last decode error logged per key, so a broken object is reported once per content.
  std::map<std::string, std::string> logged_ ABSL_GUARDED_BY(deliver_mu_);
};

}  // namespace kubelet::podsource

#endif  // KUBELET_KUBELET_PODSOURCE_API_SOURCE_H_
