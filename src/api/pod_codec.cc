#include "api/pod_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/go_json.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

namespace kubelet::api {
namespace {

using Json = nlohmann::json;
using Path = std::string;

constexpr int kMaxDepth = 1000;             // nesting levels accepted in a document
constexpr size_t kMaxValueInMessage = 200;  // chars of a bad value quoted in an error
constexpr char kScheme[] = "pkg/api/legacyscheme/scheme.go:30";

// VolumeSource members kept opaque, in Go declaration order interleaved with the typed ones.
constexpr const char* kVolumeSourceOrder[] = {
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
};

bool IsTypedVolumeSource(std::string_view k) {
  return k == "hostPath" || k == "emptyDir" || k == "secret" || k == "persistentVolumeClaim" ||
         k == "downwardAPI" || k == "configMap" || k == "projected";
}

bool IsOpaqueVolumeSource(std::string_view k) {
  for (const char* name : kVolumeSourceOrder) {
    if (k == name) return !IsTypedVolumeSource(k);
  }
  return false;
}

std::string Child(const Path& p, std::string_view k) {
  return p.empty() ? std::string(k) : absl::StrCat(p, ".", AV(k));
}
std::string Index(const Path& p, size_t i) { return absl::StrCat(p, "[", i, "]"); }
std::string Key(const Path& p, std::string_view k) { return absl::StrCat(p, "[", AV(k), "]"); }

// Streaming JSON writer (compact, no trailing newline).
class Writer {
 public:
  void BeginObject() {
    Prefix();
    out_.push_back('{');
    first_.push_back(true);
  }
  void EndObject() {
    first_.pop_back();
    out_.push_back('}');
  }
  void BeginArray() {
    Prefix();
    out_.push_back('[');
    first_.push_back(true);
  }
  void EndArray() {
    first_.pop_back();
    out_.push_back(']');
  }
  void Key(std::string_view k) {
    Comma();
    AppendGoString(&out_, k);
    out_.push_back(':');
    after_key_ = true;
  }
  void String(std::string_view s) {
    Prefix();
    AppendGoString(&out_, s);
  }
  void Int(int64_t i) {
    Prefix();
    absl::StrAppend(&out_, i);
  }
  void Bool(bool b) {
    Prefix();
    out_.append(b ? "true" : "false");
  }
  void Null() {
    Prefix();
    out_.append("null");
  }
  void Raw(std::string_view json) {
    Prefix();
    out_.append(json);
  }

  // Always-present members.
  void Val(const char* k, const std::string& v) {
    Key(k);
    String(v);
  }
  void Val(const char* k, const char* v) {
    Key(k);
    String(v);
  }
  void Val(const char* k, int32_t v) {
    Key(k);
    Int(v);
  }
  void Val(const char* k, int64_t v) {
    Key(k);
    Int(v);
  }
  void Val(const char* k, bool v) {
    Key(k);
    Bool(v);
  }
  // omitempty members.
  void PutS(const char* k, const std::string& v) {
    if (!v.empty()) Val(k, v);
  }
  void PutI(const char* k, int64_t v) {
    if (v != 0) Val(k, v);
  }
  void PutB(const char* k, bool v) {
    if (v) Val(k, v);
  }
  void PutStrs(const char* k, const std::vector<std::string>& v) {
    if (v.empty()) return;
    Key(k);
    BeginArray();
    for (const auto& s : v) String(s);
    EndArray();
  }
  void PutMap(const char* k, const StringMap& m) {
    if (m.empty()) return;
    Key(k);
    BeginObject();
    for (const auto& [mk, mv] : m) Val(mk.c_str(), mv);
    EndObject();
  }

  std::string Take() { return std::move(out_); }

 private:
  void Comma() {
    if (first_.empty()) return;
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
  }
  void Prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    Comma();
  }

  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

void WriteJson(Writer& w, const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      w.BeginObject();
      for (auto it = j.begin(); it != j.end(); ++it) {
        w.Key(it.key());
        WriteJson(w, it.value());
      }
      w.EndObject();
      break;
    case Json::value_t::array:
      w.BeginArray();
      for (const auto& e : j) WriteJson(w, e);
      w.EndArray();
      break;
    case Json::value_t::string:
      w.String(j.get_ref<const std::string&>());
      break;
    case Json::value_t::boolean:
      w.Bool(j.get<bool>());
      break;
    case Json::value_t::number_integer:
      w.Int(j.get<int64_t>());
      break;
    case Json::value_t::number_unsigned:
      w.Raw(std::to_string(j.get<uint64_t>()));
      break;
    case Json::value_t::number_float:
      w.Raw(j.dump());
      break;
    default:
      w.Null();
  }
}

// Compact JSON as Go's json.Marshal would write this generic value (object keys sorted, since
// nlohmann::json keeps objects in a std::map, like Go's map[string]interface{}).
std::string Dump(const Json& j) {
  Writer w;
  WriteJson(w, j);
  return w.Take();
}

// ---------------------------------------------------------------------------------------------
// YAML -> JSON with go-yaml v2 (YAML 1.1) scalar resolution, as sigs.k8s.io/yaml does.

// strconv.ParseInt(s, 0, 64) (underscores already removed by the caller).
bool ParseGoInt(std::string_view s, bool allow_unsigned_range, int64_t* i64, uint64_t* u64,
                bool* is_unsigned) {
  if (s.empty()) return false;
  bool neg = false;
  size_t pos = 0;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    pos = 1;
  }
  int base = 10;
  if (s.size() - pos >= 2 && s[pos] == '0') {
    const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s[pos + 1])));
    if (p == 'x') {
      base = 16;
      pos += 2;
    } else if (p == 'o') {
      base = 8;
      pos += 2;
    } else if (p == 'b') {
      base = 2;
      pos += 2;
    } else {
      base = 8;
      pos += 1;
    }
  }
  if (pos >= s.size()) return false;
  unsigned __int128 v = 0;
  for (; pos < s.size(); ++pos) {
    const char c = s[pos];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    if (d >= base) return false;
    v = v * base + d;
    if (v > static_cast<unsigned __int128>(UINT64_MAX)) return false;
  }
  *is_unsigned = false;
  if (neg) {
    if (v > static_cast<unsigned __int128>(INT64_MAX) + 1) return false;
    *i64 = static_cast<int64_t>(-static_cast<__int128>(v));
    return true;
  }
  if (v <= static_cast<unsigned __int128>(INT64_MAX)) {
    *i64 = static_cast<int64_t>(v);
    return true;
  }
  if (!allow_unsigned_range) return false;
  *u64 = static_cast<uint64_t>(v);
  *is_unsigned = true;
  return true;
}

// go-yaml v2's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlStyleFloat(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  auto digits = [&]() {
    size_t start = i;
    while (i < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i - start;
  };
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// A float64 as Go's json.Marshal would write it, re-read as JSON: integral values below 1e21 are
// written without exponent, so they read back as integers.
Json FloatToJson(double f) {
  if (f == std::trunc(f) && std::fabs(f) < 9.2e18) return Json(static_cast<int64_t>(f));
  return Json(f);
}

absl::StatusOr<Json> ResolvePlainScalar(const std::string& s) {
  static const char* const kNull[] = {"", "~", "null", "Null", "NULL"};
  static const char* const kTrue[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                      "True", "TRUE", "on",  "On",  "ON"};
  static const char* const kFalse[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                       "False", "FALSE", "off", "Off", "OFF"};
  static const char* const kSpecialFloat[] = {".nan",  ".NaN",  ".NAN",  ".inf",  ".Inf",  ".INF",
                                              "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"};
  for (const char* n : kNull) {
    if (s == n) return Json(nullptr);
  }
  for (const char* t : kTrue) {
    if (s == t) return Json(true);
  }
  for (const char* f : kFalse) {
    if (s == f) return Json(false);
  }
  for (const char* f : kSpecialFloat) {
    if (s == f) {
      return absl::InvalidArgumentError(
          absl::StrCat("error converting YAML to JSON: json: unsupported value: ", s));
    }
  }
  const char c0 = s[0];
  if (!(absl::ascii_isdigit(static_cast<unsigned char>(c0)) || c0 == '+' || c0 == '-' ||
        c0 == '.')) {
    return Json(s);
  }
  std::string plain;
  plain.reserve(s.size());
  for (char c : s) {
    if (c != '_') plain.push_back(c);
  }
  int64_t i64 = 0;
  uint64_t u64 = 0;
  bool is_unsigned = false;
  if (ParseGoInt(plain, true, &i64, &u64, &is_unsigned)) {
    return is_unsigned ? Json(u64) : Json(i64);
  }
  if (IsYamlStyleFloat(plain)) {
    return FloatToJson(std::strtod(plain.c_str(), nullptr));
  }
  return Json(s);
}

// Every YAML node but an alias costs at least one byte of input, so a node budget proportional
// to the input size admits every real document and stops alias ("billion laughs") expansion.
class YamlConverter {
 public:
  explicit YamlConverter(size_t input_size) : max_nodes_(input_size + 1024) {}

