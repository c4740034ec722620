#include "api/pod.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/strings.h"

namespace kubelet::api {

std::string Time::RFC3339() const {
  if (!set) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                          absl::UTCTimeZone());
}

absl::StatusOr<Time> Time::ParseRFC3339(std::string_view s) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, AV(s), &t, &err)) {
    return absl::InvalidArgumentError(
        absl::StrCat("parsing time \"", AV(s), "\" as RFC3339: ", err));
  }
  const int64_t secs = absl::ToUnixSeconds(t);  // truncates toward negative infinity
  const int64_t nanos = absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(secs));
  return Time::FromUnix(secs, static_cast<int32_t>(nanos));
}

std::string IntOrString::ToString() const {
  return type == Type::kString ? str_val : std::to_string(int_val);
}

}  // namespace kubelet::api
