// The CredentialProviderConfig decoder and upstream's validation of it.
#include "kubelet/credentialprovider/plugin_config.h"

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/yaml.h"
#include "common/duration.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/credentialprovider/keyring.h"
#include "kubelet/credentialprovider/plugin_internal.h"

namespace kubelet::credentialprovider {
namespace {

using internal::Json;

constexpr std::string_view kConfigGroup = "kubelet.config.k8s.io";
constexpr std::string_view kConfigKind = "CredentialProviderConfig";
constexpr std::string_view kPluginGroup = "credentialprovider.kubelet.k8s.io";
// A credential provider config is a few kilobytes.
constexpr size_t kMaxConfigBytes = 4 << 20;

// Go's UnmarshalTypeError text for a field of a struct.
absl::Status FieldTypeError(const Json& got, std::string_view go_struct, std::string_view field,
                            std::string_view go_type) {
  return absl::InvalidArgumentError(absl::StrCat(
      "json: cannot unmarshal ", AV(internal::GoJsonKind(got)), " into Go struct field ",
      AV(go_struct), ".", AV(field), " of type ", AV(go_type)));
}

// Reads `j` into a Go string field; null leaves it unchanged.
absl::Status DecodeString(const Json& j, std::string_view go_struct, std::string_view field,
                          std::string* out) {
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_string()) return FieldTypeError(j, go_struct, field, "string");
  *out = j.get<std::string>();
  return absl::OkStatus();
}

// Reads `j` into a Go []string field; null empties it.
absl::Status DecodeStrings(const Json& j, std::string_view go_struct, std::string_view field,
                           std::vector<std::string>* out) {
  out->clear();
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_array()) return FieldTypeError(j, go_struct, field, "[]string");
  for (const Json& item : j) {
    std::string s;
    if (absl::Status st = DecodeString(item, go_struct, field, &s); !st.ok()) return st;
    out->push_back(std::move(s));
  }
  return absl::OkStatus();
}

// A *metav1.Duration: null is absent, otherwise a Go duration string.
absl::Status DecodeDuration(const Json& j, std::optional<absl::Duration>* out) {
  if (j.is_null()) {
    out->reset();
    return absl::OkStatus();
  }
  if (!j.is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "json: cannot unmarshal ", AV(internal::GoJsonKind(j)), " into Go value of type string"));
  }
  absl::StatusOr<absl::Duration> d = ParseGoDuration(j.get_ref<const std::string&>());
  if (!d.ok()) return d.status();
  *out = *d;
  return absl::OkStatus();
}