  absl::StatusOr<Json> Convert(const YAML::Node& n, int depth) {
    if (depth > kMaxDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat("error converting YAML to JSON: exceeded max depth of ", kMaxDepth));
    }
    if (++nodes_ > max_nodes_) {
      return absl::InvalidArgumentError(
          "error converting YAML to JSON: document too large (too many nodes or aliases)");
    }
    switch (n.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return Json(nullptr);
      case YAML::NodeType::Scalar:
        return Scalar(n);
      case YAML::NodeType::Sequence: {
        Json arr = Json::array();
        for (const auto& e : n) {
          auto v = Convert(e, depth + 1);
          if (!v.ok()) return v.status();
          arr.push_back(std::move(*v));
        }
        return arr;
      }
      case YAML::NodeType::Map: {
        Json obj = Json::object();
        for (const auto& kv : n) {
          auto key = KeyString(kv.first);
          if (!key.ok()) return key.status();
          auto v = Convert(kv.second, depth + 1);
          if (!v.ok()) return v.status();
          obj[*key] = std::move(*v);
        }
        return obj;
      }
    }
    return Json(nullptr);
  }

 private:
  static absl::StatusOr<Json> Scalar(const YAML::Node& n) {
    const std::string& tag = n.Tag();
    const std::string& s = n.Scalar();
    if (tag == "!" || tag == "tag:yaml.org,2002:str" || tag == "tag:yaml.org,2002:binary") {
      return Json(s);
    }
    if (tag == "?" || tag.empty()) return ResolvePlainScalar(s);
    // Explicit standard tags: resolve, then check the kind matches.
    auto v = ResolvePlainScalar(s);
    if (!v.ok()) return v;
    auto mismatch = [&]() {
      return absl::InvalidArgumentError(
          absl::StrCat("error converting YAML to JSON: yaml: cannot decode ", s, " as a ", tag));
    };
    if (tag == "tag:yaml.org,2002:int" && !v->is_number_integer()) return mismatch();
    if (tag == "tag:yaml.org,2002:bool" && !v->is_boolean()) return mismatch();
    if (tag == "tag:yaml.org,2002:null" && !v->is_null()) return mismatch();
    if (tag == "tag:yaml.org,2002:float" && !v->is_number()) return mismatch();
    return v;
  }

  static absl::StatusOr<std::string> KeyString(const YAML::Node& k) {
    if (k.Type() == YAML::NodeType::Null) {
      return absl::InvalidArgumentError(
          "error converting YAML to JSON: unsupported map key of type: <nil>");
    }
    if (k.Type() != YAML::NodeType::Scalar) {
      return absl::InvalidArgumentError(
          "error converting YAML to JSON: unsupported map key (not a scalar)");
    }
    if (k.Tag() != "?") return k.Scalar();
    auto v = ResolvePlainScalar(k.Scalar());
    if (!v.ok()) return k.Scalar();
    if (v->is_boolean()) return std::string(v->get<bool>() ? "true" : "false");
    if (v->is_number_integer()) return Dump(*v);
    if (v->is_null()) {
      return absl::InvalidArgumentError(
          "error converting YAML to JSON: unsupported map key of type: <nil>");
    }
    return k.Scalar();
  }

  const size_t max_nodes_;
  size_t nodes_ = 0;
};

// Parses YAML or JSON text into a JSON document.
absl::StatusOr<Json> ParseDocument(std::string_view data) {
  size_t first = 0;
  while (first < data.size() && absl::ascii_isspace(static_cast<unsigned char>(data[first]))) {
    ++first;
  }
  const bool looks_json = first < data.size() && (data[first] == '{' || data[first] == '[');
  if (looks_json || first == data.size()) {
    if (JsonNestingExceeds(data, kMaxDepth)) {
      return absl::InvalidArgumentError(
          absl::StrCat("error converting YAML to JSON: exceeded max depth of ", kMaxDepth));
    }
  }
  if (looks_json) {
    try {
      return Json::parse(data.begin(), data.end());
    } catch (const std::exception&) {
      // Not strict JSON; YAML flow syntax is a superset, fall through.
    }
  }
  try {
    YAML::Node root = YAML::Load(std::string(data));
    YamlConverter conv(data.size());
    return conv.Convert(root, 0);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("error converting YAML to JSON: yaml: line ", e.mark.line + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("error converting YAML to JSON: ", e.what()));
  }
}

// ---------------------------------------------------------------------------------------------
// Typed decoding.

std::string Describe(const Json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  std::string s = Dump(v);
  if (s.size() > kMaxValueInMessage) s = s.substr(0, kMaxValueInMessage) + "...";
  return s;
}

absl::Status TypeError(const Path& p, std::string_view want, const Json& v) {
  return absl::InvalidArgumentError(
      absl::StrCat(p, ": expected ", AV(want), ", got ", Describe(v)));
}

#define KRETURN_IF_ERROR(expr) \
  do {                         \
    absl::Status _st = (expr); \
    if (!_st.ok()) return _st; \
  } while (0)

class Decoder {
 public:
  explicit Decoder(std::vector<std::string>* unknown) : unknown_(unknown) {}

  absl::Status Dec(const Json& v, const Path& p, std::string* o);
  absl::Status Dec(const Json& v, const Path& p, bool* o);
  absl::Status Dec(const Json& v, const Path& p, int32_t* o);
  absl::Status Dec(const Json& v, const Path& p, int64_t* o);
  absl::Status Dec(const Json& v, const Path& p, Quantity* o);
  absl::Status Dec(const Json& v, const Path& p, IntOrString* o);
  absl::Status Dec(const Json& v, const Path& p, Time* o);
  absl::Status Dec(const Json& v, const Path& p, RawJson* o);
  absl::Status Dec(const Json& v, const Path& p, StringMap* o);
  absl::Status Dec(const Json& v, const Path& p, ResourceList* o);

  template <typename T>
  absl::Status Dec(const Json& v, const Path& p, std::optional<T>* o) {
    if (v.is_null()) return absl::OkStatus();
    T tmp{};
    KRETURN_IF_ERROR(Dec(v, p, &tmp));
    *o = std::move(tmp);
    return absl::OkStatus();
  }

  template <typename T>
  absl::Status Dec(const Json& v, const Path& p, std::vector<T>* o) {
    if (v.is_null()) return absl::OkStatus();
    if (!v.is_array()) return TypeError(p, "array", v);
    o->clear();
    o->resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i].is_null()) continue;
      KRETURN_IF_ERROR(Dec(v[i], Index(p, i), &(*o)[i]));
    }
    return absl::OkStatus();
  }

  // Iterates an object's members; `f(key, value, path)` returns nullopt for unknown keys.
  template <typename F>
  absl::Status Fields(const Json& v, const Path& p, F&& f) {
    if (!v.is_object()) return TypeError(p, "object", v);
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& k = it.key();
      std::optional<absl::Status> st = f(k, it.value(), Child(p, k));
      if (!st.has_value()) {
        if (unknown_ != nullptr) unknown_->push_back(Child(p, k));
        continue;
      }
      if (!st->ok()) return *st;
    }
    return absl::OkStatus();
  }

  absl::Status Dec(const Json& v, const Path& p, OwnerReference* o);
  absl::Status Dec(const Json& v, const Path& p, ObjectMeta* o);
  absl::Status Dec(const Json& v, const Path& p, LocalObjectReference* o);
  absl::Status Dec(const Json& v, const Path& p, HostPathVolumeSource* o);
  absl::Status Dec(const Json& v, const Path& p, EmptyDirVolumeSource* o);
  absl::Status Dec(const Json& v, const Path& p, KeyToPath* o);
  absl::Status Dec(const Json& v, const Path& p, ObjectFieldSelector* o);
  absl::Status Dec(const Json& v, const Path& p, ResourceFieldSelector* o);
  absl::Status Dec(const Json& v, const Path& p, DownwardAPIVolumeFile* o);
  absl::Status Dec(const Json& v, const Path& p, DownwardAPIVolumeSource* o);
  absl::Status Dec(const Json& v, const Path& p, ConfigMapVolumeSource* o);
  absl::Status Dec(const Json& v, const Path& p, SecretVolumeSource* o);
  absl::Status Dec(const Json& v, const Path& p, PersistentVolumeClaimVolumeSource* o);
  absl::Status Dec(const Json& v, const Path& p, SecretProjection* o);
  absl::Status Dec(const Json& v, const Path& p, ConfigMapProjection* o);
  absl::Status Dec(const Json& v, const Path& p, DownwardAPIProjection* o);
  absl::Status Dec(const Json& v, const Path& p, ServiceAccountTokenProjection* o);
  absl::Status Dec(const Json& v, const Path& p, VolumeProjection* o);
  absl::Status Dec(const Json& v, const Path& p, ProjectedVolumeSource* o);
  absl::Status Dec(const Json& v, const Path& p, Volume* o);
  absl::Status Dec(const Json& v, const Path& p, ContainerPort* o);
  absl::Status Dec(const Json& v, const Path& p, ConfigMapEnvSource* o);
  absl::Status Dec(const Json& v, const Path& p, SecretEnvSource* o);
  absl::Status Dec(const Json& v, const Path& p, EnvFromSource* o);
  absl::Status Dec(const Json& v, const Path& p, ConfigMapKeySelector* o);
  absl::Status Dec(const Json& v, const Path& p, SecretKeySelector* o);
  absl::Status Dec(const Json& v, const Path& p, EnvVarSource* o);
  absl::Status Dec(const Json& v, const Path& p, EnvVar* o);
  absl::Status Dec(const Json& v, const Path& p, ResourceClaim* o);
  absl::Status Dec(const Json& v, const Path& p, ResourceRequirements* o);
  absl::Status Dec(const Json& v, const Path& p, ContainerResizePolicy* o);
  absl::Status Dec(const Json& v, const Path& p, VolumeMount* o);
  absl::Status Dec(const Json& v, const Path& p, VolumeDevice* o);
  absl::Status Dec(const Json& v, const Path& p, ExecAction* o);
  absl::Status Dec(const Json& v, const Path& p, HTTPHeader* o);
  absl::Status Dec(const Json& v, const Path& p, HTTPGetAction* o);
  absl::Status Dec(const Json& v, const Path& p, TCPSocketAction* o);
  absl::Status Dec(const Json& v, const Path& p, GRPCAction* o);
  absl::Status Dec(const Json& v, const Path& p, Probe* o);
  absl::Status Dec(const Json& v, const Path& p, LifecycleHandler* o);
  absl::Status Dec(const Json& v, const Path& p, Lifecycle* o);
  absl::Status Dec(const Json& v, const Path& p, Capabilities* o);
  absl::Status Dec(const Json& v, const Path& p, SELinuxOptions* o);
  absl::Status Dec(const Json& v, const Path& p, SeccompProfile* o);
  absl::Status Dec(const Json& v, const Path& p, SecurityContext* o);
  absl::Status Dec(const Json& v, const Path& p, Container* o);
  absl::Status Dec(const Json& v, const Path& p, EphemeralContainer* o);
  absl::Status Dec(const Json& v, const Path& p, Sysctl* o);
  absl::Status Dec(const Json& v, const Path& p, PodSecurityContext* o);
  absl::Status Dec(const Json& v, const Path& p, Toleration* o);
  absl::Status Dec(const Json& v, const Path& p, HostAlias* o);
  absl::Status Dec(const Json& v, const Path& p, PodDNSConfigOption* o);
  absl::Status Dec(const Json& v, const Path& p, PodDNSConfig* o);
  absl::Status Dec(const Json& v, const Path& p, PodReadinessGate* o);
  absl::Status Dec(const Json& v, const Path& p, PodOS* o);
  absl::Status Dec(const Json& v, const Path& p, PodSchedulingGate* o);
  absl::Status Dec(const Json& v, const Path& p, ClaimSource* o);
  absl::Status Dec(const Json& v, const Path& p, PodResourceClaim* o);
  absl::Status Dec(const Json& v, const Path& p, PodSpec* o);
  absl::Status Dec(const Json& v, const Path& p, PodCondition* o);
  absl::Status Dec(const Json& v, const Path& p, PodIP* o);
  absl::Status Dec(const Json& v, const Path& p, HostIP* o);
  absl::Status Dec(const Json& v, const Path& p, ContainerStateWaiting* o);
  absl::Status Dec(const Json& v, const Path& p, ContainerStateRunning* o);
  absl::Status Dec(const Json& v, const Path& p, ContainerStateTerminated* o);
  absl::Status Dec(const Json& v, const Path& p, ContainerState* o);
  absl::Status Dec(const Json& v, const Path& p, ContainerStatus* o);
  absl::Status Dec(const Json& v, const Path& p, PodStatus* o);
  absl::Status Dec(const Json& v, const Path& p, Pod* o);

 private:
  // Decodes the Container fields of `k` (shared by Container and EphemeralContainer).
  std::optional<absl::Status> ContainerField(const std::string& k, const Json& f, const Path& fp,
                                             Container* o);
  std::optional<absl::Status> ProbeHandlerField(const std::string& k, const Json& f, const Path& fp,
                                                Probe* o);

  std::vector<std::string>* unknown_;
};

