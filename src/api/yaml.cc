#include "api/yaml.h"

#include <cmath>
#include <cstdlib>
#include <exception>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/codec.h"
#include "api/go_json.h"
#include "common/log.h"
#include "common/strings.h"
#include "yaml-cpp/yaml.h"

namespace kubelet::api {
namespace {

constexpr char kPrefix[] = "error converting YAML to JSON: ";

absl::Status ConvError(std::string_view detail) {
  return absl::InvalidArgumentError(absl::StrCat(kPrefix, AV(detail)));
}

bool IsOneOf(std::string_view s, std::initializer_list<std::string_view> set) {
  for (std::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

// strconv.ParseInt(s, 0, 64), falling back to ParseUint(s, 0, 64) for values above int64
// (underscores already removed by the caller).
bool ParseGoInt(std::string_view s, int64_t* i64, uint64_t* u64, bool* is_unsigned) {
  if (s.empty()) return false;
  bool neg = false;
  size_t pos = 0;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    pos = 1;
  }
  int base = 10;
  if (s.size() - pos >= 2 && s[pos] == '0') {
    const char p = absl::ascii_tolower(static_cast<unsigned char>(s[pos + 1]));
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
  *u64 = static_cast<uint64_t>(v);
  *is_unsigned = true;
  return true;
}

// yaml.v2's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlStyleFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&]() {
    size_t start = i;
    while (i < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
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

// yaml.v2's resolve() for a plain scalar, then json.Marshal's view of the result.
absl::StatusOr<Json> ResolvePlainScalar(const std::string& s) {
  if (IsOneOf(s, {"", "~", "null", "Null", "NULL"})) return Json(nullptr);
  if (IsOneOf(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})) {
    return Json(true);
  }
  if (IsOneOf(s, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) {
    return Json(false);
  }
  if (IsOneOf(s, {".nan", ".NaN", ".NAN"})) return ConvError("json: unsupported value: NaN");
  if (IsOneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})) {
    return ConvError("json: unsupported value: +Inf");
  }
  if (IsOneOf(s, {"-.inf", "-.Inf", "-.INF"})) return ConvError("json: unsupported value: -Inf");
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
  if (ParseGoInt(plain, &i64, &u64, &is_unsigned)) return is_unsigned ? Json(u64) : Json(i64);
  if (IsYamlStyleFloat(plain)) {
    const double d = std::strtod(plain.c_str(), nullptr);
    if (std::isinf(d)) {
      return ConvError(d > 0 ? "json: unsupported value: +Inf" : "json: unsupported value: -Inf");
    }
    return Json(d);
  }
  return Json(s);
}

class Converter {
 public:
  explicit Converter(size_t input_size) : max_nodes_(input_size + 1024) {}

  absl::StatusOr<Json> Convert(const YAML::Node& n, int depth) {
    if (depth > kMaxYamlDepth) {
      return ConvError(absl::StrCat("exceeded max depth of ", kMaxYamlDepth));
    }
    if (++nodes_ > max_nodes_) {
      return ConvError("document too large (too many nodes or aliases)");
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
          absl::StatusOr<Json> v = Convert(e, depth + 1);
          if (!v.ok()) return v.status();
          arr.push_back(std::move(*v));
        }
        return arr;
      }
      case YAML::NodeType::Map:
        return Map(n, depth);
    }
    return Json(nullptr);
  }

  std::vector<std::string> TakeDuplicates() { return std::move(duplicates_); }

 private:
  // Sets `key` in `obj`, keeping the first position; true when it was there already.
  static bool Set(Json* obj, const std::string& key, Json v) {
    auto it = obj->find(key);
    if (it != obj->end()) {
      *it = std::move(v);
      return true;
    }
    obj->emplace(key, std::move(v));
    return false;
  }

