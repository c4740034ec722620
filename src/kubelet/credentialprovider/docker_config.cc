// Docker config documents: JSON decoding with Go encoding/json's member matching, and the "auth"
// field's base64 as upstream decodes it.
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/go_json.h"
#include "common/strings.h"
#include "kubelet/credentialprovider/keyring.h"
#include "kubelet/credentialprovider/plugin_internal.h"
#include "nlohmann/json.hpp"

namespace kubelet::credentialprovider {
namespace {

using Json = nlohmann::ordered_json;

// A docker config is a few levels deep; anything close to this is hostile.
constexpr int kMaxDepth = 512;

absl::StatusOr<Json> ParseJson(std::string_view text) {
  if (JsonNestingExceeds(text, kMaxDepth)) {
    return absl::InvalidArgumentError("invalid JSON: nested too deeply");
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // Never the parser's text: it quotes what it last read, which may be a password.
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON at byte ", e.byte));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON (error ", e.id, ")"));
  }
}

// Go's encoding/json matches a member to a struct field ignoring ASCII case.
bool MemberIs(const std::string& key, std::string_view field) {
  return absl::EqualsIgnoreCase(AV(key), AV(field));
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Go's base64.StdEncoding (`padded`) or RawStdEncoding DecodeString: '\r' and '\n' are skipped,
// any other byte outside the alphabet (or misplaced padding) fails; trailing bits may be non-zero.
bool DecodeBase64(std::string_view in, bool padded, std::string* out) {
  std::string data;
  data.reserve(in.size());
  for (char c : in) {
    if (c != '\r' && c != '\n') data.push_back(c);
  }
  std::string_view body = data;
  if (padded) {
    if (body.size() % 4 != 0) return false;
    for (int i = 0; i < 2 && !body.empty() && body.back() == '='; ++i) body.remove_suffix(1);
  }
  if (body.size() % 4 == 1) return false;
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  for (char c : body) {
    const int v = Base64Value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

// The "auth" member: base64("user:pass"), decoded padded when it ends in '=' (ignoring
// surrounding white space) and unpadded otherwise, split at the first ':'.
absl::Status DecodeAuthField(std::string_view field, AuthConfig* out) {
  const bool padded = absl::EndsWith(absl::StripAsciiWhitespace(AV(field)), "=");
  std::string decoded;
  if (!DecodeBase64(field, padded, &decoded)) {
    return absl::InvalidArgumentError("illegal base64 data in \"auth\"");
  }
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        "unable to parse auth field, must be formatted as base64(username:password)");
  }
  out->username = decoded.substr(0, colon);
  out->password = decoded.substr(colon + 1);
  return absl::OkStatus();
}

absl::Status DecodeEntry(const std::string& location, const Json& j, AuthConfig* out) {
  auto entry_error = [&](std::string_view msg) {
    return absl::InvalidArgumentError(absl::StrCat("entry \"", location, "\": ", AV(msg)));
  };
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_object()) {
    return entry_error(absl::StrCat("expected an object, got ", AV(internal::GoJsonKind(j))));
  }
  std::string auth;
  const struct {
    std::string_view name;
    std::string* value;
  } fields[] = {
      {"username", &out->username},
      {"password", &out->password},
      {"email", &out->email},
      {"auth", &auth},
      {"identitytoken", &out->identity_token},
      {"registrytoken", &out->registry_token},
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    for (const auto& f : fields) {
      if (!MemberIs(it.key(), f.name)) continue;
      const Json& v = it.value();
      if (v.is_null()) break;  // null leaves a Go string as it is
      if (!v.is_string()) {
        return entry_error(absl::StrCat("member \"", it.key(), "\": expected a string, got ",
                                        AV(internal::GoJsonKind(v))));
      }
      *f.value = v.get_ref<const std::string&>();
      break;
    }
  }
  if (!auth.empty()) {
    if (absl::Status s = DecodeAuthField(auth, out); !s.ok()) return entry_error(SV(s.message()));
  }
  return absl::OkStatus();
}

absl::Status DecodeEntries(const Json& j, DockerConfig* out) {
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected an object of registry entries, got ", AV(internal::GoJsonKind(j))));
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    AuthConfig auth;
    if (absl::Status s = DecodeEntry(it.key(), it.value(), &auth); !s.ok()) return s;
    out->emplace_back(it.key(), std::move(auth));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DockerConfig> ParseDockerConfigJson(std::string_view json) {
  absl::StatusOr<Json> j = ParseJson(json);
  if (!j.ok()) return j.status();
  DockerConfig cfg;
  if (j->is_null()) return cfg;
  if (!j->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a JSON object, got ", AV(internal::GoJsonKind(*j))));
  }
  for (auto it = j->begin(); it != j->end(); ++it) {
    if (MemberIs(it.key(), "auths")) {
      if (absl::Status s = DecodeEntries(it.value(), &cfg); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("\"auths\": ", s.message()));
      }
    } else if (MemberIs(it.key(), "HttpHeaders")) {
      // Not used for pulls, but Go rejects a document whose headers are not strings.
      const Json& h = it.value();
      bool ok = h.is_null() || h.is_object();
      if (h.is_object()) {
        for (const auto& v : h) ok = ok && (v.is_null() || v.is_string());
      }
      if (!ok) {
        return absl::InvalidArgumentError("\"HttpHeaders\": expected an object of strings");
      }
    }
  }
  return cfg;
}

absl::StatusOr<DockerConfig> ParseDockerCfg(std::string_view json) {
  absl::StatusOr<Json> j = ParseJson(json);
  if (!j.ok()) return j.status();
  DockerConfig cfg;
  if (absl::Status s = DecodeEntries(*j, &cfg); !s.ok()) return s;
  return cfg;
}

}  // namespace kubelet::credentialprovider