using Field = std::optional<absl::Status>;

absl::Status Decoder::Dec(const Json& v, const Path& p, std::string* o) {
  if (v.is_null()) return absl::OkStatus();
  if (!v.is_string()) return TypeError(p, "string", v);
  *o = v.get<std::string>();
  return absl::OkStatus();
}

absl::Status Decoder::Dec(const Json& v, const Path& p, bool* o) {
  if (v.is_null()) return absl::OkStatus();
  if (!v.is_boolean()) return TypeError(p, "boolean", v);
  *o = v.get<bool>();
  return absl::OkStatus();
}

absl::Status DecodeInt(const Json& v, const Path& p, int64_t lo, int64_t hi, const char* type,
                       int64_t* o) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) {
      return absl::InvalidArgumentError(absl::StrCat(p, ": value ", u, " out of range for ", type));
    }
    *o = static_cast<int64_t>(u);
    return absl::OkStatus();
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < lo || i > hi) {
      return absl::InvalidArgumentError(absl::StrCat(p, ": value ", i, " out of range for ", type));
    }
    *o = i;
    return absl::OkStatus();
  }
  return TypeError(p, "integer", v);
}

absl::Status Decoder::Dec(const Json& v, const Path& p, int32_t* o) {
  if (v.is_null()) return absl::OkStatus();
  int64_t tmp = 0;
  KRETURN_IF_ERROR(DecodeInt(v, p, INT32_MIN, INT32_MAX, "int32", &tmp));
  *o = static_cast<int32_t>(tmp);
  return absl::OkStatus();
}

absl::Status Decoder::Dec(const Json& v, const Path& p, int64_t* o) {
  if (v.is_null()) return absl::OkStatus();
  return DecodeInt(v, p, INT64_MIN, INT64_MAX, "int64", o);
}

absl::Status Decoder::Dec(const Json& v, const Path& p, Quantity* o) {
  if (v.is_null()) {
    *o = Quantity();
    return absl::OkStatus();
  }
  std::string text;
  if (v.is_string()) {
    text = std::string(absl::StripAsciiWhitespace(v.get<std::string>()));
  } else if (v.is_number()) {
    text = Dump(v);
  } else {
    return TypeError(p, "quantity", v);
  }
  auto q = Quantity::Parse(text);
  if (!q.ok()) return absl::InvalidArgumentError(absl::StrCat(p, ": ", q.status().message()));
  *o = *q;
  return absl::OkStatus();
}

absl::Status Decoder::Dec(const Json& v, const Path& p, IntOrString* o) {
  if (v.is_null()) return absl::OkStatus();
  if (v.is_string()) {
    *o = IntOrString::FromString(v.get<std::string>());
    return absl::OkStatus();
  }
  int64_t i = 0;
  if (!v.is_number_integer()) return TypeError(p, "integer or string", v);
  KRETURN_IF_ERROR(DecodeInt(v, p, INT32_MIN, INT32_MAX, "int32", &i));
  *o = IntOrString::FromInt(static_cast<int32_t>(i));
  return absl::OkStatus();
}

absl::Status Decoder::Dec(const Json& v, const Path& p, Time* o) {
  if (v.is_null()) {
    *o = Time();
    return absl::OkStatus();
  }
  if (!v.is_string()) return TypeError(p, "RFC3339 time string", v);
  auto t = Time::ParseRFC3339(v.get<std::string>());
  if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat(p, ": ", t.status().message()));
  *o = *t;
  return absl::OkStatus();
}

absl::Status Decoder::Dec(const Json& v, const Path& p, RawJson* o) {
  if (v.is_null()) return absl::OkStatus();
  if (!v.is_object()) return TypeError(p, "object", v);
  o->json = Dump(v);
  return absl::OkStatus();
}

absl::Status Decoder::Dec(const Json& v, const Path& p, StringMap* o) {
  if (v.is_null()) return absl::OkStatus();
  if (!v.is_object()) return TypeError(p, "object", v);
  for (auto it = v.begin(); it != v.end(); ++it) {
    std::string s;
    KRETURN_IF_ERROR(Dec(it.value(), Key(p, it.key()), &s));
    (*o)[it.key()] = std::move(s);
  }
  return absl::OkStatus();
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ResourceList* o) {
  if (v.is_null()) return absl::OkStatus();
  if (!v.is_object()) return TypeError(p, "object", v);
  for (auto it = v.begin(); it != v.end(); ++it) {
    Quantity q;
    KRETURN_IF_ERROR(Dec(it.value(), Key(p, it.key()), &q));
    (*o)[it.key()] = q;
  }
  return absl::OkStatus();
}

