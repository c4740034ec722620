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
// in a *_codec.h / *_fields.h header). Member types may be: std::string, bool, integers, double,
// Quantity, IntOrString, Time, MicroTime, absl::Duration (metav1.Duration), RawJson, Json, any
// described struct, std::optional and Box / std::vector / std::map<std::string, _> of those.
// A specialization may also name the Go type, `static constexpr std::string_view kGoName`, and a
// Field its Go type as a fourth argument ("v1.TaintEffect"): decoders that print Go's own error
// messages (the KubeletConfiguration loader) read them; this codec does not. Besides Field, a table
// may hold:
//   * Inline(&S::common): the members of a described struct written into this object, as Go
//     writes an embedded struct (EphemeralContainer embeds EphemeralContainerCommon);
//   * Entry("nfs", &S::other_sources, opts): the entry of a std::map<std::string, V> member whose
//     key is the JSON name, written at this place in the table when the map holds it (absent
//     otherwise); for a Go struct with many optional members the kubelet keeps opaque.
//
// Encoding follows Go's encoding/json for the upstream type:
//   * members in table order (= Go declaration order); map keys sorted (byte order);
//   * kOmitEmpty drops "", 0, false, empty vectors/maps, nullopt, empty RawJson and null Json.
//     Like Go, it never drops a struct: Time/MicroTime/Quantity/IntOrString and described structs
//     are always written (a zero Time as null);
//   * without kOmitEmpty, nullopt and empty RawJson are null; empty vectors and maps are [] / {}
//     (Go would write null for a nil slice; the API server reads both the same), or null with
//     kEmptyAsNull where the output must be byte-identical to Go's (a pod hash, /pods);
//   * a kFallback entry (a deprecated alias, e.g. PodSpec's serviceAccount) writes its member a
//     second time under its own name;
//   * Time is RFC 3339 in seconds, MicroTime has six fraction digits, a Duration is Go's
//     Duration.String() ("1m30s"), Quantity is its canonical
//     string, IntOrString an integer or a string, kBase64 strings ([]byte) are standard base64;
//   * text is compact, with Go's escaping: < > & U+2028 U+2029 as \u003c..., invalid UTF-8 as
//     \ufffd; floats as strconv.FormatFloat(f, 'f' or 'e', -1, 64);
//   * Encode streams the text; ToJson builds the Json tree (same content, for callers that edit
//     it); a test pins that they agree.
// Decoding accepts what the API server writes, from either tree: Json (member order kept) or
// UnorderedJson (nlohmann::json: members in key order, faster to parse; what the Pod codec uses):
//   * null anywhere = absent (the member keeps its default); members are matched case-sensitively
//     (as sigs.k8s.io/json does);
//   * a type mismatch is an InvalidArgument error naming the field path, e.g.
//       spec.leaseDurationSeconds: expected integer, got "abc"
//     (arrays as items[3], map entries as labels[app]); integers are range-checked
//       spec.containers[0].ports[0].containerPort: value 3000000000 out of range for int32;
//   * RawJson takes any JSON value; with kObject (a Go struct kept opaque) anything but an object
//     is a type error; with kSortKeys its objects are stored with members sorted by key at every
//     level (as Go re-encodes a map[string]interface{}), so the text does not depend on the
//     input's member order;
//   * a kFallback entry is type-checked where it appears but only used when, once the whole object
//     is read, its member is still empty (serviceAccountName wins over serviceAccount);
//   * unknown members are ignored, unless the struct has a member `RawJson unknown`: then they are
//     kept there (a JSON object, document order) and written back after the known members, so a
//     read-modify-write (GET node, change status, PUT) does not drop fields the kubelet does not
//     model. Either way, when the root Path has an `unknown_paths` sink, each unknown member's
//     path (spec.containers[0].bogus) is appended to it, in the tree's member order;
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
#include "absl/time/time.h"
#include "api/box.h"
#include "api/meta.h"
#include "api/quantity.h"
#include "nlohmann/json.hpp"

