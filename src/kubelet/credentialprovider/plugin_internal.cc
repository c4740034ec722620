#include "kubelet/credentialprovider/plugin_internal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/go_compat.h"
#include "common/json_nesting.h"
#include "common/strings.h"

namespace kubelet::credentialprovider::internal {
namespace {

// A config or a plugin response is a few levels deep; anything close to this is hostile.
constexpr int kMaxDepth = 512;

}  // namespace

std::string EchoApiVersion(std::string_view s) {
  constexpr std::string_view kHidden = "(not shown)";
  std::string_view version = s;
  if (const size_t slash = s.find('/'); slash != std::string_view::npos) {
    const std::string_view group = s.substr(0, slash);
    if (group.empty() || group.size() > 253 || !std::all_of(group.begin(), group.end(), [](char c) {
          return absl::ascii_islower(static_cast<unsigned char>(c)) ||
                 absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-';
        })) {
      return std::string(kHidden);
    }
    version = s.substr(slash + 1);
  }
  // v<N>, v<N>alpha<M>, v<N>beta<M>
  auto digits = [](std::string_view* rest) {
    size_t n = 0;
    while (n < rest->size() && absl::ascii_isdigit(static_cast<unsigned char>((*rest)[n]))) ++n;
    rest->remove_prefix(n);
    return n > 0;
  };
  std::string_view rest = version;
  if (rest.empty() || rest[0] != 'v') return std::string(kHidden);
  rest.remove_prefix(1);
  if (!digits(&rest)) return std::string(kHidden);
  if (!rest.empty()) {
    if (absl::StartsWith(AV(rest), "alpha")) {
      rest.remove_prefix(5);
    } else if (absl::StartsWith(AV(rest), "beta")) {
      rest.remove_prefix(4);
    } else {
      return std::string(kHidden);
    }
    if (!digits(&rest) || !rest.empty()) return std::string(kHidden);
  }
  return std::string(s);
}

std::string EchoCacheKeyType(std::string_view s) {
  for (std::string_view valid : {"", "Image", "Registry", "Global"}) {
    if (absl::EqualsIgnoreCase(AV(s), AV(valid))) return std::string(s);
  }
  return "(not shown)";
}

std::string_view GoJsonKind(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::null:
      return "null";
    default:
      return "number";
  }
}

absl::StatusOr<Json> ParseJson(std::string_view text) {
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; })) {
    return absl::InvalidArgumentError("unexpected end of JSON input");
  }
  if (JsonNestingExceeds(text, kMaxDepth)) {
    return absl::InvalidArgumentError("invalid JSON: nested too deeply");
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // Never the parser's own text: it quotes what it read, which may be a secret.
    if (e.byte >= text.size()) return absl::InvalidArgumentError("unexpected end of JSON input");
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON at byte ", e.byte));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON (error ", e.id, ")"));
  }
}

absl::StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string msg = absl::StrCat("open ", path, ": ", GoErrnoText(err));
    return err == ENOENT ? absl::NotFoundError(msg) : absl::InvalidArgumentError(msg);
  }
  std::string out;
  char buf[16384];
  absl::Status status;
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      status = absl::InvalidArgumentError(absl::StrCat("read ", path, ": ", GoErrnoText(errno)));
      break;
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      status = absl::InvalidArgumentError(
          absl::StrCat("read ", path, ": file is larger than ", max_bytes, " bytes"));
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (!status.ok()) return status;
  return out;
}

// The type's apiVersion/kind as Go's json meta factory reads them: member names matched ignoring
// case, the last match winning.
absl::Status InterpretTypeMeta(const Json& j, std::string* api_version, std::string* kind) {
  auto parse_error = [](std::string_view detail) {
    return absl::InvalidArgumentError(
        absl::StrCat("couldn't get version/kind; json parse error: ", AV(detail)));
  };
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_object()) {
    return parse_error(absl::StrCat(
        "json: cannot unmarshal ", AV(internal::GoJsonKind(j)),
        " into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
        "Kind string \"json:\\\"kind,omitempty\\\"\" }"));
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string* target = nullptr;
    std::string_view field;
    if (absl::EqualsIgnoreCase(AV(it.key()), "apiVersion")) {
      target = api_version;
      field = "apiVersion";
    } else if (absl::EqualsIgnoreCase(AV(it.key()), "kind")) {
      target = kind;
      field = "kind";
    } else {
      continue;
    }
    if (it.value().is_null()) continue;
    if (!it.value().is_string()) {
      return parse_error(absl::StrCat("json: cannot unmarshal ",
                                      AV(internal::GoJsonKind(it.value())),
                                      " into Go struct field .", AV(field), " of type string"));
    }
    *target = it.value().get<std::string>();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> NormalizeGroupVersion(std::string_view api_version) {
  if (api_version.empty() || api_version == "/") return std::string();
  const size_t slashes = std::count(api_version.begin(), api_version.end(), '/');
  if (slashes == 0) return std::string(api_version);
  if (slashes > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected GroupVersion string: ", AV(api_version)));
  }
  const size_t slash = api_version.find('/');
  if (slash == 0) return std::string(api_version.substr(1));
  return std::string(api_version);
}

}  // namespace kubelet::credentialprovider::internal
