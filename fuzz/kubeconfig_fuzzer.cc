// Fuzzes kubeconfig loading (--kubeconfig, --bootstrap-kubeconfig): the bytes are the file's
// content, parsed as LoadKubeconfig parses a file (ParseKubeconfig: YAML or JSON, base64 data
// fields, relative paths resolved against the file's directory), then turned into a RestConfig
// for the current context and for every named context, as ToRestConfig validates them. Any
// crash, sanitizer report, exception or hang is a finding; an error result is not.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "apiclient/kubeconfig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto kc = kubelet::apiclient::ParseKubeconfig(text, "/etc/kubernetes/kubelet.conf");
  if (!kc.ok()) return 0;
  (void)kubelet::apiclient::ToRestConfig(*kc);
  for (const auto& [name, context] : kc->contexts) {
    (void)kubelet::apiclient::ToRestConfig(*kc, name);
  }
  return 0;
}
