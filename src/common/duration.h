// Go time.Duration text form, as used by flags (--sync-frequency=1m30s) and by
// KubeletConfiguration fields (metav1.Duration, e.g. "20s").
//
// ParseGoDuration accepts what Go's time.ParseDuration accepts: an optionally signed sequence of
// decimal numbers with optional fraction and a unit (ns, us, µs, ms, s, m, h), or "0".
// FormatGoDuration renders as Go's Duration.String() does ("1m30s", "5m0s", "300ms", "0s").
// Pure functions; thread-safe.
#ifndef KUBELET_COMMON_DURATION_H_
#define KUBELET_COMMON_DURATION_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubelet {

absl::StatusOr<absl::Duration> ParseGoDuration(std::string_view s);
std::string FormatGoDuration(absl::Duration d);

}  // namespace kubelet

#endif  // KUBELET_COMMON_DURATION_H_
