#include "api/quantity.h"

#include "absl/strings/str_cat.h"

namespace kubelet::api {
namespace {

constexpr int64_t kNano = 1000000000;

absl::int128 Pow(absl::int128 base, int exp) {
  absl::int128 r = 1;
  for (int i = 0; i < exp; ++i) r *= base;
  return r;
}

// Ceil division for a positive divisor.
absl::int128 CeilDiv(absl::int128 a, absl::int128 b) {
  absl::int128 q = a / b;
  if (a % b != 0 && a > 0) q += 1;
  return q;
}

std::string ToString(absl::int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  absl::uint128 u = neg ? static_cast<absl::uint128>(-v) : static_cast<absl::uint128>(v);
  std::string s;
  while (u > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

absl::Status Invalid() {
  return absl::InvalidArgumentError(
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

}  // namespace

absl::StatusOr<Quantity> Quantity::Parse(std::string_view s) {
  if (s.empty()) return Invalid();
  size_t i = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    ++i;
  }
  absl::int128 whole = 0;
  absl::int128 frac = 0;
  int frac_digits = 0;
  bool digits = false;
  // Bound of the value in nano units and of every step computing it, within int128 (about
  // 1.7e38); each product is checked before it is taken, an overflow being undefined behaviour.
  // Every canonical form (String()) of a value within it parses again.
  const absl::int128 kMaxNanos = Pow(10, 38);
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (whole > (kMaxNanos - (s[i] - '0')) / 10) {
      return absl::InvalidArgumentError("quantity too large");
    }
    whole = whole * 10 + (s[i] - '0');
    ++i;
    digits = true;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (frac_digits < 18) {
        frac = frac * 10 + (s[i] - '0');
        ++frac_digits;
      }
      ++i;
      digits = true;
    }
  }
  if (!digits) return Invalid();
  std::string_view suffix = s.substr(i);
  // Value = (whole + frac/10^fd) * multiplier, multiplier = num / den.
  absl::int128 num = 1, den = 1;
  Format format = Format::kDecimalSI;
  if (suffix.empty()) {
  } else if (suffix == "Ki" || suffix == "Mi" || suffix == "Gi" || suffix == "Ti" ||
             suffix == "Pi" || suffix == "Ei") {
    static constexpr std::string_view kBin = "KMGTPE";
    num = Pow(1024, static_cast<int>(kBin.find(suffix[0])) + 1);
    format = Format::kBinarySI;
  } else if (suffix == "n") {
    den = Pow(10, 9);
  } else if (suffix == "u") {
    den = Pow(10, 6);
  } else if (suffix == "m") {
    den = 1000;
  } else if (suffix == "k") {
    num = 1000;
  } else if (suffix == "M") {
    num = Pow(10, 6);
  } else if (suffix == "G") {
    num = Pow(10, 9);
  } else if (suffix == "T") {
    num = Pow(10, 12);
  } else if (suffix == "P") {
    num = Pow(10, 15);
  } else if (suffix == "E") {
    num = Pow(10, 18);
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view e = suffix.substr(1);
    bool eneg = false;
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
      eneg = e[0] == '-';
      e.remove_prefix(1);
    }
    if (e.empty() || e.size() > 2) return Invalid();
    int exp = 0;
    for (char c : e) {
      if (c < '0' || c > '9') return Invalid();
      exp = exp * 10 + (c - '0');
    }
    if (exp > 18) return absl::InvalidArgumentError("quantity too large");
    (eneg ? den : num) = Pow(10, exp);
    format = Format::kDecimalExponent;
  } else {
    return absl::InvalidArgumentError("unable to parse quantity's suffix");
  }
  // nanos = (whole*10^fd + frac) * num * 1e9 / (10^fd * den), rounded up (apimachinery rounds
  // values below its nano precision up). 10^fd, den and 1e9 are powers of ten, so the scaling is
  // one multiplication or one division.
  // Trailing zeros of the fraction do not change the value.
  while (frac_digits > 0 && frac % 10 == 0) {
    frac /= 10;
    --frac_digits;
  }
  const absl::int128 fd = Pow(10, frac_digits);
  if (whole > (kMaxNanos - frac) / fd) return absl::InvalidArgumentError("quantity too large");
  const absl::int128 mantissa = whole * fd + frac;
  if (mantissa > kMaxNanos / num) return absl::InvalidArgumentError("quantity too large");
  const absl::int128 top = mantissa * num;
  const absl::int128 scale_down = fd * den;  // at most 1e36
  absl::int128 nanos;
  if (scale_down <= kNano) {
    const absl::int128 scale_up = kNano / scale_down;
    if (top > kMaxNanos / scale_up) return absl::InvalidArgumentError("quantity too large");
    nanos = top * scale_up;
  } else {
    nanos = CeilDiv(top, scale_down / kNano);
  }
  Quantity q;
  q.nanos_ = neg ? -nanos : nanos;
  q.format_ = format;
  return q;
}

Quantity Quantity::FromValue(int64_t v, Format f) {
  Quantity q;
  q.nanos_ = absl::int128(v) * kNano;
  q.format_ = f;
  return q;
}

Quantity Quantity::FromMilli(int64_t m, Format f) {
  Quantity q;
  q.nanos_ = absl::int128(m) * 1000000;
  q.format_ = f;
  return q;
}

int64_t Quantity::Value() const {
  absl::int128 v = nanos_ >= 0 ? CeilDiv(nanos_, kNano) : nanos_ / kNano;
  return static_cast<int64_t>(v);
}

int64_t Quantity::MilliValue() const {
  absl::int128 v = nanos_ >= 0 ? CeilDiv(nanos_, 1000000) : nanos_ / 1000000;
  return static_cast<int64_t>(v);
}

Quantity Quantity::operator+(const Quantity& o) const {
  Quantity q = *this;
  q.nanos_ += o.nanos_;
  return q;
}

Quantity Quantity::operator-(const Quantity& o) const {
  Quantity q = *this;
  q.nanos_ -= o.nanos_;
  return q;
}

std::string Quantity::String() const {
  if (nanos_ == 0) return "0";
  absl::int128 abs = nanos_ < 0 ? -nanos_ : nanos_;
  std::string sign = nanos_ < 0 ? "-" : "";
  Format f = format_;
  if (f == Format::kBinarySI) {
    // Fractional or small values are written in decimal form, as apimachinery does.
    if (abs % kNano != 0 || abs < absl::int128(1024) * kNano) f = Format::kDecimalSI;
  }
  if (f == Format::kBinarySI) {
    absl::int128 v = abs / kNano;
    int k = 0;
    while (k < 6 && v % 1024 == 0) {
      v /= 1024;
      ++k;
    }
    static constexpr const char* kSuffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    return sign + ToString(v) + kSuffix[k];
  }
  // Decimal: value = m * 10^e, e a multiple of 3 from -9 up, the largest that keeps m whole.
  absl::int128 m = abs;
  int e = -9;
  while (e < 18 && m % 1000 == 0) {
    m /= 1000;
    e += 3;
  }
  if (f == Format::kDecimalExponent) {
    return sign + ToString(m) + (e == 0 ? "" : absl::StrCat("e", e));
  }
  const char* suffix = "";
  switch (e) {
    case -9:
      suffix = "n";
      break;
    case -6:
      suffix = "u";
      break;
    case -3:
      suffix = "m";
      break;
    case 0:
      suffix = "";
      break;
    case 3:
      suffix = "k";
      break;
    case 6:
      suffix = "M";
      break;
    case 9:
      suffix = "G";
      break;
    case 12:
      suffix = "T";
      break;
    case 15:
      suffix = "P";
      break;
    case 18:
      suffix = "E";
      break;
  }
  return sign + ToString(m) + suffix;
}

}  // namespace kubelet::api
