// resource.Quantity: the Kubernetes fixed-point quantity ("100Mi", "500m", "1.5", "2e3", "1G").
//
// Parsing follows apimachinery's grammar: <sign><digits>[.<digits>]<suffix>, suffix one of the
// binary SI (Ki Mi Gi Ti Pi Ei), decimal SI (n u m "" k M G T P E) or decimal exponent (e3, E-2)
// forms. Values are kept exactly as a scaled integer in nano units, which covers everything a
// kubelet sees (CPU in millicores, memory in bytes up to ~9.2 exabytes / 1e9... see Value()).
// String() renders the canonical form the API server would store ("1536Mi", "500m", "2").
// Value type; thread-compatible.
#ifndef KUBELET_API_QUANTITY_H_
#define KUBELET_API_QUANTITY_H_

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/numeric/int128.h"
#include "absl/status/statusor.h"

namespace kubelet::api {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;
  static absl::StatusOr<Quantity> Parse(std::string_view s);
  static Quantity FromValue(int64_t v, Format f = Format::kDecimalSI);
  static Quantity FromMilli(int64_t m, Format f = Format::kDecimalSI);

  // Rounded up to an integer, as Quantity.Value() does (e.g. "1.5" -> 2, "100m" -> 1).
  int64_t Value() const;
  // Value in thousandths, rounded up (e.g. "1.5" -> 1500, "100m" -> 100).
  int64_t MilliValue() const;
  bool IsZero() const { return nanos_ == 0; }
  int Sign() const { return nanos_ == 0 ? 0 : (nanos_ < 0 ? -1 : 1); }
  Format format() const { return format_; }

  Quantity operator+(const Quantity& o) const;
  Quantity operator-(const Quantity& o) const;
  std::strong_ordering operator<=>(const Quantity& o) const {
    return nanos_ < o.nanos_    ? std::strong_ordering::less
           : nanos_ == o.nanos_ ? std::strong_ordering::equal
                                : std::strong_ordering::greater;
  }
  bool operator==(const Quantity& o) const { return nanos_ == o.nanos_; }

  std::string String() const;

 private:
  absl::int128 nanos_ = 0;  // value * 1e9
  Format format_ = Format::kDecimalSI;
};

// Shorthand for Quantity::Parse.
inline absl::StatusOr<Quantity> ParseQuantity(std::string_view s) { return Quantity::Parse(s); }

}  // namespace kubelet::api

#endif  // KUBELET_API_QUANTITY_H_
