// The Pod codec on the declarative codec (codec.h): the field tables of pod_fields.h do the
// typed work; this file adds what is particular to pod manifests: YAML (converted to JSON as
// sigs.k8s.io/yaml does), the TypeMeta checks of the apimachinery decoder, PodList, and the
// pod-level policies (TypeMeta, managedFields and unknown metadata members not kept).
#include "api/pod_codec.h"

#include <cmath>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "api/go_json.h"
#include "api/pod_fields.h"
#include "yaml-cpp/yaml.h"

namespace kubelet::api {
namespace {

constexpr int kMaxDepth = 1000;  // nesting levels accepted in a document
constexpr char kScheme[] = "pkg/api/legacyscheme/scheme.go:30";

// Manifests are parsed into nlohmann's std::map tree: members sorted (as the Go decoder's maps
// iterate them: unknown members are reported and opaque fields stored in that order, whatever
// order the manifest used), and faster to build than the ordered Json.
using Doc = UnorderedJson;

// Compact JSON as Go's json.Marshal writes a generic value (map keys sorted).
std::string Dump(const Doc& j) { return SerializeJson(j); }

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
Doc FloatToJson(double f) {
  if (f == std::trunc(f) && std::fabs(f) < 9.2e18) return Doc(static_cast<int64_t>(f));
  return Doc(f);
}

absl::StatusOr<Doc> ResolvePlainScalar(const std::string& s) {
  static const char* const kNull[] = {"", "~", "null", "Null", "NULL"};
  static const char* const kTrue[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                      "True", "TRUE", "on",  "On",  "ON"};
  static const char* const kFalse[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                       "False", "FALSE", "off", "Off", "OFF"};
  static const char* const kSpecialFloat[] = {".nan",  ".NaN",  ".NAN",  ".inf",  ".Inf",  ".INF",
                                              "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"};
  for (const char* n : kNull) {
    if (s == n) return Doc(nullptr);
  }
  for (const char* t : kTrue) {
    if (s == t) return Doc(true);
  }
  for (const char* f : kFalse) {
    if (s == f) return Doc(false);
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
    return Doc(s);
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
    return is_unsigned ? Doc(u64) : Doc(i64);
  }
  if (IsYamlStyleFloat(plain)) {
    return FloatToJson(std::strtod(plain.c_str(), nullptr));
  }
  return Doc(s);
}

// Every YAML node but an alias costs at least one byte of input, so a node budget proportional
// to the input size admits every real document and stops alias ("billion laughs") expansion.
class YamlConverter {
 public:
  explicit YamlConverter(size_t input_size) : max_nodes_(input_size + 1024) {}

  absl::StatusOr<Doc> Convert(const YAML::Node& n, int depth) {
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
        return Doc(nullptr);
      case YAML::NodeType::Scalar:
        return Scalar(n);
      case YAML::NodeType::Sequence: {
        Doc arr = Doc::array();
        for (const auto& e : n) {
          auto v = Convert(e, depth + 1);
          if (!v.ok()) return v.status();
          arr.push_back(std::move(*v));
        }
        return arr;
      }
      case YAML::NodeType::Map: {
        Doc obj = Doc::object();
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
    return Doc(nullptr);
  }

 private:
  static absl::StatusOr<Doc> Scalar(const YAML::Node& n) {
    const std::string& tag = n.Tag();
    const std::string& s = n.Scalar();
    if (tag == "!" || tag == "tag:yaml.org,2002:str" || tag == "tag:yaml.org,2002:binary") {
      return Doc(s);
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
absl::StatusOr<Doc> ParseDocument(std::string_view data) {
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
      return Doc::parse(data.begin(), data.end());
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

#define KRETURN_IF_ERROR(expr) \
  do {                         \
    absl::Status _st = (expr); \
    if (!_st.ok()) return _st; \
  } while (0)

// Reads kind/apiVersion the way the apimachinery JSON serializer does.
struct TypeMeta {
  std::string kind;
  std::string api_version;
};

absl::StatusOr<TypeMeta> InterpretTypeMeta(const Doc& doc) {
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

// The pod-level policies of a decoded Pod: TypeMeta dropped (the upstream decode goes through the
// internal type); managedFields and unknown metadata members not kept (they would change the
// pod's JSON and so a static pod's hash).
void Normalize(Pod* pod) {
  pod->kind.clear();
  pod->api_version.clear();
  pod->metadata.managed_fields = RawJson{};
  pod->metadata.unknown = RawJson{};
}

// A PodList document; metadata is accepted whatever it holds, as upstream ignores it here.
struct PodListDoc {
  std::string kind;
  std::string api_version;
  Json metadata;
  std::vector<Pod> items;
};

}  // namespace

namespace codec {
template <>
struct Fields<PodListDoc> {
  using S = PodListDoc;
  static constexpr auto kList =
      std::tuple(Field("kind", &S::kind), Field("apiVersion", &S::api_version),
                 Field("metadata", &S::metadata), Field("items", &S::items));
};
}  // namespace codec

namespace {

absl::StatusOr<std::vector<Pod>> DecodeImpl(std::string_view data, bool allow_list,
                                            std::vector<std::string>* unknown) {
  try {
    absl::StatusOr<Doc> doc = ParseDocument(data);
    if (!doc.ok()) return doc.status();
    absl::StatusOr<TypeMeta> tm = InterpretTypeMeta(*doc);
    if (!tm.ok()) return tm.status();
    codec::Path root;
    root.unknown_paths = unknown;
    if (tm->kind == "Pod") {
      std::vector<Pod> out(1);
      KRETURN_IF_ERROR(codec::DecodeStruct(*doc, root, &out[0]));
      Normalize(&out[0]);
      return out;
    }
    if (allow_list && tm->kind == "PodList") {
      PodListDoc list;
      KRETURN_IF_ERROR(codec::DecodeStruct(*doc, root, &list));
      for (Pod& pod : list.items) Normalize(&pod);
      return std::move(list.items);
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
  // "Pod"/"v1" whatever the pod's own TypeMeta holds.
  std::string out = R"({"kind":"Pod","apiVersion":"v1","metadata":)";
  codec::AppendValue(&out, pod.metadata, 0);
  out.append(R"(,"spec":)");
  codec::AppendValue(&out, pod.spec, 0);
  out.append(R"(,"status":)");
  codec::AppendValue(&out, pod.status, 0);
  out.push_back('}');
  return out;
}

std::string EncodePodListJson(const std::vector<Pod>& pods) {
  // Items keep their own (usually empty) TypeMeta, as upstream; no items is Go's nil slice.
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":)";
  codec::AppendValue(&out, pods, codec::kEmptyAsNull);
  out.push_back('}');
  return out;
}

std::string EncodeContainerJson(const Container& container) { return Encode(container); }

}  // namespace kubelet::api