absl::Status Decoder::Dec(const Json& v, const Path& p, OwnerReference* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "apiVersion") return Dec(f, fp, &o->api_version);
    if (k == "kind") return Dec(f, fp, &o->kind);
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "uid") return Dec(f, fp, &o->uid);
    if (k == "controller") return Dec(f, fp, &o->controller);
    if (k == "blockOwnerDeletion") return Dec(f, fp, &o->block_owner_deletion);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ObjectMeta* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "generateName") return Dec(f, fp, &o->generate_name);
    if (k == "namespace") return Dec(f, fp, &o->namespace_);
    if (k == "selfLink") return Dec(f, fp, &o->self_link);
    if (k == "uid") return Dec(f, fp, &o->uid);
    if (k == "resourceVersion") return Dec(f, fp, &o->resource_version);
    if (k == "generation") return Dec(f, fp, &o->generation);
    if (k == "creationTimestamp") return Dec(f, fp, &o->creation_timestamp);
    if (k == "deletionTimestamp") return Dec(f, fp, &o->deletion_timestamp);
    if (k == "deletionGracePeriodSeconds") return Dec(f, fp, &o->deletion_grace_period_seconds);
    if (k == "labels") return Dec(f, fp, &o->labels);
    if (k == "annotations") return Dec(f, fp, &o->annotations);
    if (k == "ownerReferences") return Dec(f, fp, &o->owner_references);
    if (k == "finalizers") return Dec(f, fp, &o->finalizers);
    if (k == "managedFields") return absl::OkStatus();  // known, not kept
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, LocalObjectReference* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, HostPathVolumeSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "path") return Dec(f, fp, &o->path);
    if (k == "type") return Dec(f, fp, &o->type);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, EmptyDirVolumeSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "medium") return Dec(f, fp, &o->medium);
    if (k == "sizeLimit") return Dec(f, fp, &o->size_limit);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, KeyToPath* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "key") return Dec(f, fp, &o->key);
    if (k == "path") return Dec(f, fp, &o->path);
    if (k == "mode") return Dec(f, fp, &o->mode);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ObjectFieldSelector* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "apiVersion") return Dec(f, fp, &o->api_version);
    if (k == "fieldPath") return Dec(f, fp, &o->field_path);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ResourceFieldSelector* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "containerName") return Dec(f, fp, &o->container_name);
    if (k == "resource") return Dec(f, fp, &o->resource);
    if (k == "divisor") return Dec(f, fp, &o->divisor);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, DownwardAPIVolumeFile* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "path") return Dec(f, fp, &o->path);
    if (k == "fieldRef") return Dec(f, fp, &o->field_ref);
    if (k == "resourceFieldRef") return Dec(f, fp, &o->resource_field_ref);
    if (k == "mode") return Dec(f, fp, &o->mode);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, DownwardAPIVolumeSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "items") return Dec(f, fp, &o->items);
    if (k == "defaultMode") return Dec(f, fp, &o->default_mode);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ConfigMapVolumeSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "items") return Dec(f, fp, &o->items);
    if (k == "defaultMode") return Dec(f, fp, &o->default_mode);
    if (k == "optional") return Dec(f, fp, &o->optional);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, SecretVolumeSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "secretName") return Dec(f, fp, &o->secret_name);
    if (k == "items") return Dec(f, fp, &o->items);
    if (k == "defaultMode") return Dec(f, fp, &o->default_mode);
    if (k == "optional") return Dec(f, fp, &o->optional);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PersistentVolumeClaimVolumeSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "claimName") return Dec(f, fp, &o->claim_name);
    if (k == "readOnly") return Dec(f, fp, &o->read_only);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, SecretProjection* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "items") return Dec(f, fp, &o->items);
    if (k == "optional") return Dec(f, fp, &o->optional);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ConfigMapProjection* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "items") return Dec(f, fp, &o->items);
    if (k == "optional") return Dec(f, fp, &o->optional);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, DownwardAPIProjection* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "items") return Dec(f, fp, &o->items);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ServiceAccountTokenProjection* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "audience") return Dec(f, fp, &o->audience);
    if (k == "expirationSeconds") return Dec(f, fp, &o->expiration_seconds);
    if (k == "path") return Dec(f, fp, &o->path);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, VolumeProjection* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "secret") return Dec(f, fp, &o->secret);
    if (k == "downwardAPI") return Dec(f, fp, &o->downward_api);
    if (k == "configMap") return Dec(f, fp, &o->config_map);
    if (k == "serviceAccountToken") return Dec(f, fp, &o->service_account_token);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ProjectedVolumeSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "sources") return Dec(f, fp, &o->sources);
    if (k == "defaultMode") return Dec(f, fp, &o->default_mode);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, Volume* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "hostPath") return Dec(f, fp, &o->host_path);
    if (k == "emptyDir") return Dec(f, fp, &o->empty_dir);
    if (k == "secret") return Dec(f, fp, &o->secret);
    if (k == "persistentVolumeClaim") return Dec(f, fp, &o->persistent_volume_claim);
    if (k == "downwardAPI") return Dec(f, fp, &o->downward_api);
    if (k == "configMap") return Dec(f, fp, &o->config_map);
    if (k == "projected") return Dec(f, fp, &o->projected);
    if (IsOpaqueVolumeSource(k)) {
      if (f.is_null()) return absl::OkStatus();
      RawJson raw;
      KRETURN_IF_ERROR(Dec(f, fp, &raw));
      o->other_sources[k] = std::move(raw);
      return absl::OkStatus();
    }
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ContainerPort* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "hostPort") return Dec(f, fp, &o->host_port);
    if (k == "containerPort") return Dec(f, fp, &o->container_port);
    if (k == "protocol") return Dec(f, fp, &o->protocol);
    if (k == "hostIP") return Dec(f, fp, &o->host_ip);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ConfigMapEnvSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "optional") return Dec(f, fp, &o->optional);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, SecretEnvSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "optional") return Dec(f, fp, &o->optional);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, EnvFromSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "prefix") return Dec(f, fp, &o->prefix);
    if (k == "configMapRef") return Dec(f, fp, &o->config_map_ref);
    if (k == "secretRef") return Dec(f, fp, &o->secret_ref);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ConfigMapKeySelector* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "key") return Dec(f, fp, &o->key);
    if (k == "optional") return Dec(f, fp, &o->optional);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, SecretKeySelector* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "key") return Dec(f, fp, &o->key);
    if (k == "optional") return Dec(f, fp, &o->optional);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, EnvVarSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "fieldRef") return Dec(f, fp, &o->field_ref);
    if (k == "resourceFieldRef") return Dec(f, fp, &o->resource_field_ref);
    if (k == "configMapKeyRef") return Dec(f, fp, &o->config_map_key_ref);
    if (k == "secretKeyRef") return Dec(f, fp, &o->secret_key_ref);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, EnvVar* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "value") return Dec(f, fp, &o->value);
    if (k == "valueFrom") return Dec(f, fp, &o->value_from);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ResourceClaim* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ResourceRequirements* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "limits") return Dec(f, fp, &o->limits);
    if (k == "requests") return Dec(f, fp, &o->requests);
    if (k == "claims") return Dec(f, fp, &o->claims);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ContainerResizePolicy* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "resourceName") return Dec(f, fp, &o->resource_name);
    if (k == "restartPolicy") return Dec(f, fp, &o->restart_policy);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, VolumeMount* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "readOnly") return Dec(f, fp, &o->read_only);
    if (k == "mountPath") return Dec(f, fp, &o->mount_path);
    if (k == "subPath") return Dec(f, fp, &o->sub_path);
    if (k == "mountPropagation") return Dec(f, fp, &o->mount_propagation);
    if (k == "subPathExpr") return Dec(f, fp, &o->sub_path_expr);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, VolumeDevice* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "devicePath") return Dec(f, fp, &o->device_path);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ExecAction* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "command") return Dec(f, fp, &o->command);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, HTTPHeader* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "value") return Dec(f, fp, &o->value);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, HTTPGetAction* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "path") return Dec(f, fp, &o->path);
    if (k == "port") return Dec(f, fp, &o->port);
    if (k == "host") return Dec(f, fp, &o->host);
    if (k == "scheme") return Dec(f, fp, &o->scheme);
    if (k == "httpHeaders") return Dec(f, fp, &o->http_headers);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, TCPSocketAction* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "port") return Dec(f, fp, &o->port);
    if (k == "host") return Dec(f, fp, &o->host);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, GRPCAction* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "port") return Dec(f, fp, &o->port);
    if (k == "service") return Dec(f, fp, &o->service);
    return std::nullopt;
  });
}

Field Decoder::ProbeHandlerField(const std::string& k, const Json& f, const Path& fp, Probe* o) {
  if (k == "exec") return Dec(f, fp, &o->exec);
  if (k == "httpGet") return Dec(f, fp, &o->http_get);
  if (k == "tcpSocket") return Dec(f, fp, &o->tcp_socket);
  if (k == "grpc") return Dec(f, fp, &o->grpc);
  return std::nullopt;
}

absl::Status Decoder::Dec(const Json& v, const Path& p, Probe* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (Field h = ProbeHandlerField(k, f, fp, o); h.has_value()) return h;
    if (k == "initialDelaySeconds") return Dec(f, fp, &o->initial_delay_seconds);
    if (k == "timeoutSeconds") return Dec(f, fp, &o->timeout_seconds);
    if (k == "periodSeconds") return Dec(f, fp, &o->period_seconds);
    if (k == "successThreshold") return Dec(f, fp, &o->success_threshold);
    if (k == "failureThreshold") return Dec(f, fp, &o->failure_threshold);
    if (k == "terminationGracePeriodSeconds") {
      return Dec(f, fp, &o->termination_grace_period_seconds);
    }
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, LifecycleHandler* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "exec") return Dec(f, fp, &o->exec);
    if (k == "httpGet") return Dec(f, fp, &o->http_get);
    if (k == "tcpSocket") return Dec(f, fp, &o->tcp_socket);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, Lifecycle* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "postStart") return Dec(f, fp, &o->post_start);
    if (k == "preStop") return Dec(f, fp, &o->pre_stop);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, Capabilities* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "add") return Dec(f, fp, &o->add);
    if (k == "drop") return Dec(f, fp, &o->drop);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, SELinuxOptions* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "user") return Dec(f, fp, &o->user);
    if (k == "role") return Dec(f, fp, &o->role);
    if (k == "type") return Dec(f, fp, &o->type);
    if (k == "level") return Dec(f, fp, &o->level);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, SeccompProfile* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "type") return Dec(f, fp, &o->type);
    if (k == "localhostProfile") return Dec(f, fp, &o->localhost_profile);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, SecurityContext* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "capabilities") return Dec(f, fp, &o->capabilities);
    if (k == "privileged") return Dec(f, fp, &o->privileged);
    if (k == "seLinuxOptions") return Dec(f, fp, &o->se_linux_options);
    if (k == "windowsOptions") return Dec(f, fp, &o->windows_options);
    if (k == "runAsUser") return Dec(f, fp, &o->run_as_user);
    if (k == "runAsGroup") return Dec(f, fp, &o->run_as_group);
    if (k == "runAsNonRoot") return Dec(f, fp, &o->run_as_non_root);
    if (k == "readOnlyRootFilesystem") return Dec(f, fp, &o->read_only_root_filesystem);
    if (k == "allowPrivilegeEscalation") return Dec(f, fp, &o->allow_privilege_escalation);
    if (k == "procMount") return Dec(f, fp, &o->proc_mount);
    if (k == "seccompProfile") return Dec(f, fp, &o->seccomp_profile);
    return std::nullopt;
  });
}

Field Decoder::ContainerField(const std::string& k, const Json& f, const Path& fp, Container* o) {
  if (k == "name") return Dec(f, fp, &o->name);
  if (k == "image") return Dec(f, fp, &o->image);
  if (k == "command") return Dec(f, fp, &o->command);
  if (k == "args") return Dec(f, fp, &o->args);
  if (k == "workingDir") return Dec(f, fp, &o->working_dir);
  if (k == "ports") return Dec(f, fp, &o->ports);
  if (k == "envFrom") return Dec(f, fp, &o->env_from);
  if (k == "env") return Dec(f, fp, &o->env);
  if (k == "resources") {
    if (f.is_null()) return absl::OkStatus();
    return Dec(f, fp, &o->resources);
  }
  if (k == "resizePolicy") return Dec(f, fp, &o->resize_policy);
  if (k == "restartPolicy") return Dec(f, fp, &o->restart_policy);
  if (k == "volumeMounts") return Dec(f, fp, &o->volume_mounts);
  if (k == "volumeDevices") return Dec(f, fp, &o->volume_devices);
  if (k == "livenessProbe") return Dec(f, fp, &o->liveness_probe);
  if (k == "readinessProbe") return Dec(f, fp, &o->readiness_probe);
  if (k == "startupProbe") return Dec(f, fp, &o->startup_probe);
  if (k == "lifecycle") return Dec(f, fp, &o->lifecycle);
  if (k == "terminationMessagePath") return Dec(f, fp, &o->termination_message_path);
  if (k == "terminationMessagePolicy") return Dec(f, fp, &o->termination_message_policy);
  if (k == "imagePullPolicy") return Dec(f, fp, &o->image_pull_policy);
  if (k == "securityContext") return Dec(f, fp, &o->security_context);
  if (k == "stdin") return Dec(f, fp, &o->stdin_);
  if (k == "stdinOnce") return Dec(f, fp, &o->stdin_once);
  if (k == "tty") return Dec(f, fp, &o->tty);
  return std::nullopt;
}

