// The configz registry: the effective configuration, kept as the JSON that /configz serves
// ({"kubeletconfig": {...}}). Registered once during start-up (upstream's initConfigz), read by
// the HTTP server later. Thread-safe.
#ifndef KUBELET_SERVER_CONFIGZ_H_
#define KUBELET_SERVER_CONFIGZ_H_

#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace kubelet::server {

class Configz {
 public:
  // `json` is the already-encoded value for section `name` (e.g. "kubeletconfig").
  // Registering the same name twice is an error, as upstream's configz.New.
  absl::Status Register(const std::string& name, std::string json);
  // {"name": value, ...} for every registered section.
  std::string Render() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> sections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::server

#endif  // KUBELET_SERVER_CONFIGZ_H_
