// Fuzzes the --config file path: the bytes are the content of a KubeletConfiguration file
// (YAML or JSON) decoded as the command line loads it (strict, so unknown or duplicate fields
// are errors), then, for a complete picture of the decoder, with upstream's lenient fallback;
// a decoded configuration is validated against the v1.28 feature gates and encoded as /configz
// serves it. Properties checked: the encoded configuration (a loadable file) decodes again to
// the same value (invalid UTF-8 aside, which becomes U+FFFD as in Go), and after that one round
// trip encoding is a fixed point. Any crash, sanitizer report, exception, hang or property
// violation is a finding; an error result is not.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/log.h"
#include "config/feature_gates.h"
#include "config/kubelet_configuration.h"
#include "config/validation.h"

namespace {

using kubelet::config::DecodeKubeletConfiguration;
using kubelet::config::DecodeOptions;
using kubelet::config::KubeletConfigurationToJson;

constexpr std::string_view kSource = "/var/lib/kubelet/config.yaml";

void CheckRoundTrip(const kubelet::config::KubeletConfiguration& config) {
  const std::string encoded = KubeletConfigurationToJson(config, /*include_type_meta=*/true);
  auto again = DecodeKubeletConfiguration(encoded, kSource, DecodeOptions{.strict = true});
  if (!again.ok()) {
    std::fprintf(stderr, "encoded configuration does not decode: %s\n%s\n",
                 std::string(again.status().message()).c_str(), encoded.c_str());
    std::abort();
  }
  // Invalid UTF-8 is written as \ufffd, as Go writes it, so only then may the value change.
  if (encoded.find("\\ufffd") == std::string::npos && !(again->config == config)) {
    std::fprintf(stderr, "encoded configuration decodes to another value:\n%s\n%s\n",
                 encoded.c_str(), KubeletConfigurationToJson(again->config, true).c_str());
    std::abort();
  }
  const std::string reencoded = KubeletConfigurationToJson(again->config, true);
  auto third = DecodeKubeletConfiguration(reencoded, kSource, DecodeOptions{.strict = true});
  if (!third.ok() || KubeletConfigurationToJson(third->config, true) != reencoded) {
    std::fprintf(stderr, "encoding is not stable:\n%s\n", reencoded.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Lenient decoding and validation log; keep the fuzzer's output readable and fast.
  kubelet::log::Configure(
      kubelet::log::Options{0, kubelet::log::Format::kText, [](std::string_view) {}});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const kubelet::config::FeatureGate* gates = new kubelet::config::FeatureGate();
  auto loaded = DecodeKubeletConfiguration(text, kSource, DecodeOptions{.strict = true});
  if (!loaded.ok()) {
    loaded = DecodeKubeletConfiguration(
        text, kSource, DecodeOptions{.strict = false, .log_lenient_fallback = false});
  }
  if (!loaded.ok()) return 0;
  (void)kubelet::config::ValidateKubeletConfiguration(loaded->config, *gates);
  (void)kubelet::config::KubeletConfigzJson(loaded->config);
  CheckRoundTrip(loaded->config);
  return 0;
}
