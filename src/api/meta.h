// Shared API machinery value types (upstream k8s.io/apimachinery meta/v1, v1.28): object and list
// metadata, times, IntOrString, opaque JSON, metav1.Status and the generic List / WatchEvent
// envelopes.
//
// Plain value structs with the same conventions as pod.h (Go pointers are std::optional, Go value
// fields use their zero value for "unset"). The JSON field tables for these types live in
// meta_codec.h, so that this header stays free of the JSON library (pod.h includes it).
// Value types; thread-compatible. All structs support == (defaulted, member-wise).
#ifndef KUBELET_API_META_H_
#define KUBELET_API_META_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace kubelet::api {

using StringMap = std::map<std::string, std::string>;

// Opaque JSON value (compact text, e.g. R"({"nodeAffinity":{...}})"). Empty string = absent.
// Used for fields the kubelet never interprets and for unknown fields kept across a
// read-modify-write (then it holds a JSON object of the members the field table does not name).
struct RawJson {
  std::string json;
  bool empty() const { return json.empty(); }
  bool operator==(const RawJson&) const = default;
};

// metav1.Time: an instant with second precision on the wire ("2006-01-02T15:04:05Z", UTC).
// The zero value (set == false) is Go's zero time, which encodes as JSON null.
struct Time {
  bool set = false;
  int64_t seconds = 0;  // Unix seconds.
  int32_t nanos = 0;    // Kept in memory; the wire form truncates to seconds like metav1.Time.

  static Time FromUnix(int64_t seconds, int32_t nanos = 0) { return Time{true, seconds, nanos}; }
  bool IsZero() const { return !set; }
  // "2006-01-02T15:04:05Z" (UTC, seconds precision), "" for the zero value.
  std::string RFC3339() const;
  // Accepts what Go's time.Parse(time.RFC3339, s) accepts (fractional seconds, numeric offsets).
  static absl::StatusOr<Time> ParseRFC3339(std::string_view s);
  bool operator==(const Time&) const = default;
};

// metav1.MicroTime: like Time, but microsecond precision on the wire
// ("2006-01-02T15:04:05.000000Z"). Used by Lease and by Event.eventTime. Zero value = null.
struct MicroTime {
  bool set = false;
  int64_t seconds = 0;  // Unix seconds.
  int32_t nanos = 0;    // The wire form truncates to microseconds.

  static MicroTime FromUnix(int64_t seconds, int32_t nanos = 0) {
    return MicroTime{true, seconds, nanos};
  }
  bool IsZero() const { return !set; }
  // "2006-01-02T15:04:05.000000Z" (UTC), "" for the zero value.
  std::string RFC3339Micro() const;
  // Accepts any RFC 3339 time (Go's parser insists on exactly six fraction digits; we are lenient).
  static absl::StatusOr<MicroTime> Parse(std::string_view s);
  bool operator==(const MicroTime&) const = default;
};

// intstr.IntOrString.
struct IntOrString {
  enum class Type { kInt, kString };
  Type type = Type::kInt;
  int32_t int_val = 0;
  std::string str_val;

  static IntOrString FromInt(int32_t v) { return IntOrString{Type::kInt, v, ""}; }
  static IntOrString FromString(std::string s) {
    return IntOrString{Type::kString, 0, std::move(s)};
  }
  bool is_string() const { return type == Type::kString; }
  std::string ToString() const;  // "8080" or "http"
  bool operator==(const IntOrString&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Object metadata.

struct OwnerReference {
  std::string api_version;  // apiVersion
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> block_owner_deletion;
  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;  // "namespace"
  std::string self_link;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  Time creation_timestamp;
  std::optional<Time> deletion_timestamp;
  std::optional<int64_t> deletion_grace_period_seconds;
  StringMap labels;
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;
  // managedFields ([]ManagedFieldsEntry) kept opaque so an update sends back what it read. The
  // pod codec does not keep it.
  RawJson managed_fields;
  // Members of a decoded "metadata" object that the table does not name (codec.h).
  RawJson unknown;
  bool operator==(const ObjectMeta&) const = default;
};

// metav1.ListMeta.
struct ListMeta {
  std::string self_link;
  std::string resource_version;
  std::string continue_;  // "continue"
  std::optional<int64_t> remaining_item_count;
  bool operator==(const ListMeta&) const = default;
};

// ---------------------------------------------------------------------------------------------
// metav1.Status: the body of every API error (and of some successful deletes).

struct StatusCause {
  std::string reason;  // CauseType: FieldValueNotFound, FieldValueInvalid, ...
  std::string message;
  std::string field;
  bool operator==(const StatusCause&) const = default;
};

struct StatusDetails {
  std::string name;
  std::string group;
  std::string kind;
  std::string uid;
  std::vector<StatusCause> causes;
  int32_t retry_after_seconds = 0;
  bool operator==(const StatusDetails&) const = default;
};

struct Status {
  std::string kind = "Status";
  std::string api_version = "v1";
  ListMeta metadata;
  std::string status;  // "Success" or "Failure"
  std::string message;
  std::string reason;  // StatusReason: NotFound, AlreadyExists, Conflict, ...
  std::optional<StatusDetails> details;
  int32_t code = 0;  // HTTP status code
  bool operator==(const Status&) const = default;
};

inline constexpr char kStatusSuccess[] = "Success";
inline constexpr char kStatusFailure[] = "Failure";

// ---------------------------------------------------------------------------------------------
// Envelopes.

// Any list (PodList, NodeList, ...): T is the typed item, or RawJson to keep items opaque.
template <typename T>
struct List {
  std::string kind;         // e.g. "NodeList"
  std::string api_version;  // e.g. "v1"
  ListMeta metadata;
  std::vector<T> items;
  bool operator==(const List&) const = default;
};

// metav1.WatchEvent: one line of a watch stream. T is the typed object, or RawJson when the type
// decides (an ERROR event carries a Status).
template <typename T>
struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  T object;
  bool operator==(const WatchEvent&) const = default;
};

inline constexpr char kWatchAdded[] = "ADDED";
inline constexpr char kWatchModified[] = "MODIFIED";
inline constexpr char kWatchDeleted[] = "DELETED";
inline constexpr char kWatchBookmark[] = "BOOKMARK";
inline constexpr char kWatchError[] = "ERROR";

}  // namespace kubelet::api

#endif  // KUBELET_API_META_H_
