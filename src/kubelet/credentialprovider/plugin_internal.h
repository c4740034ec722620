// Helpers shared by the credential provider plugin files (not part of the component's
// interface): Go's texts for errno values and JSON value kinds, and a bounded file read.
// Pure functions; thread-safe.
#ifndef KUBELET_KUBELET_CREDENTIALPROVIDER_PLUGIN_INTERNAL_H_
#define KUBELET_KUBELET_CREDENTIALPROVIDER_PLUGIN_INTERNAL_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace kubelet::credentialprovider::internal {

using Json = nlohmann::ordered_json;

// Values read from a plugin's output, as a message may show them: themselves only when they look
// like what they should be (an API version "group/v1beta1", a cacheKeyType differing from a valid
// one at most in case), else "(not shown)", so a misplaced secret never reaches a log line.
std::string EchoApiVersion(std::string_view s);
std::string EchoCacheKeyType(std::string_view s);

// How Go's encoding/json names a JSON value in an UnmarshalTypeError: "string", "number",
// "bool", "array", "object" ("null" never fails).
std::string_view GoJsonKind(const Json& j);

// Parses JSON text (depth-bounded). The error never quotes the text: "invalid JSON at byte N",
// or Go's "unexpected end of JSON input" for empty or truncated text.
absl::StatusOr<Json> ParseJson(std::string_view text);

// os.ReadFile of `path`, refusing files over `max_bytes`; errors as Go words them
// ("open <path>: no such file or directory").
absl::StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes);

// The document's apiVersion and kind as Go's json meta factory reads them: member names matched
// ignoring case, the last match winning, null ignored; a non-object document or a non-string
// value is "couldn't get version/kind; json parse error: json: cannot unmarshal ...".
absl::Status InterpretTypeMeta(const Json& j, std::string* api_version, std::string* kind);

// Go's schema.ParseGroupVersion + GroupVersion.String(): "g/v" -> "g/v", "v" -> "v", "/v" ->
// "v", "" -> ""; more than one '/' is `unexpected GroupVersion string: <s>`.
absl::StatusOr<std::string> NormalizeGroupVersion(std::string_view api_version);

}  // namespace kubelet::credentialprovider::internal

#endif  // KUBELET_KUBELET_CREDENTIALPROVIDER_PLUGIN_INTERNAL_H_
