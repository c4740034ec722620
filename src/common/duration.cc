#include "common/duration.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace kubelet {
namespace {

// Nanoseconds per unit, for the units Go's time.ParseDuration knows.
bool UnitNanos(std::string_view unit, uint64_t* out) {
  if (unit == "ns")
    *out = 1;
  else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs")
    *out = 1000;
  else if (unit == "ms")
    *out = 1000000;
  else if (unit == "s")
    *out = 1000000000ULL;
  else if (unit == "m")
    *out = 60ULL * 1000000000ULL;
  else if (unit == "h")
    *out = 3600ULL * 1000000000ULL;
  else
    return false;
  return true;
}

absl::Status Invalid(std::string_view orig) {
  return absl::InvalidArgumentError(absl::StrCat("time: invalid duration \"", AV(orig), "\""));
}

}  // namespace

absl::StatusOr<absl::Duration> ParseGoDuration(std::string_view orig) {
  std::string_view s = orig;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return absl::ZeroDuration();
  if (s.empty()) return Invalid(orig);
  // Accumulate in 128 bits of nanoseconds to detect overflow the way Go does (int64 range).
  __int128 total = 0;
  while (!s.empty()) {
    // Integer part.
    __int128 whole = 0;
    size_t i = 0;
    bool any_digits = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      whole = whole * 10 + (s[i] - '0');
      if (whole > static_cast<__int128>(std::numeric_limits<int64_t>::max())) return Invalid(orig);
      ++i;
      any_digits = true;
    }
    // Fraction.
    __int128 frac = 0, scale = 1;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        if (scale < static_cast<__int128>(1000000000000000000LL)) {
          frac = frac * 10 + (s[i] - '0');
          scale *= 10;
        }
        ++i;
        any_digits = true;
      }
    }
    if (!any_digits) return Invalid(orig);
    size_t u = i;
    while (u < s.size() && s[u] != '.' && !(s[u] >= '0' && s[u] <= '9')) ++u;
    std::string_view unit = s.substr(i, u - i);
    if (unit.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("time: missing unit in duration \"", AV(orig), "\""));
    }
    uint64_t nanos;
    if (!UnitNanos(unit, &nanos)) {
      return absl::InvalidArgumentError(
          absl::StrCat("time: unknown unit \"", AV(unit), "\" in duration \"", AV(orig), "\""));
    }
    total += whole * nanos + frac * nanos / scale;
    if (total > static_cast<__int128>(std::numeric_limits<int64_t>::max())) return Invalid(orig);
    s.remove_prefix(u);
  }
  int64_t n = static_cast<int64_t>(total);
  return absl::Nanoseconds(neg ? -n : n);
}

std::string FormatGoDuration(absl::Duration d) {
  int64_t n = absl::ToInt64Nanoseconds(d);
  if (n == 0) return "0s";
  bool neg = n < 0;
  uint64_t u = neg ? static_cast<uint64_t>(-(n + 1)) + 1 : static_cast<uint64_t>(n);
  std::string out;
  auto frac = [](uint64_t v, int digits) {
    // v holds `digits` fractional digits; print without trailing zeros.
    std::string s(digits, '0');
    for (int i = digits - 1; i >= 0; --i) {
      s[i] = static_cast<char>('0' + v % 10);
      v /= 10;
    }
    while (!s.empty() && s.back() == '0') s.pop_back();
    return s.empty() ? std::string() : "." + s;
  };
  if (u < 1000000000ULL) {
    // Sub-second: ns, µs or ms with a fraction.
    if (u < 1000) {
      out = absl::StrCat(u, "ns");
    } else if (u < 1000000) {
      out = absl::StrCat(u / 1000, frac(u % 1000, 3), "\xc2\xb5s");
    } else {
      out = absl::StrCat(u / 1000000, frac(u % 1000000, 6), "ms");
    }
  } else {
    uint64_t secs = u / 1000000000ULL;
    uint64_t nanos = u % 1000000000ULL;
    std::string sec_part = absl::StrCat(secs % 60, frac(nanos, 9), "s");
    uint64_t mins = secs / 60;
    if (mins == 0) {
      out = sec_part;
    } else {
      uint64_t hours = mins / 60;
      if (hours == 0) {
        out = absl::StrCat(mins, "m", sec_part);
      } else {
        out = absl::StrCat(hours, "h", mins % 60, "m", sec_part);
      }
    }
  }
  return neg ? "-" + out : out;
}

}  // namespace kubelet