namespace kubelet::api {

// The JSON tree the codec works on; ordered so that encoding keeps Go's member order and decoding
// keeps the order of unknown members.
using Json = nlohmann::ordered_json;

// nlohmann's default tree: members sorted by key (Go's order for a map), parsed about twice as
// fast as Json (whose object is a vector of pairs with const keys, copied whenever it grows).
// Decoding accepts either tree.
using UnorderedJson = nlohmann::json;

namespace codec {

// Maximum nesting of objects/arrays in an accepted document.
inline constexpr int kMaxDepth = 512;

// Field options (bit set).
inline constexpr uint32_t kOmitEmpty = 1u << 0;    // Go's ",omitempty"
inline constexpr uint32_t kBase64 = 1u << 1;       // std::string members holding Go []byte
inline constexpr uint32_t kEmptyAsNull = 1u << 2;  // an empty vector/map is Go's nil: null
inline constexpr uint32_t kObject = 1u << 3;       // RawJson standing for a Go struct
inline constexpr uint32_t kSortKeys = 1u << 4;     // RawJson kept with sorted object members
inline constexpr uint32_t kFallback = 1u << 5;     // deprecated alias of a member named before
inline constexpr uint32_t kGoPointer = 1u << 6;    // a Go *T held as a plain value: for Go's null
                                                   // rules (null resets it), not used here

// One table entry: the JSON name, the member, the options, and optionally the Go type's name.
template <typename T, typename M>
struct FieldSpec {
  std::string_view name;
  M T::*member;
  uint32_t opts;
  std::string_view go_type;  // empty: derived from M where a decoder needs it
};

template <typename T, typename M>
constexpr FieldSpec<T, M> Field(std::string_view name, M T::*member, uint32_t opts = 0,
                                std::string_view go_type = {}) {
  return FieldSpec<T, M>{name, member, opts, go_type};
}

// A described struct member whose members are written into the enclosing object (Go embedding).
template <typename T, typename M>
struct InlineSpec {
  M T::*member;
};

template <typename T, typename M>
constexpr InlineSpec<T, M> Inline(M T::*member) {
  return InlineSpec<T, M>{member};
}

// The entry `name` of a map member, as a member of the enclosing object (omitted when absent).
template <typename T, typename V>
struct EntrySpec {
  std::string_view name;
  std::map<std::string, V> T::*member;
  uint32_t opts;
};

template <typename T, typename V>
constexpr EntrySpec<T, V> Entry(std::string_view name, std::map<std::string, V> T::*member,
                                uint32_t opts = 0) {
  return EntrySpec<T, V>{name, member, opts};
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
  // Read on the root only: where decoding appends the paths of unknown members (nullable).
  std::vector<std::string>* unknown_paths = nullptr;
  std::string String() const;
};

// Leaf codecs (codec.cc).
// The decoders take either JSON tree (Json or UnorderedJson); both are instantiated in codec.cc.
template <typename J>
absl::Status TypeError(const Path& p, std::string_view want, const J& got);
Json EncodeString(const std::string& s, uint32_t opts);
template <typename J>
absl::Status DecodeString(const J& j, const Path& p, uint32_t opts, std::string* out);
// `type` (Go's name: int32, uint64...) completes the out-of-range message.
template <typename J>
absl::Status DecodeInt(const J& j, const Path& p, int64_t lo, int64_t hi, std::string_view type,
                       int64_t* out);
template <typename J>
absl::Status DecodeUint(const J& j, const Path& p, uint64_t hi, std::string_view type,
                        uint64_t* out);
// RawJson honouring kObject and kSortKeys.
template <typename J>
absl::Status DecodeRaw(const J& j, const Path& p, uint32_t opts, RawJson* out);
// Appends `key` under `p` to the root's unknown_paths, if it has one.
void NoteUnknown(const Path& p, std::string_view key);
Json EncodeLeaf(const Time& t);
Json EncodeLeaf(const MicroTime& t);
Json EncodeLeaf(const Quantity& q);
Json EncodeLeaf(const IntOrString& v);
Json EncodeLeaf(const RawJson& r);
Json EncodeLeaf(const absl::Duration& d);
template <typename J>
absl::Status DecodeLeaf(const J& j, const Path& p, Time* out);
template <typename J>
absl::Status DecodeLeaf(const J& j, const Path& p, MicroTime* out);
template <typename J>
absl::Status DecodeLeaf(const J& j, const Path& p, Quantity* out);
template <typename J>
absl::Status DecodeLeaf(const J& j, const Path& p, IntOrString* out);
template <typename J>
absl::Status DecodeLeaf(const J& j, const Path& p, absl::Duration* out);
// Appends the members of `unknown` (JSON object text) not named in `known` to the object `out`;
// text that does not parse as an object is dropped.
void AppendUnknown(const RawJson& unknown, const std::vector<std::string_view>& known, Json* out);
// The RawJson holding `members` (a JSON object) for a struct's `unknown` member.
RawJson KeepUnknown(const Json& members);

// Go's name of an integer type of the same size and signedness ("int32"), for messages.
template <typename M>
constexpr std::string_view IntName() {
  constexpr bool kSigned = std::is_signed_v<M>;
  switch (sizeof(M)) {
    case 1:
      return kSigned ? "int8" : "uint8";
    case 2:
      return kSigned ? "int16" : "uint16";
    case 4:
      return kSigned ? "int32" : "uint32";
    default:
      return kSigned ? "int64" : "uint64";
  }
}

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsOptional<Box<T>> : std::true_type {};
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
template <typename T, typename J>
absl::Status DecodeStruct(const J& j, const Path& p, T* out);

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
    if (m.empty() && (opts & kEmptyAsNull) != 0) return Json(nullptr);
    Json a = Json::array();
    a.get_ref<Json::array_t&>().reserve(m.size());
    for (const auto& e : m) a.push_back(EncodeValue(e, opts));
    return a;
  } else if constexpr (IsStringMap<M>::value) {
    if (m.empty() && (opts & kEmptyAsNull) != 0) return Json(nullptr);
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
template <typename M, typename J>
absl::Status DecodeValue(const J& j, const Path& p, uint32_t opts, M* out) {
  if (j.is_null()) return absl::OkStatus();
  if constexpr (std::is_same_v<M, std::string>) {
    return DecodeString(j, p, opts, out);
  } else if constexpr (std::is_same_v<M, bool>) {
    if (!j.is_boolean()) return TypeError(p, "boolean", j);
    *out = j.template get<bool>();
    return absl::OkStatus();
  } else if constexpr (std::is_integral_v<M> && std::is_unsigned_v<M>) {
    uint64_t v = 0;
    absl::Status st = DecodeUint(j, p, std::numeric_limits<M>::max(), IntName<M>(), &v);
    if (st.ok()) *out = static_cast<M>(v);
    return st;
  } else if constexpr (std::is_integral_v<M>) {
    int64_t v = 0;
    absl::Status st = DecodeInt(j, p, std::numeric_limits<M>::min(), std::numeric_limits<M>::max(),
                                IntName<M>(), &v);
    if (st.ok()) *out = static_cast<M>(v);
    return st;
  } else if constexpr (std::is_floating_point_v<M>) {
    if (!j.is_number()) return TypeError(p, "number", j);
    *out = static_cast<M>(j.template get<double>());
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
    *out = Json(j);
    return absl::OkStatus();
  } else if constexpr (std::is_same_v<M, RawJson>) {
    return DecodeRaw(j, p, opts, out);
  } else if constexpr (Described<M>) {
    return DecodeStruct(j, p, out);
  } else {
    return DecodeLeaf(j, p, out);
  }
}

// Table entries, one overload per kind of entry: the JSON names they claim, encoding into an
// object, decoding of one member (true when the entry names `key`), and the deferred kFallback.
template <typename T>
void EncodeMembers(const T& v, Json* out);
template <typename T, typename J>
bool DecodeMember(const std::string& key, const J& val, const Path& p, T* out, absl::Status* st);
template <typename T, typename J>
absl::Status ApplyFallbacks(const J& j, const Path& p, T* out);
template <typename T>
void CollectNames(std::vector<std::string_view>* names);

template <typename T, typename M>
void CollectName(const FieldSpec<T, M>& f, std::vector<std::string_view>* names) {
  names->push_back(f.name);
}
template <typename T, typename V>
void CollectName(const EntrySpec<T, V>& f, std::vector<std::string_view>* names) {
  names->push_back(f.name);
}
template <typename T, typename M>
void CollectName(const InlineSpec<T, M>& /*f*/, std::vector<std::string_view>* names) {
  CollectNames<M>(names);
}

template <typename T, typename M>
void EncodeEntry(const FieldSpec<T, M>& f, const T& v, Json* out) {
  const M& m = v.*f.member;
  if ((f.opts & kOmitEmpty) != 0 && IsEmpty(m)) return;
  out->emplace(std::string(f.name), EncodeValue(m, f.opts));
}
template <typename T, typename V>
void EncodeEntry(const EntrySpec<T, V>& f, const T& v, Json* out) {
  const auto& map = v.*f.member;
  if (map.empty()) return;
  auto it = map.find(std::string(f.name));
  if (it == map.end()) return;
  out->emplace(std::string(f.name), EncodeValue(it->second, f.opts));
}
template <typename T, typename M>
void EncodeEntry(const InlineSpec<T, M>& f, const T& v, Json* out) {
  EncodeMembers(v.*f.member, out);
}

template <typename T, typename M, typename J>
bool DecodeEntry(const FieldSpec<T, M>& f, const std::string& key, const J& val, const Path& p,
                 T* out, absl::Status* st) {
  if (f.name != key) return false;
  if ((f.opts & kFallback) != 0) {  // type-checked now, applied by ApplyFallbacks
    M scratch{};
    *st = DecodeValue(val, Path{&p, f.name}, f.opts, &scratch);
    return true;
  }
  *st = DecodeValue(val, Path{&p, f.name}, f.opts, &(out->*f.member));
  return true;
}
template <typename T, typename V, typename J>
bool DecodeEntry(const EntrySpec<T, V>& f, const std::string& key, const J& val, const Path& p,
                 T* out, absl::Status* st) {
  if (f.name != key) return false;
  if (val.is_null()) return true;
  V v{};
  *st = DecodeValue(val, Path{&p, f.name}, f.opts, &v);
  if (st->ok()) (out->*f.member)[key] = std::move(v);
  return true;
}
template <typename T, typename M, typename J>
bool DecodeEntry(const InlineSpec<T, M>& f, const std::string& key, const J& val, const Path& p,
                 T* out, absl::Status* st) {
  return DecodeMember(key, val, p, &(out->*f.member), st);
}

template <typename T, typename M, typename J>
absl::Status Fallback(const FieldSpec<T, M>& f, const J& j, const Path& p, T* out) {
  if ((f.opts & kFallback) == 0 || !IsEmpty(out->*f.member)) return absl::OkStatus();
  auto it = j.find(std::string(f.name));
  if (it == j.end()) return absl::OkStatus();
  return DecodeValue(*it, Path{&p, f.name}, f.opts, &(out->*f.member));
}
template <typename T, typename V, typename J>
absl::Status Fallback(const EntrySpec<T, V>& /*f*/, const J& /*j*/, const Path& /*p*/, T* /*out*/) {
  return absl::OkStatus();
}
template <typename T, typename M, typename J>
absl::Status Fallback(const InlineSpec<T, M>& f, const J& j, const Path& p, T* out) {
  return ApplyFallbacks(j, p, &(out->*f.member));
}

template <typename T>
void CollectNames(std::vector<std::string_view>* names) {
  std::apply([&](const auto&... f) { (CollectName(f, names), ...); }, Fields<T>::kList);
}

template <typename T>
std::vector<std::string_view> FieldNames() {
  std::vector<std::string_view> names;
  CollectNames<T>(&names);
  return names;
}

template <typename T>
void EncodeMembers(const T& v, Json* out) {
  std::apply([&](const auto&... f) { (EncodeEntry(f, v, out), ...); }, Fields<T>::kList);
}

template <typename T, typename J>
bool DecodeMember(const std::string& key, const J& val, const Path& p, T* out, absl::Status* st) {
  return std::apply([&](const auto&... f) { return (DecodeEntry(f, key, val, p, out, st) || ...); },
                    Fields<T>::kList);
}

template <typename T, typename J>
absl::Status ApplyFallbacks(const J& j, const Path& p, T* out) {
  absl::Status st;
  std::apply(
      [&](const auto&... f) {
        auto apply = [&](const auto& field) {
          if (st.ok()) st = Fallback(field, j, p, out);
        };
        (apply(f), ...);
      },
      Fields<T>::kList);
  return st;
}

template <typename T>
Json EncodeStruct(const T& v) {
  Json out = Json::object();
  // Json's object is a vector of pairs with const keys: growing it would copy every member.
  out.get_ref<Json::object_t&>().reserve(std::tuple_size_v<decltype(Fields<T>::kList)> + 1);
  EncodeMembers(v, &out);
  if constexpr (KeepsUnknown<T>) {
    if (!v.unknown.empty()) AppendUnknown(v.unknown, FieldNames<T>(), &out);
  }
  return out;
}

template <typename T, typename J>
absl::Status DecodeStruct(const J& j, const Path& p, T* out) {
  if (!j.is_object()) return TypeError(p, "object", j);
  [[maybe_unused]] Json unknown;  // null (no allocation) until a member is kept
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    absl::Status st;
    const bool known = DecodeMember(key, it.value(), p, out, &st);
    if (!st.ok()) return st;
    if (!known) {
      NoteUnknown(p, key);
      if constexpr (KeepsUnknown<T>) unknown.emplace(key, Json(it.value()));
    }
  }
  absl::Status st = ApplyFallbacks(j, p, out);
  if (!st.ok()) return st;
  if constexpr (KeepsUnknown<T>) {
    out->unknown = unknown.empty() ? RawJson{} : KeepUnknown(unknown);
  }
  return absl::OkStatus();
}

// Streaming encoder: appends exactly the text SerializeJson(EncodeValue(m, opts)) would, without
// building the tree (what Encode uses; about four times faster for a pod).
void AppendLeaf(std::string* out, const Time& t);
void AppendLeaf(std::string* out, const MicroTime& t);
void AppendLeaf(std::string* out, const Quantity& q);
void AppendLeaf(std::string* out, const IntOrString& v);
void AppendLeaf(std::string* out, const RawJson& r);
void AppendLeaf(std::string* out, const absl::Duration& d);
void AppendString(std::string* out, const std::string& s, uint32_t opts);
void AppendInt(std::string* out, int64_t i);
void AppendUint(std::string* out, uint64_t u);
void AppendDouble(std::string* out, double d);
void AppendJsonText(std::string* out, const Json& j);
void AppendKey(std::string* out, std::string_view name, bool* first);
// Appends `,"k":v` for the members of `unknown` (JSON object text) not named in `known`.
void AppendUnknownMembers(std::string* out, const RawJson& unknown,
                          const std::vector<std::string_view>& known, bool* first);

template <typename T>
void AppendStruct(std::string* out, const T& v);
template <typename T>
void AppendMembers(std::string* out, const T& v, bool* first);

template <typename M>
void AppendValue(std::string* out, const M& m, uint32_t opts) {
  if constexpr (std::is_same_v<M, std::string>) {
    AppendString(out, m, opts);
  } else if constexpr (std::is_same_v<M, bool>) {
    out->append(m ? "true" : "false");
  } else if constexpr (std::is_integral_v<M> && std::is_unsigned_v<M>) {
    AppendUint(out, m);
  } else if constexpr (std::is_integral_v<M>) {
    AppendInt(out, m);
  } else if constexpr (std::is_floating_point_v<M>) {
    AppendDouble(out, m);
  } else if constexpr (IsOptional<M>::value) {
    if (m.has_value()) {
      AppendValue(out, *m, opts);
    } else {
      out->append("null");
    }
  } else if constexpr (IsVector<M>::value) {
    if (m.empty() && (opts & kEmptyAsNull) != 0) {
      out->append("null");
      return;
    }
    out->push_back('[');
    for (size_t i = 0; i < m.size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendValue(out, m[i], opts);
    }
    out->push_back(']');
  } else if constexpr (IsStringMap<M>::value) {
    if (m.empty() && (opts & kEmptyAsNull) != 0) {
      out->append("null");
      return;
    }
    bool first = true;
    out->push_back('{');
    for (const auto& [k, e] : m) {
      AppendKey(out, k, &first);
      AppendValue(out, e, opts);
    }
    out->push_back('}');
  } else if constexpr (std::is_same_v<M, Json>) {
    AppendJsonText(out, m);
  } else if constexpr (Described<M>) {
    AppendStruct(out, m);
  } else {
    AppendLeaf(out, m);
  }
}

template <typename T, typename M>
void AppendEntry(const FieldSpec<T, M>& f, const T& v, std::string* out, bool* first) {
  const M& m = v.*f.member;
  if ((f.opts & kOmitEmpty) != 0 && IsEmpty(m)) return;
  AppendKey(out, f.name, first);
  AppendValue(out, m, f.opts);
}
template <typename T, typename V>
void AppendEntry(const EntrySpec<T, V>& f, const T& v, std::string* out, bool* first) {
  const auto& map = v.*f.member;
  if (map.empty()) return;
  auto it = map.find(std::string(f.name));
  if (it == map.end()) return;
  AppendKey(out, f.name, first);
  AppendValue(out, it->second, f.opts);
}
template <typename T, typename M>
void AppendEntry(const InlineSpec<T, M>& f, const T& v, std::string* out, bool* first) {
  AppendMembers(out, v.*f.member, first);
}

template <typename T>
void AppendMembers(std::string* out, const T& v, bool* first) {
  std::apply([&](const auto&... f) { (AppendEntry(f, v, out, first), ...); }, Fields<T>::kList);
}

template <typename T>
void AppendStruct(std::string* out, const T& v) {
  bool first = true;
  out->push_back('{');
  AppendMembers(out, v, &first);
  if constexpr (KeepsUnknown<T>) {
    if (!v.unknown.empty()) AppendUnknownMembers(out, v.unknown, FieldNames<T>(), &first);
  }
  out->push_back('}');
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

// Same, with object members sorted by key at every level (Go's order for a map). Never throws.
std::string SerializeJsonSortedKeys(const Json& j);
std::string SerializeJson(const UnorderedJson& j);  // sorted by nature

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

// Same, from an unordered nlohmann::json (e.g. an object a reflector stores), without a copy.
template <typename T>
absl::StatusOr<T> FromJson(const nlohmann::json& j) {
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

// Text-level codec: compact JSON as the API server would write it / reads it. Encode streams
// (SerializeJson(ToJson(v)) gives the same text).
template <typename T>
std::string Encode(const T& v) {
  std::string out;
  codec::AppendStruct(&out, v);
  return out;
}

template <typename T>
absl::StatusOr<T> Decode(std::string_view text) {
  absl::StatusOr<Json> j = ParseJson(text);
  if (!j.ok()) return j.status();
  return FromJson<T>(*j);
}

}  // namespace kubelet::api

#endif  // KUBELET_API_CODEC_H_
