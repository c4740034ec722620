// Declarative JSON codec for Kubernetes API objects.
//
// A type is described once, by a field table; encoding and decoding are both generated from it:
//
//   template <>
//   struct codec::Fields<LeaseSpec> {
//     using S = LeaseSpec;
//     static constexpr auto kList = std::tuple(
//         Field("holderIdentity", &S::holder_identity, kOmitEmpty),
//         Field("leaseDurationSeconds", &S::lease_duration_seconds, kOmitEmpty), ...);
//   };
//
// (the specialization lives in namespace kubelet::api::codec, next to the type's definition or
// in a *_codec.h header). Member types may be: std::string, bool, integers, double, Quantity,
// IntOrString, Time, MicroTime, RawJson, Json, any described struct, and std::optional /
// std::vector / std::map<std::string, _> of those.
//
// Encoding follows Go's encoding/json for the upstream type:
//   * members in table order (= Go declaration order); map keys sorted (byte order);
//   * kOmitEmpty drops "", 0, false, empty vectors/maps, nullopt, empty RawJson and null Json.
//     Like Go, it never drops a struct: Time/MicroTime/Quantity/IntOrString and described structs
//     are always written (a zero Time as null);
//   * without kOmitEmpty, nullopt and empty RawJson are null; empty vectors and maps are [] / {}
//     (Go would write null for a nil slice; the API server reads both the same);
//   * Time is RFC 3339 in seconds, MicroTime has six fraction digits, Quantity is its canonical
//     string, IntOrString an integer or a string, kBase64 strings ([]byte) are standard base64;
//   * text is compact, with Go's escaping: < > & U+2028 U+2029 as \u003c..., invalid UTF-8 as
//     \ufffd; floats as strconv.FormatFloat(f, 'f' or 'e', -1, 64).
// Decoding accepts what the API server writes:
//   * null anywhere = absent (the member keeps its default); members are matched case-sensitively
//     (as sigs.k8s.io/json does);
//   * a type mismatch is an InvalidArgument error naming the field path, e.g.
//       spec.leaseDurationSeconds: expected integer, got "abc"
//     (arrays as items[3], map entries as labels[app]); integers are range-checked;
//   * unknown members are ignored, unless the struct has a member `RawJson unknown`: then they are
//     kept there (a JSON object, document order) and written back after the known members, so a
//     read-modify-write (GET node, change status, PUT) does not drop fields the kubelet does not
//     model;
//   * documents nested deeper than kMaxDepth are rejected before parsing.
// Nothing here throws: JSON library exceptions are caught at the boundary and become errors.
// Thread-safe (no shared state).
#ifndef KUBELET_API_CODEC_H_
#define KUBELET_API_CODEC_H_

#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/meta.h"
#include "api/quantity.h"
#include "nlohmann/json.hpp"