absl::Status Decoder::Dec(const Json& v, const Path& p, Container* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    return ContainerField(k, f, fp, o);
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, EphemeralContainer* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "targetContainerName") return Dec(f, fp, &o->target_container_name);
    return ContainerField(k, f, fp, &o->common);
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, Sysctl* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "value") return Dec(f, fp, &o->value);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodSecurityContext* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "seLinuxOptions") return Dec(f, fp, &o->se_linux_options);
    if (k == "windowsOptions") return Dec(f, fp, &o->windows_options);
    if (k == "runAsUser") return Dec(f, fp, &o->run_as_user);
    if (k == "runAsGroup") return Dec(f, fp, &o->run_as_group);
    if (k == "runAsNonRoot") return Dec(f, fp, &o->run_as_non_root);
    if (k == "supplementalGroups") return Dec(f, fp, &o->supplemental_groups);
    if (k == "fsGroup") return Dec(f, fp, &o->fs_group);
    if (k == "sysctls") return Dec(f, fp, &o->sysctls);
    if (k == "fsGroupChangePolicy") return Dec(f, fp, &o->fs_group_change_policy);
    if (k == "seccompProfile") return Dec(f, fp, &o->seccomp_profile);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, Toleration* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "key") return Dec(f, fp, &o->key);
    if (k == "operator") return Dec(f, fp, &o->operator_);
    if (k == "value") return Dec(f, fp, &o->value);
    if (k == "effect") return Dec(f, fp, &o->effect);
    if (k == "tolerationSeconds") return Dec(f, fp, &o->toleration_seconds);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, HostAlias* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "ip") return Dec(f, fp, &o->ip);
    if (k == "hostnames") return Dec(f, fp, &o->hostnames);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodDNSConfigOption* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "value") return Dec(f, fp, &o->value);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodDNSConfig* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "nameservers") return Dec(f, fp, &o->nameservers);
    if (k == "searches") return Dec(f, fp, &o->searches);
    if (k == "options") return Dec(f, fp, &o->options);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodReadinessGate* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "conditionType") return Dec(f, fp, &o->condition_type);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodOS* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodSchedulingGate* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ClaimSource* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "resourceClaimName") return Dec(f, fp, &o->resource_claim_name);
    if (k == "resourceClaimTemplateName") return Dec(f, fp, &o->resource_claim_template_name);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodResourceClaim* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "source") {
      if (f.is_null()) return absl::OkStatus();
      return Dec(f, fp, &o->source);
    }
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodSpec* o) {
  std::string deprecated_service_account;
  KRETURN_IF_ERROR(Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "volumes") return Dec(f, fp, &o->volumes);
    if (k == "initContainers") return Dec(f, fp, &o->init_containers);
    if (k == "containers") return Dec(f, fp, &o->containers);
    if (k == "ephemeralContainers") return Dec(f, fp, &o->ephemeral_containers);
    if (k == "restartPolicy") return Dec(f, fp, &o->restart_policy);
    if (k == "terminationGracePeriodSeconds") {
      return Dec(f, fp, &o->termination_grace_period_seconds);
    }
    if (k == "activeDeadlineSeconds") return Dec(f, fp, &o->active_deadline_seconds);
    if (k == "dnsPolicy") return Dec(f, fp, &o->dns_policy);
    if (k == "nodeSelector") return Dec(f, fp, &o->node_selector);
    if (k == "serviceAccountName") return Dec(f, fp, &o->service_account_name);
    if (k == "serviceAccount") return Dec(f, fp, &deprecated_service_account);
    if (k == "automountServiceAccountToken") {
      return Dec(f, fp, &o->automount_service_account_token);
    }
    if (k == "nodeName") return Dec(f, fp, &o->node_name);
    if (k == "hostNetwork") return Dec(f, fp, &o->host_network);
    if (k == "hostPID") return Dec(f, fp, &o->host_pid);
    if (k == "hostIPC") return Dec(f, fp, &o->host_ipc);
    if (k == "shareProcessNamespace") return Dec(f, fp, &o->share_process_namespace);
    if (k == "securityContext") return Dec(f, fp, &o->security_context);
    if (k == "imagePullSecrets") return Dec(f, fp, &o->image_pull_secrets);
    if (k == "hostname") return Dec(f, fp, &o->hostname);
    if (k == "subdomain") return Dec(f, fp, &o->subdomain);
    if (k == "affinity") return Dec(f, fp, &o->affinity);
    if (k == "schedulerName") return Dec(f, fp, &o->scheduler_name);
    if (k == "tolerations") return Dec(f, fp, &o->tolerations);
    if (k == "hostAliases") return Dec(f, fp, &o->host_aliases);
    if (k == "priorityClassName") return Dec(f, fp, &o->priority_class_name);
    if (k == "priority") return Dec(f, fp, &o->priority);
    if (k == "dnsConfig") return Dec(f, fp, &o->dns_config);
    if (k == "readinessGates") return Dec(f, fp, &o->readiness_gates);
    if (k == "runtimeClassName") return Dec(f, fp, &o->runtime_class_name);
    if (k == "enableServiceLinks") return Dec(f, fp, &o->enable_service_links);
    if (k == "preemptionPolicy") return Dec(f, fp, &o->preemption_policy);
    if (k == "overhead") return Dec(f, fp, &o->overhead);
    if (k == "topologySpreadConstraints") return Dec(f, fp, &o->topology_spread_constraints);
    if (k == "setHostnameAsFQDN") return Dec(f, fp, &o->set_hostname_as_fqdn);
    if (k == "os") return Dec(f, fp, &o->os);
    if (k == "hostUsers") return Dec(f, fp, &o->host_users);
    if (k == "schedulingGates") return Dec(f, fp, &o->scheduling_gates);
    if (k == "resourceClaims") return Dec(f, fp, &o->resource_claims);
    return std::nullopt;
  }));
  // v1 -> internal conversion: serviceAccountName wins, else the deprecated serviceAccount.
  if (o->service_account_name.empty()) o->service_account_name = deprecated_service_account;
  return absl::OkStatus();
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodCondition* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "type") return Dec(f, fp, &o->type);
    if (k == "status") return Dec(f, fp, &o->status);
    if (k == "lastProbeTime") return Dec(f, fp, &o->last_probe_time);
    if (k == "lastTransitionTime") return Dec(f, fp, &o->last_transition_time);
    if (k == "reason") return Dec(f, fp, &o->reason);
    if (k == "message") return Dec(f, fp, &o->message);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodIP* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "ip") return Dec(f, fp, &o->ip);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, HostIP* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "ip") return Dec(f, fp, &o->ip);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ContainerStateWaiting* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "reason") return Dec(f, fp, &o->reason);
    if (k == "message") return Dec(f, fp, &o->message);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ContainerStateRunning* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "startedAt") return Dec(f, fp, &o->started_at);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ContainerStateTerminated* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "exitCode") return Dec(f, fp, &o->exit_code);
    if (k == "signal") return Dec(f, fp, &o->signal);
    if (k == "reason") return Dec(f, fp, &o->reason);
    if (k == "message") return Dec(f, fp, &o->message);
    if (k == "startedAt") return Dec(f, fp, &o->started_at);
    if (k == "finishedAt") return Dec(f, fp, &o->finished_at);
    if (k == "containerID") return Dec(f, fp, &o->container_id);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ContainerState* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "waiting") return Dec(f, fp, &o->waiting);
    if (k == "running") return Dec(f, fp, &o->running);
    if (k == "terminated") return Dec(f, fp, &o->terminated);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, ContainerStatus* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "name") return Dec(f, fp, &o->name);
    if (k == "state") return f.is_null() ? absl::OkStatus() : Dec(f, fp, &o->state);
    if (k == "lastState") return f.is_null() ? absl::OkStatus() : Dec(f, fp, &o->last_state);
    if (k == "ready") return Dec(f, fp, &o->ready);
    if (k == "restartCount") return Dec(f, fp, &o->restart_count);
    if (k == "image") return Dec(f, fp, &o->image);
    if (k == "imageID") return Dec(f, fp, &o->image_id);
    if (k == "containerID") return Dec(f, fp, &o->container_id);
    if (k == "started") return Dec(f, fp, &o->started);
    if (k == "allocatedResources") return Dec(f, fp, &o->allocated_resources);
    if (k == "resources") return Dec(f, fp, &o->resources);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, PodStatus* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "phase") return Dec(f, fp, &o->phase);
    if (k == "conditions") return Dec(f, fp, &o->conditions);
    if (k == "message") return Dec(f, fp, &o->message);
    if (k == "reason") return Dec(f, fp, &o->reason);
    if (k == "nominatedNodeName") return Dec(f, fp, &o->nominated_node_name);
    if (k == "hostIP") return Dec(f, fp, &o->host_ip);
    if (k == "hostIPs") return Dec(f, fp, &o->host_ips);
    if (k == "podIP") return Dec(f, fp, &o->pod_ip);
    if (k == "podIPs") return Dec(f, fp, &o->pod_ips);
    if (k == "startTime") return Dec(f, fp, &o->start_time);
    if (k == "initContainerStatuses") return Dec(f, fp, &o->init_container_statuses);
    if (k == "containerStatuses") return Dec(f, fp, &o->container_statuses);
    if (k == "qosClass") return Dec(f, fp, &o->qos_class);
    if (k == "ephemeralContainerStatuses") return Dec(f, fp, &o->ephemeral_container_statuses);
    if (k == "resize") return Dec(f, fp, &o->resize);
    if (k == "resourceClaimStatuses") return Dec(f, fp, &o->resource_claim_statuses);
    return std::nullopt;
  });
}

absl::Status Decoder::Dec(const Json& v, const Path& p, Pod* o) {
  return Fields(v, p, [&](const std::string& k, const Json& f, const Path& fp) -> Field {
    if (k == "kind") return Dec(f, fp, &o->kind);
    if (k == "apiVersion") return Dec(f, fp, &o->api_version);
    if (k == "metadata") return f.is_null() ? absl::OkStatus() : Dec(f, fp, &o->metadata);
    if (k == "spec") return f.is_null() ? absl::OkStatus() : Dec(f, fp, &o->spec);
    if (k == "status") return f.is_null() ? absl::OkStatus() : Dec(f, fp, &o->status);
    return std::nullopt;
  });
}

// Reads kind/apiVersion the way the apimachinery JSON serializer does.
struct TypeMeta {
  std::string kind;
  std::string api_version;
};