absl::Status DecodeEnvVar(const Json& j, std::string_view pkg, ExecEnvVar* out) {
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_object()) {
    return FieldTypeError(j, "CredentialProvider", "providers.env",
                          absl::StrCat(AV(pkg), ".ExecEnvVar"));
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    absl::Status st;
    if (it.key() == "name") {
      st = DecodeString(it.value(), "ExecEnvVar", "providers.env.name", &out->name);
    } else if (it.key() == "value") {
      st = DecodeString(it.value(), "ExecEnvVar", "providers.env.value", &out->value);
    }
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status DecodeProvider(const Json& j, std::string_view pkg, CredentialProvider* out) {
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_object()) {
    return FieldTypeError(j, "CredentialProviderConfig", "providers",
                          absl::StrCat(AV(pkg), ".CredentialProvider"));
  }
  constexpr std::string_view kStruct = "CredentialProvider";
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    absl::Status st;
    if (key == "name") {
      st = DecodeString(v, kStruct, "providers.name", &out->name);
    } else if (key == "matchImages") {
      st = DecodeStrings(v, kStruct, "providers.matchImages", &out->match_images);
    } else if (key == "defaultCacheDuration") {
      st = DecodeDuration(v, &out->default_cache_duration);
    } else if (key == "apiVersion") {
      st = DecodeString(v, kStruct, "providers.apiVersion", &out->api_version);
    } else if (key == "args") {
      st = DecodeStrings(v, kStruct, "providers.args", &out->args);
    } else if (key == "env") {
      out->env.clear();
      if (v.is_null()) continue;
      if (!v.is_array()) {
        st =
            FieldTypeError(v, kStruct, "providers.env", absl::StrCat("[]", AV(pkg), ".ExecEnvVar"));
      } else {
        for (const Json& item : v) {
          ExecEnvVar e;
          if (st = DecodeEnvVar(item, pkg, &e); !st.ok()) break;
          out->env.push_back(std::move(e));
        }
      }
    }
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

// Whether upstream's scheme knows (group/version, kind) at all; those other than
// CredentialProviderConfig decode there and are then refused as the wrong kind.
bool KindRegistered(std::string_view group, std::string_view version, std::string_view kind) {
  if (group == kConfigGroup) {
    if (kind == kConfigKind)
      return version == "v1" || version == "v1beta1" || version == "v1alpha1";
    return version == "v1beta1" &&
           (kind == "KubeletConfiguration" || kind == "SerializedNodeConfigSource");
  }
  if (group == kPluginGroup) {
    return (version == "v1" || version == "v1beta1" || version == "v1alpha1") &&
           (kind == "CredentialProviderRequest" || kind == "CredentialProviderResponse");
  }
  return false;
}

// Go's field.Error texts.
std::string Required(std::string_view path, std::string_view detail) {
  if (detail.empty()) return absl::StrCat(AV(path), ": Required value");
  return absl::StrCat(AV(path), ": Required value: ", AV(detail));
}

std::string Invalid(std::string_view path, std::string_view value_text, std::string_view detail) {
  return absl::StrCat(AV(path), ": Invalid value: ", AV(value_text), ": ", AV(detail));
}

}  // namespace

absl::StatusOr<CredentialProviderConfig> DecodeCredentialProviderConfig(std::string_view data) {
  const size_t first = data.find_first_not_of(" \t\r\n");
  const bool is_json = first != std::string_view::npos && data[first] == '{';
  std::string json_text;
  if (is_json) {
    json_text = std::string(data);
  } else {
    absl::StatusOr<api::YamlJson> converted = api::YamlToJson(data);
    if (!converted.ok()) return converted.status();
    json_text = std::move(converted->json);
  }
  absl::StatusOr<Json> j = internal::ParseJson(json_text);
  if (!j.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("couldn't get version/kind; json parse error: ", j.status().message()));
  }
  std::string api_version, kind;
  if (absl::Status st = internal::InterpretTypeMeta(*j, &api_version, &kind); !st.ok()) {
    return st;
  }
  absl::StatusOr<std::string> gv = internal::NormalizeGroupVersion(api_version);
  if (!gv.ok()) return gv.status();
  // The document itself is left out of these messages (upstream quotes it whole).
  if (kind.empty()) return absl::InvalidArgumentError("Object 'Kind' is missing in the document");
  if (gv->empty()) {
    return absl::InvalidArgumentError("Object 'apiVersion' is missing in the document");
  }
  const size_t slash = gv->find('/');
  const std::string group = slash == std::string::npos ? std::string() : gv->substr(0, slash);
  const std::string version = slash == std::string::npos ? *gv : gv->substr(slash + 1);
  if (!KindRegistered(group, version, kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat("no kind ", log::Quote(kind), " is registered for version ", log::Quote(*gv)));
  }
  if (kind != kConfigKind) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to decode ", log::Quote(kind), " (wrong Kind)"));
  }

  CredentialProviderConfig config;
  if (!j->is_object()) return config;
  for (auto it = j->begin(); it != j->end(); ++it) {
    if (it.key() != "providers") continue;
    const Json& v = it.value();
    config.providers.clear();
    if (v.is_null()) continue;
    if (!v.is_array()) {
      return FieldTypeError(v, "CredentialProviderConfig", "providers",
                            absl::StrCat("[]", version, ".CredentialProvider"));
    }
    for (const Json& item : v) {
      CredentialProvider p;
      if (absl::Status st = DecodeProvider(item, version, &p); !st.ok()) return st;
      config.providers.push_back(std::move(p));
    }
  }
  return config;
}