namespace kubelet::api {

// The JSON tree the codec works on; ordered so that encoding keeps Go's member order and decoding
// keeps the order of unknown members.
using Json = nlohmann::ordered_json;

namespace codec {

// Maximum nesting of objects/arrays in an accepted document.
inline constexpr int kMaxDepth = 512;

// Field options (bit set).
inline constexpr uint32_t kOmitEmpty = 1u << 0;  // Go's ",omitempty"
inline constexpr uint32_t kBase64 = 1u << 1;     // std::string members holding Go []byte

// One table entry: the JSON name, the member, the options.
template <typename T, typename M>
struct FieldSpec {
  std::string_view name;
  M T::*member;
  uint32_t opts;
};

template <typename T, typename M>
constexpr FieldSpec<T, M> Field(std::string_view name, M T::*member, uint32_t opts = 0) {
  return FieldSpec<T, M>{name, member, opts};
}

// Specialized per described type with `static constexpr auto kList = std::tuple(Field(...)...)`.
template <typename T>
struct Fields;

template <typename T>
concept Described = requires {
  Fields<T>::kList;
};

template <typename T>
concept KeepsUnknown = Described<T> && std::is_same_v<decltype(T::unknown), RawJson>;

// A field path, built on the stack while descending and rendered only for an error message.
struct Path {
  const Path* parent = nullptr;
  std::string_view name;  // member name, or map key when `is_key`
  int64_t index = -1;     // array index when >= 0
  bool is_key = false;
  std::string String() const;
};

// Leaf codecs (codec.cc).
absl::Status TypeError(const Path& p, std::string_view want, const Json& got);
Json EncodeString(const std::string& s, uint32_t opts);
absl::Status DecodeString(const Json& j, const Path& p, uint32_t opts, std::string* out);
absl::Status DecodeInt(const Json& j, const Path& p, int64_t lo, int64_t hi, int64_t* out);
absl::Status DecodeUint(const Json& j, const Path& p, uint64_t hi, uint64_t* out);
Json EncodeLeaf(const Time& t);
Json EncodeLeaf(const MicroTime& t);
Json EncodeLeaf(const Quantity& q);
Json EncodeLeaf(const IntOrString& v);
Json EncodeLeaf(const RawJson& r);
absl::Status DecodeLeaf(const Json& j, const Path& p, Time* out);
absl::Status DecodeLeaf(const Json& j, const Path& p, MicroTime* out);
absl::Status DecodeLeaf(const Json& j, const Path& p, Quantity* out);
absl::Status DecodeLeaf(const Json& j, const Path& p, IntOrString* out);
absl::Status DecodeLeaf(const Json& j, const Path& p, RawJson* out);
// Appends the members of `unknown` (JSON object text) not named in `known` to the object `out`;
// text that does not parse as an object is dropped.
void AppendUnknown(const RawJson& unknown, const std::vector<std::string_view>& known, Json* out);
// The RawJson holding `members` (a JSON object) for a struct's `unknown` member.
RawJson KeepUnknown(const Json& members);

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsStringMap : std::false_type {};
template <typename T>
struct IsStringMap<std::map<std::string, T>> : std::true_type {};

// Go's isEmptyValue, for the C++ shapes of the Go types.
template <typename M>
bool IsEmpty(const M& m) {
  if constexpr (std::is_same_v<M, std::string> || IsVector<M>::value || IsStringMap<M>::value) {
    return m.empty();
  } else if constexpr (std::is_arithmetic_v<M>) {
    return m == M{};
  } else if constexpr (IsOptional<M>::value) {
    return !m.has_value();
  } else if constexpr (std::is_same_v<M, RawJson>) {
    return m.empty();
  } else if constexpr (std::is_same_v<M, Json>) {
    return m.is_null();
  } else {
    return false;  // Go never omits a struct value
  }
}

template <typename T>
Json EncodeStruct(const T& v);
template <typename T>
absl::Status DecodeStruct(const Json& j, const Path& p, T* out);

template <typename M>
Json EncodeValue(const M& m, uint32_t opts) {
  if constexpr (std::is_same_v<M, std::string>) {
    return EncodeString(m, opts);
  } else if constexpr (std::is_same_v<M, bool>) {
    return Json(m);
  } else if constexpr (std::is_integral_v<M> && std::is_unsigned_v<M>) {
    return Json(static_cast<uint64_t>(m));
  } else if constexpr (std::is_integral_v<M>) {
    return Json(static_cast<int64_t>(m));
  } else if constexpr (std::is_floating_point_v<M>) {
    return Json(static_cast<double>(m));
  } else if constexpr (IsOptional<M>::value) {
    return m.has_value() ? EncodeValue(*m, opts) : Json(nullptr);
  } else if constexpr (IsVector<M>::value) {
    Json a = Json::array();
    for (const auto& e : m) a.push_back(EncodeValue(e, opts));
    return a;
  } else if constexpr (IsStringMap<M>::value) {
    Json o = Json::object();
    for (const auto& [k, e] : m) o.emplace(k, EncodeValue(e, opts));
    return o;
  } else if constexpr (std::is_same_v<M, Json>) {
    return m;
  } else if constexpr (Described<M>) {
    return EncodeStruct(m);
  } else {
    return EncodeLeaf(m);
  }
}

// Decodes `j` into `*out`. Null leaves `*out` as it is (absent).
template <typename M>
absl::Status DecodeValue(const Json& j, const Path& p, uint32_t opts, M* out) {
  if (j.is_null()) return absl::OkStatus();
  if constexpr (std::is_same_v<M, std::string>) {
    return DecodeString(j, p, opts, out);
  } else if constexpr (std::is_same_v<M, bool>) {
    if (!j.is_boolean()) return TypeError(p, "boolean", j);
    *out = j.get<bool>();
    return absl::OkStatus();
  } else if constexpr (std::is_integral_v<M> && std::is_unsigned_v<M>) {
    uint64_t v = 0;
    absl::Status st = DecodeUint(j, p, std::numeric_limits<M>::max(), &v);
    if (st.ok()) *out = static_cast<M>(v);
    return st;
  } else if constexpr (std::is_integral_v<M>) {
    int64_t v = 0;
    absl::Status st =
        DecodeInt(j, p, std::numeric_limits<M>::min(), std::numeric_limits<M>::max(), &v);
    if (st.ok()) *out = static_cast<M>(v);
    return st;
  } else if constexpr (std::is_floating_point_v<M>) {
    if (!j.is_number()) return TypeError(p, "number", j);
    *out = static_cast<M>(j.get<double>());
    return absl::OkStatus();
  } else if constexpr (IsOptional<M>::value) {
    typename M::value_type v{};
    absl::Status st = DecodeValue(j, p, opts, &v);
    if (st.ok()) *out = std::move(v);
    return st;
  } else if constexpr (IsVector<M>::value) {
    if (!j.is_array()) return TypeError(p, "array", j);
    M v(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      absl::Status st = DecodeValue(j[i], Path{&p, {}, static_cast<int64_t>(i)}, opts, &v[i]);
      if (!st.ok()) return st;
    }
    *out = std::move(v);
    return absl::OkStatus();
  } else if constexpr (IsStringMap<M>::value) {
    if (!j.is_object()) return TypeError(p, "object", j);
    M v;
    for (auto it = j.begin(); it != j.end(); ++it) {
      absl::Status st = DecodeValue(it.value(), Path{&p, it.key(), -1, true}, opts, &v[it.key()]);
      if (!st.ok()) return st;
    }
    *out = std::move(v);
    return absl::OkStatus();
  } else if constexpr (std::is_same_v<M, Json>) {
    *out = j;
    return absl::OkStatus();
  } else if constexpr (Described<M>) {
    return DecodeStruct(j, p, out);
  } else {
    return DecodeLeaf(j, p, out);
  }
}

template <typename T>
std::vector<std::string_view> FieldNames() {
  return std::apply([](const auto&... f) { return std::vector<std::string_view>{f.name...}; },
                    Fields<T>::kList);
}

template <typename T>
Json EncodeStruct(const T& v) {
  Json out = Json::object();
  std::apply(
      [&](const auto&... f) {
        auto put = [&](const auto& field) {
          const auto& m = v.*field.member;
          if ((field.opts & kOmitEmpty) != 0 && IsEmpty(m)) return;
          out.emplace(std::string(field.name), EncodeValue(m, field.opts));
        };
        (put(f), ...);
      },
      Fields<T>::kList);
  if constexpr (KeepsUnknown<T>) {
    if (!v.unknown.empty()) AppendUnknown(v.unknown, FieldNames<T>(), &out);
  }
  return out;
}

template <typename T>
absl::Status DecodeStruct(const Json& j, const Path& p, T* out) {
  if (!j.is_object()) return TypeError(p, "object", j);
  Json unknown = Json::object();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    absl::Status st;
    const bool known = std::apply(
        [&](const auto&... f) {
          auto take = [&](const auto& field) {
            if (field.name != key) return false;
            st = DecodeValue(it.value(), Path{&p, field.name}, field.opts, &(out->*field.member));
            return true;
          };
          return (take(f) || ...);
        },
        Fields<T>::kList);
    if (!st.ok()) return st;
    if constexpr (KeepsUnknown<T>) {
      if (!known) unknown.emplace(key, Json(it.value()));
    }
  }
  if constexpr (KeepsUnknown<T>) {
    out->unknown = unknown.empty() ? RawJson{} : KeepUnknown(unknown);
  }
  return absl::OkStatus();
}

// Whether `j` nests objects/arrays deeper than kMaxDepth (recursion stops at the limit).
template <typename J>
bool ExceedsDepth(const J& j, int depth = 0) {
  if (!j.is_structured()) return false;
  if (depth >= kMaxDepth) return true;
  for (const auto& e : j) {
    if (ExceedsDepth(e, depth + 1)) return true;
  }
  return false;
}

absl::Status DepthError();

}  // namespace codec

