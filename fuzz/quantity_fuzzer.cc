// Fuzzes resource.Quantity parsing (api::Quantity::Parse: resource requests and limits, node
// capacity, eviction thresholds, emptyDir size limits). The bytes are the quantity's text.
// Properties checked on every quantity that parses: its canonical form (String()) parses again
// to the same value, and after one such round trip printing is a fixed point.
// Any crash, sanitizer report, exception, hang or property violation is a finding; an error
// result is not.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/quantity.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view input, const std::string& canonical) {
  std::fprintf(stderr, "%s: input \"%.*s\", canonical \"%s\"\n", what,
               static_cast<int>(input.size()), input.data(), canonical.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<kubelet::api::Quantity> q = kubelet::api::Quantity::Parse(text);
  if (!q.ok()) return 0;
  const std::string canonical = q->String();
  absl::StatusOr<kubelet::api::Quantity> again = kubelet::api::Quantity::Parse(canonical);
  if (!again.ok()) Fail("canonical form does not parse", text, canonical);
  if (*again != *q) Fail("canonical form parses to another value", text, canonical);
  // Not always a fixed point at once, as in Go: a binary-format value that is not a multiple of
  // 1024 prints as a plain integer ("33437.5Ki" -> "34240000"), which parses as decimal and then
  // prints as "34240k". From there on the form must be stable.
  const std::string second = again->String();
  absl::StatusOr<kubelet::api::Quantity> third = kubelet::api::Quantity::Parse(second);
  if (!third.ok() || *third != *q || third->String() != second) {
    Fail("canonical form is not stable", text, second);
  }
  // Both are Go's int64 conversions (wrapping past int64 as Go does); run for the sanitizers.
  (void)q->Value();
  (void)q->MilliValue();
  return 0;
}