absl::StatusOr<TypeMeta> InterpretTypeMeta(const Json& doc) {
  TypeMeta tm;
  if (doc.is_null()) {
    return absl::InvalidArgumentError("Object 'Kind' is missing in 'null'");
  }
  if (!doc.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("couldn't get version/kind; json parse error: json: cannot unmarshal ",
                     doc.is_array()     ? "array"
                     : doc.is_string()  ? "string"
                     : doc.is_boolean() ? "bool"
                                        : "number",
                     " into Go value of type struct { APIVersion string "
                     "\"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
                     "\"json:\\\"kind,omitempty\\\"\" }"));
  }
  auto get = [&](const char* key, std::string* out) -> absl::Status {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) return absl::OkStatus();
    if (!it->is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("couldn't get version/kind; json parse error: json: cannot unmarshal ",
                       it->is_number()    ? "number"
                       : it->is_boolean() ? "bool"
                       : it->is_array()   ? "array"
                                          : "object",
                       " into Go struct field .", key, " of type string"));
    }
    *out = it->get<std::string>();
    return absl::OkStatus();
  };
  KRETURN_IF_ERROR(get("apiVersion", &tm.api_version));
  KRETURN_IF_ERROR(get("kind", &tm.kind));
  if (tm.kind.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Object 'Kind' is missing in '", Dump(doc), "'"));
  }
  if (tm.api_version.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Object 'apiVersion' is missing in '", Dump(doc), "'"));
  }
  if (tm.api_version != "v1") {
    return absl::InvalidArgumentError(
        absl::StrCat("no kind \"", tm.kind, "\" is registered for version \"", tm.api_version,
                     "\" in scheme \"", kScheme, "\""));
  }
  return tm;
}

absl::StatusOr<Pod> DecodePodObject(const Json& doc, const Path& path,
                                    std::vector<std::string>* unknown) {
  Decoder d(unknown);
  Pod pod;
  KRETURN_IF_ERROR(d.Dec(doc, path, &pod));
  pod.kind.clear();
  pod.api_version.clear();
  return pod;
}

absl::StatusOr<std::vector<Pod>> DecodeImpl(std::string_view data, bool allow_list,
                                            std::vector<std::string>* unknown) {
  try {
    auto doc = ParseDocument(data);
    if (!doc.ok()) return doc.status();
    auto tm = InterpretTypeMeta(*doc);
    if (!tm.ok()) return tm.status();
    if (tm->kind == "Pod") {
      auto pod = DecodePodObject(*doc, "", unknown);
      if (!pod.ok()) return pod.status();
      std::vector<Pod> out;
      out.push_back(std::move(*pod));
      return out;
    }
    if (allow_list && tm->kind == "PodList") {
      std::vector<Pod> out;
      Decoder d(unknown);
      KRETURN_IF_ERROR(
          d.Fields(*doc, "", [&](const std::string& k, const Json& f, const Path& fp) -> Field {
            if (k == "kind" || k == "apiVersion" || k == "metadata") return absl::OkStatus();
            if (k == "items") {
              if (f.is_null()) return absl::OkStatus();
              if (!f.is_array()) return TypeError(fp, "array", f);
              for (size_t i = 0; i < f.size(); ++i) {
                if (f[i].is_null()) {
                  out.emplace_back();
                  continue;
                }
                auto pod = DecodePodObject(f[i], Index(fp, i), unknown);
                if (!pod.ok()) return pod.status();
                out.push_back(std::move(*pod));
              }
              return absl::OkStatus();
            }
            return std::nullopt;
          }));
      return out;
    }
    if (allow_list) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid pods list: object of kind \"", tm->kind, "\" is not a PodList"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("invalid pod: object of kind \"", tm->kind, "\" is not a Pod"));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("failed to decode pod: ", e.what()));
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding (Go declaration order, omitempty as upstream).

struct Enc {
  template <typename T>
  static void Opt(Writer& w, const char* k, const std::optional<T>& v) {
    if (!v.has_value()) return;
    w.Key(k);
    E(w, *v);
  }
  template <typename T>
  static void Arr(Writer& w, const std::vector<T>& v) {
    w.BeginArray();
    for (const auto& e : v) E(w, e);
    w.EndArray();
  }
  template <typename T>
  static void Vec(Writer& w, const char* k, const std::vector<T>& v) {
    if (v.empty()) return;
    w.Key(k);
    Arr(w, v);
  }
  // Non-omitempty slice: a nil (empty) slice encodes as null.
  template <typename T>
  static void VecAlways(Writer& w, const char* k, const std::vector<T>& v) {
    w.Key(k);
    if (v.empty()) {
      w.Null();
    } else {
      Arr(w, v);
    }
  }
  static void PutRL(Writer& w, const char* k, const ResourceList& rl) {
    if (rl.empty()) return;
    w.Key(k);
    E(w, rl);
  }

  static void E(Writer& w, const std::string& s) { w.String(s); }
  static void E(Writer& w, bool b) { w.Bool(b); }
  static void E(Writer& w, int32_t i) { w.Int(i); }
  static void E(Writer& w, int64_t i) { w.Int(i); }
  static void E(Writer& w, const Quantity& q) { w.String(q.String()); }
  static void E(Writer& w, const RawJson& r) { w.Raw(r.json.empty() ? "null" : r.json); }
  static void E(Writer& w, const Time& t) {
    if (t.IsZero()) {
      w.Null();
    } else {
      w.String(t.RFC3339());
    }
  }
  static void E(Writer& w, const IntOrString& v) {
    if (v.is_string()) {
      w.String(v.str_val);
    } else {
      w.Int(v.int_val);
    }
  }
  static void E(Writer& w, const ResourceList& rl) {
    w.BeginObject();
    for (const auto& [k, q] : rl) {
      w.Key(k);
      w.String(q.String());
    }
    w.EndObject();
  }
  static void Put(Writer& w, const char* k, const Time& t) {
    w.Key(k);
    E(w, t);
  }

  static void E(Writer& w, const OwnerReference& v) {
    w.BeginObject();
    w.Val("apiVersion", v.api_version);
    w.Val("kind", v.kind);
    w.Val("name", v.name);
    w.Val("uid", v.uid);
    Opt(w, "controller", v.controller);
    Opt(w, "blockOwnerDeletion", v.block_owner_deletion);
    w.EndObject();
  }

  static void E(Writer& w, const ObjectMeta& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    w.PutS("generateName", v.generate_name);
    w.PutS("namespace", v.namespace_);
    w.PutS("selfLink", v.self_link);
    w.PutS("uid", v.uid);
    w.PutS("resourceVersion", v.resource_version);
    w.PutI("generation", v.generation);
    Put(w, "creationTimestamp", v.creation_timestamp);
    Opt(w, "deletionTimestamp", v.deletion_timestamp);
    Opt(w, "deletionGracePeriodSeconds", v.deletion_grace_period_seconds);
    w.PutMap("labels", v.labels);
    w.PutMap("annotations", v.annotations);
    Vec(w, "ownerReferences", v.owner_references);
    w.PutStrs("finalizers", v.finalizers);
    w.EndObject();
  }

  static void E(Writer& w, const LocalObjectReference& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    w.EndObject();
  }

  static void E(Writer& w, const HostPathVolumeSource& v) {
    w.BeginObject();
    w.Val("path", v.path);
    Opt(w, "type", v.type);
    w.EndObject();
  }

  static void E(Writer& w, const EmptyDirVolumeSource& v) {
    w.BeginObject();
    w.PutS("medium", v.medium);
    Opt(w, "sizeLimit", v.size_limit);
    w.EndObject();
  }

  static void E(Writer& w, const KeyToPath& v) {
    w.BeginObject();
    w.Val("key", v.key);
    w.Val("path", v.path);
    Opt(w, "mode", v.mode);
    w.EndObject();
  }

  static void E(Writer& w, const ObjectFieldSelector& v) {
    w.BeginObject();
    w.PutS("apiVersion", v.api_version);
    w.Val("fieldPath", v.field_path);
    w.EndObject();
  }

  static void E(Writer& w, const ResourceFieldSelector& v) {
    w.BeginObject();
    w.PutS("containerName", v.container_name);
    w.Val("resource", v.resource);
    w.Val("divisor", v.divisor.String());
    w.EndObject();
  }

  static void E(Writer& w, const DownwardAPIVolumeFile& v) {
    w.BeginObject();
    w.Val("path", v.path);
    Opt(w, "fieldRef", v.field_ref);
    Opt(w, "resourceFieldRef", v.resource_field_ref);
    Opt(w, "mode", v.mode);
    w.EndObject();
  }

  static void E(Writer& w, const DownwardAPIVolumeSource& v) {
    w.BeginObject();
    Vec(w, "items", v.items);
    Opt(w, "defaultMode", v.default_mode);
    w.EndObject();
  }

  static void E(Writer& w, const ConfigMapVolumeSource& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    Vec(w, "items", v.items);
    Opt(w, "defaultMode", v.default_mode);
    Opt(w, "optional", v.optional);
    w.EndObject();
  }

  static void E(Writer& w, const SecretVolumeSource& v) {
    w.BeginObject();
    w.PutS("secretName", v.secret_name);
    Vec(w, "items", v.items);
    Opt(w, "defaultMode", v.default_mode);
    Opt(w, "optional", v.optional);
    w.EndObject();
  }

  static void E(Writer& w, const PersistentVolumeClaimVolumeSource& v) {
    w.BeginObject();
    w.Val("claimName", v.claim_name);
    w.PutB("readOnly", v.read_only);
    w.EndObject();
  }

  static void E(Writer& w, const SecretProjection& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    Vec(w, "items", v.items);
    Opt(w, "optional", v.optional);
    w.EndObject();
  }

  static void E(Writer& w, const ConfigMapProjection& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    Vec(w, "items", v.items);
    Opt(w, "optional", v.optional);
    w.EndObject();
  }

  static void E(Writer& w, const DownwardAPIProjection& v) {
    w.BeginObject();
    Vec(w, "items", v.items);
    w.EndObject();
  }

  static void E(Writer& w, const ServiceAccountTokenProjection& v) {
    w.BeginObject();
    w.PutS("audience", v.audience);
    Opt(w, "expirationSeconds", v.expiration_seconds);
    w.Val("path", v.path);
    w.EndObject();
  }