// Compact Go-style JSON text of `j` (see the escaping rules above). Never throws.
std::string SerializeJson(const Json& j);

// Parses JSON text, rejecting documents nested deeper than codec::kMaxDepth. Never throws.
absl::StatusOr<Json> ParseJson(std::string_view text);

// Json-level codec.
template <typename T>
Json ToJson(const T& v) {
  return codec::EncodeStruct(v);
}

// Trees nested deeper than codec::kMaxDepth are rejected.
template <typename T>
absl::StatusOr<T> FromJson(const Json& j) {
  T out{};
  if (codec::ExceedsDepth(j)) return codec::DepthError();
  try {
    absl::Status st = codec::DecodeStruct(j, codec::Path{}, &out);
    if (!st.ok()) return st;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
  return out;
}

// Same, from an unordered nlohmann::json (e.g. an object a reflector stores); copies the tree.
template <typename T>
absl::StatusOr<T> FromJson(const nlohmann::json& j) {
  if (codec::ExceedsDepth(j)) return codec::DepthError();
  try {
    return FromJson<T>(Json(j));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
}

// Text-level codec: compact JSON as the API server would write it / reads it.
template <typename T>
std::string Encode(const T& v) {
  return SerializeJson(ToJson(v));
}

template <typename T>
absl::StatusOr<T> Decode(std::string_view text) {
  absl::StatusOr<Json> j = ParseJson(text);
  if (!j.ok()) return j.status();
  return FromJson<T>(*j);
}

}  // namespace kubelet::api

#endif  // KUBELET_API_CODEC_H_
