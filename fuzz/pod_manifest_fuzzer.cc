// Fuzzes static pod manifest decoding as the file and URL sources run it: YAML or JSON, a Pod
// (file) or a Pod/PodList (URL), static pod defaults and validation. Any crash, sanitizer
// report, exception, stack overflow or hang is a finding; an error result is not.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/time/time.h"
#include "api/static_pod.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view manifest(reinterpret_cast<const char*>(data), size);
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  auto pod = kubelet::api::DecodeStaticPodFile(manifest, "node1",
                                               "/etc/kubernetes/manifests/fuzz.yaml", now);
  (void)pod;
  auto pods =
      kubelet::api::DecodeStaticPodsHTTP(manifest, "node1", "http://127.0.0.1:8080/pods", now);
  (void)pods;
  return 0;
}