  static void E(Writer& w, const VolumeProjection& v) {
    w.BeginObject();
    Opt(w, "secret", v.secret);
    Opt(w, "downwardAPI", v.downward_api);
    Opt(w, "configMap", v.config_map);
    Opt(w, "serviceAccountToken", v.service_account_token);
    w.EndObject();
  }

  static void E(Writer& w, const ProjectedVolumeSource& v) {
    w.BeginObject();
    VecAlways(w, "sources", v.sources);
    Opt(w, "defaultMode", v.default_mode);
    w.EndObject();
  }

  static void E(Writer& w, const Volume& v) {
    w.BeginObject();
    w.Val("name", v.name);
    for (const char* k : kVolumeSourceOrder) {
      const std::string_view key(k);
      if (key == "hostPath") {
        Opt(w, k, v.host_path);
      } else if (key == "emptyDir") {
        Opt(w, k, v.empty_dir);
      } else if (key == "secret") {
        Opt(w, k, v.secret);
      } else if (key == "persistentVolumeClaim") {
        Opt(w, k, v.persistent_volume_claim);
      } else if (key == "downwardAPI") {
        Opt(w, k, v.downward_api);
      } else if (key == "configMap") {
        Opt(w, k, v.config_map);
      } else if (key == "projected") {
        Opt(w, k, v.projected);
      } else if (auto it = v.other_sources.find(k); it != v.other_sources.end()) {
        w.Key(k);
        E(w, it->second);
      }
    }
    w.EndObject();
  }

  static void E(Writer& w, const ContainerPort& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    w.PutI("hostPort", v.host_port);
    w.Val("containerPort", v.container_port);
    w.PutS("protocol", v.protocol);
    w.PutS("hostIP", v.host_ip);
    w.EndObject();
  }

  static void E(Writer& w, const ConfigMapEnvSource& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    Opt(w, "optional", v.optional);
    w.EndObject();
  }

  static void E(Writer& w, const SecretEnvSource& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    Opt(w, "optional", v.optional);
    w.EndObject();
  }

  static void E(Writer& w, const EnvFromSource& v) {
    w.BeginObject();
    w.PutS("prefix", v.prefix);
    Opt(w, "configMapRef", v.config_map_ref);
    Opt(w, "secretRef", v.secret_ref);
    w.EndObject();
  }

  static void E(Writer& w, const ConfigMapKeySelector& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    w.Val("key", v.key);
    Opt(w, "optional", v.optional);
    w.EndObject();
  }

  static void E(Writer& w, const SecretKeySelector& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    w.Val("key", v.key);
    Opt(w, "optional", v.optional);
    w.EndObject();
  }

  static void E(Writer& w, const EnvVarSource& v) {
    w.BeginObject();
    Opt(w, "fieldRef", v.field_ref);
    Opt(w, "resourceFieldRef", v.resource_field_ref);
    Opt(w, "configMapKeyRef", v.config_map_key_ref);
    Opt(w, "secretKeyRef", v.secret_key_ref);
    w.EndObject();
  }

  static void E(Writer& w, const EnvVar& v) {
    w.BeginObject();
    w.Val("name", v.name);
    w.PutS("value", v.value);
    Opt(w, "valueFrom", v.value_from);
    w.EndObject();
  }

  static void E(Writer& w, const ResourceClaim& v) {
    w.BeginObject();
    w.Val("name", v.name);
    w.EndObject();
  }

  static void E(Writer& w, const ResourceRequirements& v) {
    w.BeginObject();
    PutRL(w, "limits", v.limits);
    PutRL(w, "requests", v.requests);
    Vec(w, "claims", v.claims);
    w.EndObject();
  }

  static void E(Writer& w, const ContainerResizePolicy& v) {
    w.BeginObject();
    w.Val("resourceName", v.resource_name);
    w.Val("restartPolicy", v.restart_policy);
    w.EndObject();
  }

  static void E(Writer& w, const VolumeMount& v) {
    w.BeginObject();
    w.Val("name", v.name);
    w.PutB("readOnly", v.read_only);
    w.Val("mountPath", v.mount_path);
    w.PutS("subPath", v.sub_path);
    Opt(w, "mountPropagation", v.mount_propagation);
    w.PutS("subPathExpr", v.sub_path_expr);
    w.EndObject();
  }

  static void E(Writer& w, const VolumeDevice& v) {
    w.BeginObject();
    w.Val("name", v.name);
    w.Val("devicePath", v.device_path);
    w.EndObject();
  }

  static void E(Writer& w, const ExecAction& v) {
    w.BeginObject();
    w.PutStrs("command", v.command);
    w.EndObject();
  }

  static void E(Writer& w, const HTTPHeader& v) {
    w.BeginObject();
    w.Val("name", v.name);
    w.Val("value", v.value);
    w.EndObject();
  }

  static void E(Writer& w, const HTTPGetAction& v) {
    w.BeginObject();
    w.PutS("path", v.path);
    w.Key("port");
    E(w, v.port);
    w.PutS("host", v.host);
    w.PutS("scheme", v.scheme);
    Vec(w, "httpHeaders", v.http_headers);
    w.EndObject();
  }

  static void E(Writer& w, const TCPSocketAction& v) {
    w.BeginObject();
    w.Key("port");
    E(w, v.port);
    w.PutS("host", v.host);
    w.EndObject();
  }

  static void E(Writer& w, const GRPCAction& v) {
    w.BeginObject();
    w.Val("port", v.port);
    w.Key("service");
    if (v.service.has_value()) {
      w.String(*v.service);
    } else {
      w.Null();
    }
    w.EndObject();
  }

  static void E(Writer& w, const Probe& v) {
    w.BeginObject();
    Opt(w, "exec", v.exec);
    Opt(w, "httpGet", v.http_get);
    Opt(w, "tcpSocket", v.tcp_socket);
    Opt(w, "grpc", v.grpc);
    w.PutI("initialDelaySeconds", v.initial_delay_seconds);
    w.PutI("timeoutSeconds", v.timeout_seconds);
    w.PutI("periodSeconds", v.period_seconds);
    w.PutI("successThreshold", v.success_threshold);
    w.PutI("failureThreshold", v.failure_threshold);
    Opt(w, "terminationGracePeriodSeconds", v.termination_grace_period_seconds);
    w.EndObject();
  }

  static void E(Writer& w, const LifecycleHandler& v) {
    w.BeginObject();
    Opt(w, "exec", v.exec);
    Opt(w, "httpGet", v.http_get);
    Opt(w, "tcpSocket", v.tcp_socket);
    w.EndObject();
  }

  static void E(Writer& w, const Lifecycle& v) {
    w.BeginObject();
    Opt(w, "postStart", v.post_start);
    Opt(w, "preStop", v.pre_stop);
    w.EndObject();
  }

  static void E(Writer& w, const Capabilities& v) {
    w.BeginObject();
    w.PutStrs("add", v.add);
    w.PutStrs("drop", v.drop);
    w.EndObject();
  }

  static void E(Writer& w, const SELinuxOptions& v) {
    w.BeginObject();
    w.PutS("user", v.user);
    w.PutS("role", v.role);
    w.PutS("type", v.type);
    w.PutS("level", v.level);
    w.EndObject();
  }

  static void E(Writer& w, const SeccompProfile& v) {
    w.BeginObject();
    w.Val("type", v.type);
    Opt(w, "localhostProfile", v.localhost_profile);
    w.EndObject();
  }

  static void E(Writer& w, const SecurityContext& v) {
    w.BeginObject();
    Opt(w, "capabilities", v.capabilities);
    Opt(w, "privileged", v.privileged);
    Opt(w, "seLinuxOptions", v.se_linux_options);
    Opt(w, "windowsOptions", v.windows_options);
    Opt(w, "runAsUser", v.run_as_user);
    Opt(w, "runAsGroup", v.run_as_group);
    Opt(w, "runAsNonRoot", v.run_as_non_root);
    Opt(w, "readOnlyRootFilesystem", v.read_only_root_filesystem);
    Opt(w, "allowPrivilegeEscalation", v.allow_privilege_escalation);
    Opt(w, "procMount", v.proc_mount);
    Opt(w, "seccompProfile", v.seccomp_profile);
    w.EndObject();
  }

  static void ContainerFields(Writer& w, const Container& v) {
    w.Val("name", v.name);
    w.PutS("image", v.image);
    w.PutStrs("command", v.command);
    w.PutStrs("args", v.args);
    w.PutS("workingDir", v.working_dir);
    Vec(w, "ports", v.ports);
    Vec(w, "envFrom", v.env_from);
    Vec(w, "env", v.env);
    w.Key("resources");
    E(w, v.resources);
    Vec(w, "resizePolicy", v.resize_policy);
    Opt(w, "restartPolicy", v.restart_policy);
    Vec(w, "volumeMounts", v.volume_mounts);
    Vec(w, "volumeDevices", v.volume_devices);
    Opt(w, "livenessProbe", v.liveness_probe);
    Opt(w, "readinessProbe", v.readiness_probe);
    Opt(w, "startupProbe", v.startup_probe);
    Opt(w, "lifecycle", v.lifecycle);
    w.PutS("terminationMessagePath", v.termination_message_path);
    w.PutS("terminationMessagePolicy", v.termination_message_policy);
    w.PutS("imagePullPolicy", v.image_pull_policy);
    Opt(w, "securityContext", v.security_context);
    w.PutB("stdin", v.stdin_);
    w.PutB("stdinOnce", v.stdin_once);
    w.PutB("tty", v.tty);
  }

  static void E(Writer& w, const Container& v) {
    w.BeginObject();
    ContainerFields(w, v);
    w.EndObject();
  }

  static void E(Writer& w, const EphemeralContainer& v) {
    w.BeginObject();
    ContainerFields(w, v.common);
    w.PutS("targetContainerName", v.target_container_name);
    w.EndObject();
  }

  static void E(Writer& w, const Sysctl& v) {
    w.BeginObject();
    w.Val("name", v.name);
    w.Val("value", v.value);
    w.EndObject();
  }