  absl::StatusOr<Json> Map(const YAML::Node& n, int depth) {
    Json obj = Json::object();
    std::set<std::string> merged;  // keys that came from a merge key, not reported twice
    for (const auto& kv : n) {
      if (kv.first.IsScalar() && kv.first.Tag() == "?" && kv.first.Scalar() == "<<") {
        absl::StatusOr<Json> src = Convert(kv.second, depth + 1);
        if (!src.ok()) return src.status();
        std::vector<const Json*> maps;  // in the order they are applied: later ones lose
        bool valid = src->is_object() || src->is_array();
        if (src->is_object()) maps.push_back(&*src);
        if (src->is_array()) {
          for (auto it = src->rbegin(); it != src->rend(); ++it) {
            valid = valid && it->is_object();
            maps.push_back(&*it);
          }
        }
        if (!valid) {
          return ConvError(
              absl::StrCat("yaml: line ", kv.first.Mark().line + 1,
                           ": map merge requires map or sequence of maps as the value"));
        }
        for (const Json* m : maps) {
          for (auto it = m->begin(); it != m->end(); ++it) {
            Set(&obj, it.key(), it.value());
            merged.insert(it.key());
          }
        }
        continue;
      }
      absl::StatusOr<std::string> key = KeyString(kv.first);
      if (!key.ok()) return key.status();
      absl::StatusOr<Json> v = Convert(kv.second, depth + 1);
      if (!v.ok()) return v.status();
      if (Set(&obj, *key, std::move(*v)) && merged.count(*key) == 0) {
        duplicates_.push_back(absl::StrCat("line ", kv.first.Mark().line + 1, ": key ",
                                           log::Quote(*key), " already set in map"));
      }
      merged.erase(*key);
    }
    return obj;
  }

  static absl::StatusOr<Json> Scalar(const YAML::Node& n) {
    const std::string& tag = n.Tag();
    const std::string& s = n.Scalar();
    if (tag == "!" || tag == "tag:yaml.org,2002:str" || tag == "!!str" ||
        tag == "tag:yaml.org,2002:binary") {
      return Json(s);
    }
    absl::StatusOr<Json> v = ResolvePlainScalar(s);
    if (tag == "?" || tag.empty() || !v.ok()) return v;
    // An explicit standard tag: the resolved kind must match it.
    const bool matches = (tag != "tag:yaml.org,2002:int" || v->is_number_integer()) &&
                         (tag != "tag:yaml.org,2002:bool" || v->is_boolean()) &&
                         (tag != "tag:yaml.org,2002:null" || v->is_null()) &&
                         (tag != "tag:yaml.org,2002:float" || v->is_number());
    if (!matches) return ConvError(absl::StrCat("yaml: cannot decode ", s, " as a ", tag));
    return v;
  }

  static absl::StatusOr<std::string> KeyString(const YAML::Node& k) {
    if (k.Type() == YAML::NodeType::Null) return ConvError("unsupported map key of type: <nil>");
    if (k.Type() != YAML::NodeType::Scalar) return ConvError("unsupported map key (not a scalar)");
    if (k.Tag() != "?") return k.Scalar();
    absl::StatusOr<Json> v = ResolvePlainScalar(k.Scalar());
    if (!v.ok()) return k.Scalar();
    if (v->is_null()) return ConvError("unsupported map key of type: <nil>");
    if (v->is_boolean()) return std::string(v->get<bool>() ? "true" : "false");
    if (v->is_number_integer()) return SerializeJson(*v);
    return k.Scalar();
  }

  const size_t max_nodes_;
  size_t nodes_ = 0;
  std::vector<std::string> duplicates_;
};

}  // namespace

absl::StatusOr<YamlJson> YamlToJson(std::string_view yaml) {
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    Converter conv(yaml.size());
    absl::StatusOr<Json> j = conv.Convert(root, 0);
    if (!j.ok()) return j.status();
    return YamlJson{SerializeJson(*j), conv.TakeDuplicates()};
  } catch (const YAML::Exception& e) {
    return ConvError(absl::StrCat("yaml: line ", e.mark.line + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return ConvError(e.what());
  }
}

}  // namespace kubelet::api
