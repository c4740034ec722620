// Fuzzes Go duration parsing (ParseGoDuration: duration flags such as --sync-frequency and the
// metav1.Duration fields of the configuration file). The bytes are the duration's text.
// Property checked on every duration that parses: it is a whole number of nanoseconds, and its
// Go form (FormatGoDuration, what /configz and the flag defaults print) parses back to the same
// duration. Any crash, sanitizer report, exception, hang or property violation is a finding; an
// error result is not.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "common/duration.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<absl::Duration> d = kubelet::ParseGoDuration(text);
  if (!d.ok()) return 0;
  const std::string formatted = kubelet::FormatGoDuration(*d);
  absl::StatusOr<absl::Duration> again = kubelet::ParseGoDuration(formatted);
  if (absl::Nanoseconds(absl::ToInt64Nanoseconds(*d)) != *d || !again.ok() || *again != *d) {
    std::fprintf(stderr, "duration does not round-trip: input \"%.*s\", formatted \"%s\"\n",
                 static_cast<int>(text.size()), text.data(), formatted.c_str());
    std::abort();
  }
  return 0;
}
