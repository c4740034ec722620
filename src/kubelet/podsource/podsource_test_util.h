// Helpers shared by the pod source unit tests (header-only, test code only).
#ifndef KUBELET_KUBELET_PODSOURCE_PODSOURCE_TEST_UTIL_H_
#define KUBELET_KUBELET_PODSOURCE_PODSOURCE_TEST_UTIL_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "common/log.h"
#include "common/testing/eventually.h"
#include "kubelet/podsource/pod_config.h"

namespace kubelet::podsource::testutil {

// Captures log lines for the lifetime of the object (restores the default sink afterwards).
class LogCapture {
 public:
  explicit LogCapture(int verbosity = 0) {
    log::Configure(log::Options{verbosity, log::Format::kText, [this](std::string_view line) {
                                  absl::MutexLock lock(&mu_);
                                  lines_.emplace_back(line);
                                }});
  }
  ~LogCapture() { log::Configure(log::Options{}); }

  std::vector<std::string> Lines() const {
    absl::MutexLock lock(&mu_);
    return lines_;
  }
  // Number of lines containing every one of `parts`.
  int Count(const std::vector<std::string>& parts) const {
    int n = 0;
    for (const auto& line : Lines()) {
      bool all = true;
      for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
      n += all ? 1 : 0;
    }
    return n;
  }
  std::string Dump() const {
    std::string out;
    for (const auto& l : Lines()) out += l;
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> lines_;
};

// Sorted "namespace/name" of the pods PodConfig currently holds.
inline std::vector<std::string> MergedNames(const PodConfig& config) {
  std::vector<std::string> names;
  for (const auto& p : config.MergedState()) {
    names.push_back(p->metadata.namespace_ + "/" + p->metadata.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A minimal valid manifest.
inline std::string PodYaml(std::string_view name, std::string_view image = "busybox:1.36") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + std::string(name) +
         "\nspec:\n  containers:\n  - name: c\n    image: " + std::string(image) + "\n";
}

inline std::string PodJson(std::string_view name, std::string_view image = "busybox:1.36") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + std::string(name) +
         R"("},"spec":{"containers":[{"name":"c","image":")" + std::string(image) + R"("}]}})";
}

}  // namespace kubelet::podsource::testutil

#endif  // KUBELET_KUBELET_PODSOURCE_PODSOURCE_TEST_UTIL_H_