absl::StatusOr<CredentialProviderConfig> ReadCredentialProviderConfigFile(const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("credential provider config path is empty");
  }
  absl::StatusOr<std::string> data = internal::ReadFileBounded(path, kMaxConfigBytes);
  if (!data.ok()) {
    return absl::Status(data.status().code(),
                        absl::StrCat("unable to read external registry credential provider "
                                     "configuration from ",
                                     log::Quote(path), ": ", data.status().message()));
  }
  absl::StatusOr<CredentialProviderConfig> config = DecodeCredentialProviderConfig(*data);
  if (!config.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("error decoding config ", path, ": ", config.status().message()));
  }
  return config;
}

std::vector<std::string> ValidateCredentialProviderConfig(const CredentialProviderConfig& config) {
  std::vector<std::string> errs;
  if (config.providers.empty()) {
    errs.push_back(Required("providers", "at least 1 item in plugins is required"));
  }
  std::set<std::string> seen;
  for (const CredentialProvider& p : config.providers) {
    const std::string quoted_name = log::Quote(p.name);
    if (p.name.find('/') != std::string::npos) {
      errs.push_back(Invalid("providers.name", quoted_name, "provider name cannot contain '/'"));
    }
    if (p.name.find(' ') != std::string::npos) {
      errs.push_back(Invalid("providers.name", quoted_name, "provider name cannot contain spaces"));
    }
    if (p.name == ".") {
      errs.push_back(Invalid("providers.name", quoted_name, "provider name cannot be '.'"));
    }
    if (p.name == "..") {
      errs.push_back(Invalid("providers.name", quoted_name, "provider name cannot be '..'"));
    }
    if (!seen.insert(p.name).second) {
      errs.push_back(absl::StrCat("providers.name: Duplicate value: ", quoted_name));
    }
    if (p.api_version.empty()) {
      errs.push_back(Required("providers.apiVersion", "apiVersion is required"));
    } else {
      bool known = false;
      std::vector<std::string> quoted;
      for (std::string_view v : kCredentialProviderAPIVersions) {
        known = known || v == p.api_version;
        quoted.push_back(log::Quote(v));
      }
      if (!known) {
        errs.push_back(
            absl::StrCat("providers.apiVersion: Unsupported value: ", log::Quote(p.api_version),
                         ": supported values: ", absl::StrJoin(quoted, ", ")));
      }
    }
    if (p.match_images.empty()) {
      errs.push_back(
          Required("providers.matchImages", "at least 1 item in matchImages is required"));
    }
    for (const std::string& m : p.match_images) {
      if (absl::Status st = CheckSchemelessURL(m); !st.ok()) {
        errs.push_back(Invalid("providers.matchImages", log::Quote(m),
                               absl::StrCat("match image is invalid: ", st.message())));
      }
    }
    if (!p.default_cache_duration.has_value()) {
      errs.push_back(
          Required("providers.defaultCacheDuration", "defaultCacheDuration is required"));
    } else if (*p.default_cache_duration < absl::ZeroDuration()) {
      errs.push_back(Invalid("providers.defaultCacheDuration",
                             FormatGoDuration(*p.default_cache_duration),
                             "defaultCacheDuration must be greater than or equal to 0"));
    }
  }
  return errs;
}

absl::Status ValidationStatus(const std::vector<std::string>& errors) {
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (const std::string& e : errors) {
    if (seen.insert(e).second) unique.push_back(e);
  }
  if (unique.empty()) return absl::OkStatus();
  std::string agg =
      unique.size() == 1 ? unique[0] : absl::StrCat("[", absl::StrJoin(unique, ", "), "]");
  return absl::InvalidArgumentError(
      absl::StrCat("failed to validate credential provider config: ", agg));
}

}  // namespace kubelet::credentialprovider