  static void E(Writer& w, const PodSecurityContext& v) {
    w.BeginObject();
    Opt(w, "seLinuxOptions", v.se_linux_options);
    Opt(w, "windowsOptions", v.windows_options);
    Opt(w, "runAsUser", v.run_as_user);
    Opt(w, "runAsGroup", v.run_as_group);
    Opt(w, "runAsNonRoot", v.run_as_non_root);
    if (!v.supplemental_groups.empty()) {
      w.Key("supplementalGroups");
      Arr(w, v.supplemental_groups);
    }
    Opt(w, "fsGroup", v.fs_group);
    Vec(w, "sysctls", v.sysctls);
    Opt(w, "fsGroupChangePolicy", v.fs_group_change_policy);
    Opt(w, "seccompProfile", v.seccomp_profile);
    w.EndObject();
  }

  static void E(Writer& w, const Toleration& v) {
    w.BeginObject();
    w.PutS("key", v.key);
    w.PutS("operator", v.operator_);
    w.PutS("value", v.value);
    w.PutS("effect", v.effect);
    Opt(w, "tolerationSeconds", v.toleration_seconds);
    w.EndObject();
  }

  static void E(Writer& w, const HostAlias& v) {
    w.BeginObject();
    w.PutS("ip", v.ip);
    w.PutStrs("hostnames", v.hostnames);
    w.EndObject();
  }

  static void E(Writer& w, const PodDNSConfigOption& v) {
    w.BeginObject();
    w.PutS("name", v.name);
    Opt(w, "value", v.value);
    w.EndObject();
  }

  static void E(Writer& w, const PodDNSConfig& v) {
    w.BeginObject();
    w.PutStrs("nameservers", v.nameservers);
    w.PutStrs("searches", v.searches);
    Vec(w, "options", v.options);
    w.EndObject();
  }

  static void E(Writer& w, const PodReadinessGate& v) {
    w.BeginObject();
    w.Val("conditionType", v.condition_type);
    w.EndObject();
  }

  static void E(Writer& w, const PodOS& v) {
    w.BeginObject();
    w.Val("name", v.name);
    w.EndObject();
  }

  static void E(Writer& w, const PodSchedulingGate& v) {
    w.BeginObject();
    w.Val("name", v.name);
    w.EndObject();
  }

  static void E(Writer& w, const ClaimSource& v) {
    w.BeginObject();
    Opt(w, "resourceClaimName", v.resource_claim_name);
    Opt(w, "resourceClaimTemplateName", v.resource_claim_template_name);
    w.EndObject();
  }

  static void E(Writer& w, const PodResourceClaim& v) {
    w.BeginObject();
    w.Val("name", v.name);
    w.Key("source");
    E(w, v.source);
    w.EndObject();
  }

  static void E(Writer& w, const PodSpec& v) {
    w.BeginObject();
    Vec(w, "volumes", v.volumes);
    Vec(w, "initContainers", v.init_containers);
    VecAlways(w, "containers", v.containers);
    Vec(w, "ephemeralContainers", v.ephemeral_containers);
    w.PutS("restartPolicy", v.restart_policy);
    Opt(w, "terminationGracePeriodSeconds", v.termination_grace_period_seconds);
    Opt(w, "activeDeadlineSeconds", v.active_deadline_seconds);
    w.PutS("dnsPolicy", v.dns_policy);
    w.PutMap("nodeSelector", v.node_selector);
    w.PutS("serviceAccountName", v.service_account_name);
    w.PutS("serviceAccount", v.service_account_name);  // DeprecatedServiceAccount mirror
    Opt(w, "automountServiceAccountToken", v.automount_service_account_token);
    w.PutS("nodeName", v.node_name);
    w.PutB("hostNetwork", v.host_network);
    w.PutB("hostPID", v.host_pid);
    w.PutB("hostIPC", v.host_ipc);
    Opt(w, "shareProcessNamespace", v.share_process_namespace);
    Opt(w, "securityContext", v.security_context);
    Vec(w, "imagePullSecrets", v.image_pull_secrets);
    w.PutS("hostname", v.hostname);
    w.PutS("subdomain", v.subdomain);
    Opt(w, "affinity", v.affinity);
    w.PutS("schedulerName", v.scheduler_name);
    Vec(w, "tolerations", v.tolerations);
    Vec(w, "hostAliases", v.host_aliases);
    w.PutS("priorityClassName", v.priority_class_name);
    Opt(w, "priority", v.priority);
    Opt(w, "dnsConfig", v.dns_config);
    Vec(w, "readinessGates", v.readiness_gates);
    Opt(w, "runtimeClassName", v.runtime_class_name);
    Opt(w, "enableServiceLinks", v.enable_service_links);
    Opt(w, "preemptionPolicy", v.preemption_policy);
    PutRL(w, "overhead", v.overhead);
    Vec(w, "topologySpreadConstraints", v.topology_spread_constraints);
    Opt(w, "setHostnameAsFQDN", v.set_hostname_as_fqdn);
    Opt(w, "os", v.os);
    Opt(w, "hostUsers", v.host_users);
    Vec(w, "schedulingGates", v.scheduling_gates);
    Vec(w, "resourceClaims", v.resource_claims);
    w.EndObject();
  }

  static void E(Writer& w, const PodCondition& v) {
    w.BeginObject();
    w.Val("type", v.type);
    w.Val("status", v.status);
    Put(w, "lastProbeTime", v.last_probe_time);
    Put(w, "lastTransitionTime", v.last_transition_time);
    w.PutS("reason", v.reason);
    w.PutS("message", v.message);
    w.EndObject();
  }

  static void E(Writer& w, const PodIP& v) {
    w.BeginObject();
    w.PutS("ip", v.ip);
    w.EndObject();
  }

  static void E(Writer& w, const HostIP& v) {
    w.BeginObject();
    w.PutS("ip", v.ip);
    w.EndObject();
  }

  static void E(Writer& w, const ContainerStateWaiting& v) {
    w.BeginObject();
    w.PutS("reason", v.reason);
    w.PutS("message", v.message);
    w.EndObject();
  }

  static void E(Writer& w, const ContainerStateRunning& v) {
    w.BeginObject();
    Put(w, "startedAt", v.started_at);
    w.EndObject();
  }

  static void E(Writer& w, const ContainerStateTerminated& v) {
    w.BeginObject();
    w.Val("exitCode", v.exit_code);
    w.PutI("signal", v.signal);
    w.PutS("reason", v.reason);
    w.PutS("message", v.message);
    Put(w, "startedAt", v.started_at);
    Put(w, "finishedAt", v.finished_at);
    w.PutS("containerID", v.container_id);
    w.EndObject();
  }

  static void E(Writer& w, const ContainerState& v) {
    w.BeginObject();
    Opt(w, "waiting", v.waiting);
    Opt(w, "running", v.running);
    Opt(w, "terminated", v.terminated);
    w.EndObject();
  }

  static void E(Writer& w, const ContainerStatus& v) {
    w.BeginObject();
    w.Val("name", v.name);
    w.Key("state");
    E(w, v.state);
    w.Key("lastState");
    E(w, v.last_state);
    w.Val("ready", v.ready);
    w.Val("restartCount", v.restart_count);
    w.Val("image", v.image);
    w.Val("imageID", v.image_id);
    w.PutS("containerID", v.container_id);
    Opt(w, "started", v.started);
    PutRL(w, "allocatedResources", v.allocated_resources);
    Opt(w, "resources", v.resources);
    w.EndObject();
  }

  static void E(Writer& w, const PodStatus& v) {
    w.BeginObject();
    w.PutS("phase", v.phase);
    Vec(w, "conditions", v.conditions);
    w.PutS("message", v.message);
    w.PutS("reason", v.reason);
    w.PutS("nominatedNodeName", v.nominated_node_name);
    w.PutS("hostIP", v.host_ip);
    Vec(w, "hostIPs", v.host_ips);
    w.PutS("podIP", v.pod_ip);
    Vec(w, "podIPs", v.pod_ips);
    Opt(w, "startTime", v.start_time);
    Vec(w, "initContainerStatuses", v.init_container_statuses);
    Vec(w, "containerStatuses", v.container_statuses);
    w.PutS("qosClass", v.qos_class);
    Vec(w, "ephemeralContainerStatuses", v.ephemeral_container_statuses);
    w.PutS("resize", v.resize);
    Vec(w, "resourceClaimStatuses", v.resource_claim_statuses);
    w.EndObject();
  }

  static void E(Writer& w, const Pod& v) {
    w.BeginObject();
    w.PutS("kind", v.kind);
    w.PutS("apiVersion", v.api_version);
    w.Key("metadata");
    E(w, v.metadata);
    w.Key("spec");
    E(w, v.spec);
    w.Key("status");
    E(w, v.status);
    w.EndObject();
  }
};

}  // namespace

absl::StatusOr<Pod> DecodePod(std::string_view data, std::vector<std::string>* unknown_fields) {
  auto pods = DecodeImpl(data, /*allow_list=*/false, unknown_fields);
  if (!pods.ok()) return pods.status();
  return std::move((*pods)[0]);
}

absl::StatusOr<std::vector<Pod>> DecodePodOrPodList(std::string_view data,
                                                    std::vector<std::string>* unknown_fields) {
  return DecodeImpl(data, /*allow_list=*/true, unknown_fields);
}

std::string EncodePodJson(const Pod& pod) {
  Writer w;
  w.BeginObject();
  w.Val("kind", "Pod");
  w.Val("apiVersion", "v1");
  w.Key("metadata");
  Enc::E(w, pod.metadata);
  w.Key("spec");
  Enc::E(w, pod.spec);
  w.Key("status");
  Enc::E(w, pod.status);
  w.EndObject();
  return w.Take();
}

std::string EncodePodListJson(const std::vector<Pod>& pods) {
  Writer w;
  w.BeginObject();
  w.Val("kind", "PodList");
  w.Val("apiVersion", "v1");
  w.Key("metadata");
  w.BeginObject();
  w.EndObject();
  Enc::VecAlways(w, "items", pods);
  w.EndObject();
  return w.Take();
}

std::string EncodeContainerJson(const Container& container) {
  Writer w;
  Enc::E(w, container);
  return w.Take();
}

}  // namespace kubelet::api
