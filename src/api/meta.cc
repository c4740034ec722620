#include "api/meta.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/meta_codec.h"
#include "common/strings.h"

namespace kubelet::api {
namespace {

// Splits a parsed instant into Unix seconds (floor) and the nanoseconds past them.
void SplitTime(absl::Time t, int64_t* seconds, int32_t* nanos) {
  *seconds = absl::ToUnixSeconds(t);  // truncates toward negative infinity
  *nanos = static_cast<int32_t>(absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(*seconds)));
}

absl::Status ParseTimeText(std::string_view s, int64_t* seconds, int32_t* nanos) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, AV(s), &t, &err)) {
    return absl::InvalidArgumentError(
        absl::StrCat("parsing time \"", AV(s), "\" as RFC3339: ", err));
  }
  SplitTime(t, seconds, nanos);
  return absl::OkStatus();
}

}  // namespace

std::string Time::RFC3339() const {
  if (!set) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                          absl::UTCTimeZone());
}

absl::StatusOr<Time> Time::ParseRFC3339(std::string_view s) {
  Time t;
  absl::Status st = ParseTimeText(s, &t.seconds, &t.nanos);
  if (!st.ok()) return st;
  t.set = true;
  return t;
}

std::string MicroTime::RFC3339Micro() const {
  if (!set) return "";
  const absl::Time t = absl::FromUnixSeconds(seconds) + absl::Nanoseconds(nanos);
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

absl::StatusOr<MicroTime> MicroTime::Parse(std::string_view s) {
  MicroTime t;
  absl::Status st = ParseTimeText(s, &t.seconds, &t.nanos);
  if (!st.ok()) return st;
  t.set = true;
  return t;
}

std::string IntOrString::ToString() const {
  return type == Type::kString ? str_val : std::to_string(int_val);
}

namespace {

Json MapPatch(const StringMap& before, const StringMap& after) {
  Json out = Json::object();
  for (const auto& [k, v] : after) {
    auto it = before.find(k);
    if (it == before.end() || it->second != v) out[k] = v;
  }
  for (const auto& [k, v] : before) {
    if (!after.count(k)) out[k] = nullptr;
  }
  return out;
}

}  // namespace

Json MetadataMapsPatch(const ObjectMeta& before, const ObjectMeta& after) {
  Json metadata = Json::object();
  if (Json labels = MapPatch(before.labels, after.labels); !labels.empty()) {
    metadata["labels"] = std::move(labels);
  }
  if (Json annotations = MapPatch(before.annotations, after.annotations); !annotations.empty()) {
    metadata["annotations"] = std::move(annotations);
  }
  return metadata.empty() ? Json::object() : Json{{"metadata", std::move(metadata)}};
}

}  // namespace kubelet::api
