// FakePodStatusClient: the unit tests' in-memory PodStatusClient (api_status_syncer.h): pods as
// the API server's JSON by "<ns>/<name>", a log of the calls ("GET name", "PATCH name",
// "DELETE name uid"), the patches received, and errors queued per method ("GET", "PATCH",
// "DELETE") answered before the store is consulted. A PATCH merges the status roughly (enough
// for the next diff to see what was sent). Thread-safe.
#ifndef KUBELET_KUBELET_STATUS_TESTING_FAKE_POD_STATUS_CLIENT_H_
#define KUBELET_KUBELET_STATUS_TESTING_FAKE_POD_STATUS_CLIENT_H_

#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "kubelet/status/api_status_syncer.h"
#include "nlohmann/json.hpp"

namespace kubelet::status::testing {

class FakePodStatusClient final : public PodStatusClient {
 public:
  absl::StatusOr<nlohmann::json> GetPod(const std::string& ns, const std::string& name) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back("GET " + name);
    if (auto e = TakeError("GET"); !e.ok()) return e;
    auto it = pods_.find(ns + "/" + name);
    if (it == pods_.end()) return absl::NotFoundError("pods \"" + name + "\" not found");
    return it->second;
  }
  absl::Status PatchPodStatus(const std::string& ns, const std::string& name,
                              const std::string& patch) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back("PATCH " + name);
    patches_.emplace_back(name, nlohmann::json::parse(patch));
    if (auto e = TakeError("PATCH"); !e.ok()) return e;
    auto it = pods_.find(ns + "/" + name);
    if (it == pods_.end()) return absl::NotFoundError("not found");
    // A rough merge: enough for the next diff to see what was sent.
    for (auto& [k, v] : patches_.back().second["status"].items()) {
      if (k.rfind("$", 0) == 0) continue;
      if (k == "conditions") {
        it->second["status"]["conditions"] = v;
      } else if (v.is_null()) {
        it->second["status"].erase(k);
      } else {
        it->second["status"][k] = v;
      }
    }
    return absl::OkStatus();
  }
  absl::Status DeletePod(const std::string& ns, const std::string& name,
                         const std::string& uid) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back("DELETE " + name + " " + uid);
    if (auto e = TakeError("DELETE"); !e.ok()) return e;
    pods_.erase(ns + "/" + name);
    return absl::OkStatus();
  }

  // Stores a pod as the API server holds it: name, namespace, uid, phase Pending.
  void Put(const std::string& name, const std::string& uid, const std::string& ns = "default") {
    absl::MutexLock lock(&mu_);
    pods_[ns + "/" + name] = {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
                              {"status", {{"phase", "Pending"}}}};
  }
  void Erase(const std::string& name, const std::string& ns = "default") {
    absl::MutexLock lock(&mu_);
    pods_.erase(ns + "/" + name);
  }
  void Fail(const std::string& method, absl::Status error) {
    absl::MutexLock lock(&mu_);
    errors_[method].push_back(std::move(error));
  }
  std::vector<std::string> TakeCalls() {
    absl::MutexLock lock(&mu_);
    return std::exchange(calls_, {});
  }
  std::vector<std::string> calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  // Each PATCH received: the pod's name and the patch.
  std::vector<std::pair<std::string, nlohmann::json>> patches() {
    absl::MutexLock lock(&mu_);
    return patches_;
  }

 private:
  absl::Status TakeError(const std::string& method) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto& q = errors_[method];
    if (q.empty()) return absl::OkStatus();
    absl::Status e = q.front();
    q.pop_front();
    return e;
  }

  absl::Mutex mu_;
  std::map<std::string, nlohmann::json> pods_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::deque<absl::Status>> errors_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<std::string, nlohmann::json>> patches_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::status::testing

#endif  // KUBELET_KUBELET_STATUS_TESTING_FAKE_POD_STATUS_CLIENT_H_
