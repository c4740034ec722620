#include "kubelet/nodeshutdown/state.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "common/json_nesting.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"

namespace kubelet::nodeshutdown {
namespace {

using Json = nlohmann::json;

constexpr char kZeroTime[] = "0001-01-01T00:00:00Z";
constexpr int kMaxDepth = 64;

std::string FormatTime(const std::optional<absl::Time>& t) {
  if (!t.has_value()) return kZeroTime;
  // RFC 3339 with the fraction Go's RFC3339Nano writes (trailing zeros dropped), in UTC.
  return absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E*S", *t, absl::UTCTimeZone()), "Z");
}

absl::StatusOr<std::optional<absl::Time>> ParseTime(const Json& value, std::string_view field) {
  if (value.is_null()) return std::optional<absl::Time>();
  if (!value.is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("json: cannot unmarshal ", AV(std::string_view(value.type_name())),
                     " into Go struct field state.", AV(field), " of type time.Time"));
  }
  const std::string& text = value.get_ref<const std::string&>();
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &err)) {
    return absl::InvalidArgumentError(
        absl::StrCat("parsing time \"", text, "\" of ", AV(field), " as RFC 3339: ", err));
  }
  // Go's zero time is year 1; anything that early means "not set".
  if (t <= absl::FromCivil(absl::CivilSecond(1, 1, 1, 0, 0, 0), absl::UTCTimeZone())) {
    return std::optional<absl::Time>();
  }
  return std::optional<absl::Time>(t);
}

}  // namespace

std::string EncodeShutdownState(const ShutdownState& state) {
  return absl::StrCat("{\"startTime\":\"", FormatTime(state.start_time), "\",\"endTime\":\"",
                      FormatTime(state.end_time), "\"}");
}

absl::StatusOr<ShutdownState> DecodeShutdownState(const std::string& text) {
  if (JsonNestingExceeds(text, kMaxDepth)) {
    return absl::InvalidArgumentError("invalid JSON: nested too deeply");
  }
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError("invalid JSON");
  ShutdownState state;
  if (doc.is_null()) return state;
  if (!doc.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("json: cannot unmarshal ",
                                                   AV(std::string_view(doc.type_name())),
                                                   " into Go value of type nodeshutdown.state"));
  }
  // encoding/json matches field names case-insensitively.
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    std::string key = it.key();
    for (char& c : key) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    std::optional<absl::Time>* out = key == "starttime" ? &state.start_time
                                     : key == "endtime" ? &state.end_time
                                                        : nullptr;
    if (out == nullptr) continue;
    absl::StatusOr<std::optional<absl::Time>> t =
        ParseTime(it.value(), key == "starttime" ? "startTime" : "endTime");
    if (!t.ok()) return t.status();
    *out = *t;
  }
  return state;
}

absl::Status StoreShutdownState(const std::string& path, const ShutdownState& state) {
  return WriteFileAtomically(path, EncodeShutdownState(state), 0644);
}

absl::StatusOr<ShutdownState> LoadShutdownState(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return ShutdownState{};
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<ShutdownState> state = DecodeShutdownState(*text);
  if (!state.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", state.status().message()));
  }
  return state;
}

double ShutdownTimestamp(const std::optional<absl::Time>& t) {
  if (!t.has_value()) return 0;
  return static_cast<double>(absl::ToUnixSeconds(*t));
}

}  // namespace kubelet::nodeshutdown
