// Decoding of a KubeletConfiguration file, following the upstream v1.28 loader:
// configfiles.fsLoader.Load -> codec.DecodeKubeletConfiguration (strict, then lenient) ->
// apimachinery's JSON/YAML serializer (sigs.k8s.io/yaml YAML->JSON, sigs.k8s.io/json decoding)
// -> SetDefaults_KubeletConfiguration -> resolveRelativePaths -> server.go loadConfigFile.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "api/quantity.h"
#include "common/duration.h"
#include "common/log.h"
#include "common/strings.h"
#include "config/kubelet_configuration.h"
#include "config/kubelet_configuration_schema.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

namespace kubelet::config {
namespace {

using schema::Field;
using schema::Kind;
using schema::StructDesc;

// ---------------------------------------------------------------------------------------------
// A JSON value as Go's decoder sees it (after YAML->JSON for YAML input). Object members keep
// document order; JSON input keeps duplicate keys (Go decodes them in turn), YAML input has them
// collapsed already (yaml.v2 unmarshals into a map: the last one wins).
struct Member;
struct Value {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool b = false;
  std::string text;  // string contents, or the JSON literal of a number
  std::vector<Value> items;
  // A struct rather than std::pair: a vector member may name an incomplete type, a pair may not
  // (clang with libstdc++ rejects std::pair<std::string, Value> here).
  std::vector<Member> members;
};
struct Member {
  Member(std::string k, Value v) : first(std::move(k)), second(std::move(v)) {}
  std::string first;
  Value second;
};

// Go's name for a JSON value in "json: cannot unmarshal X into ..." messages.
const char* KindWord(const Value& v) {
  switch (v.type) {
    case Value::Type::kNull:
      return "null";
    case Value::Type::kBool:
      return "bool";
    case Value::Type::kNumber:
      return "number";
    case Value::Type::kString:
      return "string";
    case Value::Type::kArray:
      return "array";
    case Value::Type::kObject:
      return "object";
  }
  return "value";
}

// Go strconv.Quote-like quoting for messages (printable ASCII kept, the rest escaped).
std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static const char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

void AppendJsonString(std::string* out, std::string_view s) {
  *out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += static_cast<char>(c);
    } else if (c < 0x20) {
      static const char kHex[] = "0123456789abcdef";
      *out += "\\u00";
      *out += kHex[c >> 4];
      *out += kHex[c & 15];
    } else {
      *out += static_cast<char>(c);
    }
  }
  *out += '"';
}

// Compact JSON text of a value: the bytes a Go UnmarshalJSON method would receive.
void AppendRaw(std::string* out, const Value& v) {
  switch (v.type) {
    case Value::Type::kNull:
      *out += "null";
      break;
    case Value::Type::kBool:
      *out += v.b ? "true" : "false";
      break;
    case Value::Type::kNumber:
      *out += v.text;
      break;
    case Value::Type::kString:
      AppendJsonString(out, v.text);
      break;
    case Value::Type::kArray:
      *out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) *out += ',';
        AppendRaw(out, v.items[i]);
      }
      *out += ']';
      break;
    case Value::Type::kObject:
      *out += '{';
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i) *out += ',';
        AppendJsonString(out, v.members[i].first);
        *out += ':';
        AppendRaw(out, v.members[i].second);
      }
      *out += '}';
      break;
  }
}

std::string Raw(const Value& v) {
  std::string out;
  AppendRaw(&out, v);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Go number formatting and parsing.

// encoding/json's float64 encoding (shortest round-trip, 'e' outside [1e-6, 1e21)).
std::string GoJsonFloat(double f) {
  char buf[64];
  double abs = std::fabs(f);
  bool exp = abs != 0 && (abs < 1e-6 || abs >= 1e21);
  auto res = std::to_chars(buf, buf + sizeof(buf), f,
                           exp ? std::chars_format::scientific : std::chars_format::fixed);
  std::string s(buf, res.ptr);
  if (exp) {
    // Go cleans up e-09 to e-9.
    size_t n = s.size();
    if (n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') {
      s.erase(n - 2, 1);
    }
  }
  return s;
}

// strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64): optional sign (ParseInt only), base prefix
// 0x/0o/0b or a leading 0 for octal.
bool ParseGoIntBase0(std::string_view s, bool allow_sign, int64_t* i64, uint64_t* u64,
                     bool* negative) {
  *negative = false;
  if (s.empty()) return false;
  if (s[0] == '+' || s[0] == '-') {
    if (!allow_sign) return false;
    *negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    char p = static_cast<char>(s[1] | 0x20);
    if (p == 'x') {
      base = 16;
      s.remove_prefix(2);
    } else if (p == 'o') {
      base = 8;
      s.remove_prefix(2);
    } else if (p == 'b') {
      base = 2;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  if (s.empty()) return false;
  uint64_t v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) return false;
  *u64 = v;
  if (allow_sign) {
    if (*negative) {
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return false;
      *i64 = v == static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1
                 ? std::numeric_limits<int64_t>::min()
                 : -static_cast<int64_t>(v);
    } else {
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
      *i64 = static_cast<int64_t>(v);
    }
  }
  return true;
}

// strconv.ParseInt(text, 10, 64) as encoding/json applies it to a number literal.
bool ParseDecimalInt(const std::string& text, int64_t* out) {
  const char* b = text.data();
  const char* e = b + text.size();
  if (b != e && *b == '+') return false;
  auto res = std::from_chars(b, e, *out, 10);
  return res.ec == std::errc() && res.ptr == e && !text.empty();
}

bool ParseDecimalUint(const std::string& text, uint64_t* out) {
  const char* b = text.data();
  const char* e = b + text.size();
  if (b == e || *b == '+' || *b == '-') return false;
  auto res = std::from_chars(b, e, *out, 10);
  return res.ec == std::errc() && res.ptr == e;
}

// ---------------------------------------------------------------------------------------------
// JSON input (nlohmann SAX, so duplicate keys and number literals survive).

class JsonBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit JsonBuilder(Value* root) : root_(root) {}

  bool null() override { return Add(Value{}); }
  bool boolean(bool v) override {
    Value x;
    x.type = Value::Type::kBool;
    x.b = v;
    return Add(std::move(x));
  }
  bool number_integer(number_integer_t v) override { return Number(std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Number(std::to_string(v)); }
  bool number_float(number_float_t, const string_t& s) override { return Number(s); }
  bool string(string_t& s) override {
    Value x;
    x.type = Value::Type::kString;
    x.text = std::move(s);
    return Add(std::move(x));
  }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override {
    Value x;
    x.type = Value::Type::kObject;
    return Open(std::move(x));
  }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    Value x;
    x.type = Value::Type::kArray;
    return Open(std::move(x));
  }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error_ = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> drop the tag.
    size_t p = error_.find("] ");
    if (p != std::string::npos) error_ = error_.substr(p + 2);
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  bool Number(std::string text) {
    Value x;
    x.type = Value::Type::kNumber;
    x.text = std::move(text);
    return Add(std::move(x));
  }
  Value* Place(Value v) {
    if (stack_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    Value* parent = stack_.back();
    if (parent->type == Value::Type::kArray) {
      parent->items.push_back(std::move(v));
      return &parent->items.back();
    }
    parent->members.emplace_back(std::move(key_), std::move(v));
    return &parent->members.back().second;
  }
  bool Add(Value v) {
    Place(std::move(v));
    return true;
  }
  bool Open(Value v) {
    // encoding/json's maxNestingDepth.
    if (stack_.size() >= 10000) {
      error_ = "exceeded max depth";
      return false;
    }
    stack_.push_back(Place(std::move(v)));
    return true;
  }

  Value* root_;
  std::vector<Value*> stack_;
  std::string key_;
  std::string error_;
};

// ---------------------------------------------------------------------------------------------
// YAML input (yaml-cpp), converted as sigs.k8s.io/yaml.YAMLToJSON does with yaml.v2 scalar
// resolution; duplicate keys are reported as YAMLToJSONStrict would.

bool IsOneOf(std::string_view s, std::initializer_list<std::string_view> set) {
  for (std::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

struct YamlContext {
  std::vector<std::string> duplicate_errors;  // "line N: key \"k\" already set in map"
  std::string fatal;                          // conversion error
};

// yaml.v2's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlStyleFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&s, &i]() {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
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

// Resolves a plain (untagged, unquoted) scalar like yaml.v2's resolve().
Value ResolvePlainScalar(const std::string& s, YamlContext* ctx) {
  Value v;
  if (IsOneOf(s, {"", "~", "null", "Null", "NULL"})) return v;
  if (IsOneOf(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})) {
    v.type = Value::Type::kBool;
    v.b = true;
    return v;
  }
  if (IsOneOf(s, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) {
    v.type = Value::Type::kBool;
    v.b = false;
    return v;
  }
  if (IsOneOf(s, {".nan", ".NaN", ".NAN"})) {
    ctx->fatal = "json: unsupported value: NaN";
    return v;
  }
  if (IsOneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})) {
    ctx->fatal = "json: unsupported value: +Inf";
    return v;
  }
  if (IsOneOf(s, {"-.inf", "-.Inf", "-.INF"})) {
    ctx->fatal = "json: unsupported value: -Inf";
    return v;
  }
  char c = s[0];
  if (c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9')) {
    std::string plain;
    for (char ch : s) {
      if (ch != '_') plain += ch;
    }
    int64_t i64 = 0;
    uint64_t u64 = 0;
    bool neg = false;
    if (ParseGoIntBase0(plain, true, &i64, &u64, &neg)) {
      v.type = Value::Type::kNumber;
      v.text = std::to_string(i64);
      return v;
    }
    if (ParseGoIntBase0(plain, false, &i64, &u64, &neg)) {
      v.type = Value::Type::kNumber;
      v.text = std::to_string(u64);
      return v;
    }
    if (IsYamlStyleFloat(plain)) {
      double d = std::strtod(plain.c_str(), nullptr);
      if (std::isinf(d)) {
        ctx->fatal = d > 0 ? "json: unsupported value: +Inf" : "json: unsupported value: -Inf";
        return v;
      }
      v.type = Value::Type::kNumber;
      v.text = GoJsonFloat(d);
      return v;
    }
  }
  v.type = Value::Type::kString;
  v.text = s;
  return v;
}

Value ScalarValue(const YAML::Node& node, YamlContext* ctx) {
  const std::string& tag = node.Tag();
  if (tag == "!" || tag == "tag:yaml.org,2002:str" || tag == "!!str") {
    Value v;
    v.type = Value::Type::kString;
    v.text = node.Scalar();
    return v;
  }
  return ResolvePlainScalar(node.Scalar(), ctx);
}

// JSON key for a YAML mapping key (sigs.k8s.io/yaml stringifies non-string keys).
std::string KeyString(const YAML::Node& key, YamlContext* ctx) {
  if (key.IsNull()) return "null";
  if (!key.IsScalar()) {
    ctx->fatal = "unsupported map key";
    return "";
  }
  Value v = ScalarValue(key, ctx);
  switch (v.type) {
    case Value::Type::kNull:
      return "null";
    case Value::Type::kBool:
      return v.b ? "true" : "false";
    case Value::Type::kNumber:
    case Value::Type::kString:
      return v.text;
    default:
      return key.Scalar();
  }
}

Value FromYaml(const YAML::Node& node, YamlContext* ctx, int depth) {
  Value v;
  if (!ctx->fatal.empty()) return v;
  if (depth > 1000) {  // also stops self-referencing aliases
    ctx->fatal = "exceeded max depth";
    return v;
  }
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return v;
    case YAML::NodeType::Scalar:
      return ScalarValue(node, ctx);
    case YAML::NodeType::Sequence:
      v.type = Value::Type::kArray;
      for (const auto& item : node) {
        v.items.push_back(FromYaml(item, ctx, depth + 1));
        if (!ctx->fatal.empty()) return v;
      }
      return v;
    case YAML::NodeType::Map: {
      v.type = Value::Type::kObject;
      std::set<std::string> merged;  // keys that came from a merge key, not reported twice
      auto set = [&v](std::string key, Value item) -> bool {
        for (auto& m : v.members) {
          if (m.first == key) {
            m.second = std::move(item);
            return true;
          }
        }
        v.members.emplace_back(std::move(key), std::move(item));
        return false;
      };
      for (const auto& kv : node) {
        if (kv.first.IsScalar() && kv.first.Tag() == "?" && kv.first.Scalar() == "<<") {
          // yaml.v2 merge key: a map, or a list of maps merged last-to-first.
          Value src = FromYaml(kv.second, ctx, depth + 1);
          if (!ctx->fatal.empty()) return v;
          std::vector<const Value*> maps;
          bool valid = src.type == Value::Type::kObject || src.type == Value::Type::kArray;
          if (src.type == Value::Type::kObject) maps.push_back(&src);
          for (auto it = src.items.rbegin(); it != src.items.rend(); ++it) {
            valid = valid && it->type == Value::Type::kObject;
            maps.push_back(&*it);
          }
          if (!valid) {
            ctx->fatal = absl::StrCat("yaml: line ", kv.first.Mark().line + 1,
                                      ": map merge requires map or sequence of maps as the value");
            return v;
          }
          for (const Value* m : maps) {
            for (const auto& [k, item] : m->members) {
              set(k, item);
              merged.insert(k);
            }
          }
          continue;
        }
        std::string key = KeyString(kv.first, ctx);
        if (!ctx->fatal.empty()) return v;
        Value item = FromYaml(kv.second, ctx, depth + 1);
        if (!ctx->fatal.empty()) return v;
        if (set(key, std::move(item)) && merged.count(key) == 0) {
          ctx->duplicate_errors.push_back(absl::StrCat("line ", kv.first.Mark().line + 1, ": key ",
                                                       GoQuote(key), " already set in map"));
        }
        merged.erase(key);
      }
      return v;
    }
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Struct decoding over the schema, with Go encoding/json semantics: type errors are remembered
// (the first one is reported) and decoding goes on; errors from UnmarshalJSON methods
// (durations, quantities, times) stop it. Unknown and duplicate fields are strict errors.

struct DecodeState {
  std::vector<std::string> strict_errors;
  std::string saved_error;  // first type error
  std::string abort_error;  // stops decoding
  std::vector<std::string> fields_set;
  std::set<std::string> fields_set_index;

  bool aborted() const { return !abort_error.empty(); }
  void Save(std::string err) {
    if (saved_error.empty()) saved_error = std::move(err);
  }
  void Abort(std::string err) { abort_error = std::move(err); }
  void MarkSet(const std::string& path) {
    if (fields_set_index.insert(path).second) fields_set.push_back(path);
  }
  void MarkUnset(const std::string& path) {
    std::string prefix = path + ".";
    for (auto it = fields_set.begin(); it != fields_set.end();) {
      if (*it == path || it->rfind(prefix, 0) == 0) {
        fields_set_index.erase(*it);
        it = fields_set.erase(it);
      } else {
        ++it;
      }
    }
  }
};

std::string TypeError(std::string_view what, std::string_view struct_name,
                      std::string_view field_path, std::string_view go_type) {
  return absl::StrCat("json: cannot unmarshal ", AV(what), " into Go struct field ",
                      AV(struct_name), ".", AV(field_path), " of type ", AV(go_type));
}

std::string FieldError(std::string_view path, std::string_view msg) {
  return absl::StrCat("field \"", AV(path), "\": ", AV(msg));
}

std::string Join(const std::string& parent, std::string_view name) {
  if (parent.empty()) return std::string(name);
  return absl::StrCat(parent, ".", AV(name));
}

// Location of a value being decoded: `path` names it with list indices (strict errors),
// `fpath` without (Go's type errors, fields_set), `struct_name` is the Go struct whose field it
// belongs to, and `record` tells whether it is recorded in fields_set.
struct Loc {
  std::string path;
  std::string fpath;
  const char* struct_name;
  bool record;
};

void DecodeStruct(const Value& obj, const StructDesc& desc, void* target, const Loc& loc, bool top,
                  DecodeState* st);

bool DecodeInt(const Value& v, const Loc& loc, const char* go_type, int64_t min, int64_t max,
               int64_t* out, DecodeState* st) {
  if (v.type != Value::Type::kNumber) {
    st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, go_type));
    return false;
  }
  int64_t n = 0;
  if (!ParseDecimalInt(v.text, &n) || n < min || n > max) {
    st->Save(TypeError(absl::StrCat("number ", v.text), loc.struct_name, loc.fpath, go_type));
    return false;
  }
  *out = n;
  return true;
}

bool DecodeString(const Value& v, const Loc& loc, const char* go_type, std::string* out,
                  DecodeState* st) {
  if (v.type == Value::Type::kNull) return true;  // no-op, as Go
  if (v.type != Value::Type::kString) {
    st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, go_type));
    return false;
  }
  *out = v.text;
  return true;
}

void DecodeStringList(const Value& v, const Loc& loc, const char* go_type,
                      std::vector<std::string>* out, DecodeState* st) {
  if (v.type != Value::Type::kArray) {
    st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, go_type));
    return;
  }
  out->clear();
  for (const Value& item : v.items) {
    std::string s;
    DecodeString(item, loc, "string", &s, st);
    out->push_back(std::move(s));
  }
}

absl::StatusOr<api::Quantity> ParseQuantityValue(const Value& v) {
  std::string raw = v.type == Value::Type::kString ? v.text : Raw(v);
  size_t b = raw.find_first_not_of(" \t\r\n\v\f");
  size_t e = raw.find_last_not_of(" \t\r\n\v\f");
  raw = b == std::string::npos ? "" : raw.substr(b, e - b + 1);
  return api::Quantity::Parse(raw);
}

// metav1.Time: RFC3339 (time.Parse also takes fractional seconds).
absl::StatusOr<absl::Time> ParseRFC3339(const std::string& s) {
  absl::Time t;
  std::string err;
  if (absl::ParseTime("%Y-%m-%dT%H:%M:%E*S%Ez", s, &t, &err)) return t;
  return absl::InvalidArgumentError(absl::StrCat("parsing time ", GoQuote(s),
                                                 " as \"2006-01-02T15:04:05Z07:00\": cannot parse ",
                                                 GoQuote(s), " as \"2006\""));
}

void DecodeField(const Field& f, const Value& v, void* m, const Loc& loc, DecodeState* st) {
  if (v.type == Value::Type::kNull) {
    switch (f.kind) {
      case Kind::kDuration:
        if (f.go_pointer) {
          *static_cast<absl::Duration*>(m) = absl::ZeroDuration();
          if (loc.record) st->MarkUnset(loc.fpath);
        } else {
          // metav1.Duration.UnmarshalJSON("null") parses "".
          st->Abort(FieldError(loc.path, "time: invalid duration \"\""));
        }
        return;
      case Kind::kFlushFrequency:
        static_cast<LoggingConfiguration*>(m)->flush_frequency_as_string = false;
        return;
      case Kind::kQuantity:
        *static_cast<api::Quantity*>(m) = api::Quantity();
        return;
      case Kind::kTime:
        static_cast<std::optional<absl::Time>*>(m)->reset();
        return;
      case Kind::kOptInt32:
        static_cast<std::optional<int32_t>*>(m)->reset();
        if (loc.record) st->MarkUnset(loc.fpath);
        return;
      case Kind::kOptString:
        static_cast<std::optional<std::string>*>(m)->reset();
        if (loc.record) st->MarkUnset(loc.fpath);
        return;
      case Kind::kOptStruct:
        f.opt->reset(m);
        if (loc.record) st->MarkUnset(loc.fpath);
        return;
      case Kind::kStruct:
        return;
      case Kind::kStringList:
        static_cast<std::vector<std::string>*>(m)->clear();
        if (loc.record) st->MarkUnset(loc.fpath);
        return;
      case Kind::kStringMap:
        static_cast<std::map<std::string, std::string>*>(m)->clear();
        if (loc.record) st->MarkUnset(loc.fpath);
        return;
      case Kind::kBoolMap:
        static_cast<std::map<std::string, bool>*>(m)->clear();
        if (loc.record) st->MarkUnset(loc.fpath);
        return;
      case Kind::kStringListMap:
        static_cast<std::map<std::string, std::vector<std::string>>*>(m)->clear();
        if (loc.record) st->MarkUnset(loc.fpath);
        return;
      case Kind::kQuantityMap:
        static_cast<std::map<std::string, api::Quantity>*>(m)->clear();
        if (loc.record) st->MarkUnset(loc.fpath);
        return;
      case Kind::kStructList:
        f.list->clear(m);
        if (loc.record) st->MarkUnset(loc.fpath);
        return;
      default:
        // Scalars: a Go pointer becomes nil (defaulting decides), a value is left alone.
        if (f.go_pointer) {
          switch (f.kind) {
            case Kind::kBool:
              *static_cast<bool*>(m) = false;
              break;
            case Kind::kInt32:
              *static_cast<int32_t*>(m) = 0;
              break;
            case Kind::kInt64:
              *static_cast<int64_t*>(m) = 0;
              break;
            case Kind::kDouble:
              *static_cast<double*>(m) = 0;
              break;
            case Kind::kString:
              static_cast<std::string*>(m)->clear();
              break;
            default:
              break;
          }
          if (loc.record) st->MarkUnset(loc.fpath);
        }
        return;
    }
  }

  bool ok = true;
  switch (f.kind) {
    case Kind::kBool:
      if (v.type == Value::Type::kBool) {
        *static_cast<bool*>(m) = v.b;
      } else {
        st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
        ok = false;
      }
      break;
    case Kind::kInt32: {
      int64_t n = 0;
      ok = DecodeInt(v, loc, f.go_type, std::numeric_limits<int32_t>::min(),
                     std::numeric_limits<int32_t>::max(), &n, st);
      if (ok) *static_cast<int32_t*>(m) = static_cast<int32_t>(n);
      break;
    }
    case Kind::kInt64: {
      int64_t n = 0;
      ok = DecodeInt(v, loc, f.go_type, std::numeric_limits<int64_t>::min(),
                     std::numeric_limits<int64_t>::max(), &n, st);
      if (ok) *static_cast<int64_t*>(m) = n;
      break;
    }
    case Kind::kUint32: {
      uint64_t n = 0;
      if (v.type != Value::Type::kNumber) {
        st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
        ok = false;
      } else if (!ParseDecimalUint(v.text, &n) || n > std::numeric_limits<uint32_t>::max()) {
        st->Save(TypeError(absl::StrCat("number ", v.text), loc.struct_name, loc.fpath, f.go_type));
        ok = false;
      } else {
        *static_cast<uint32_t*>(m) = static_cast<uint32_t>(n);
      }
      break;
    }
    case Kind::kDouble:
      if (v.type != Value::Type::kNumber) {
        st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
        ok = false;
      } else {
        double d = std::strtod(v.text.c_str(), nullptr);
        if (std::isinf(d)) {
          st->Save(
              TypeError(absl::StrCat("number ", v.text), loc.struct_name, loc.fpath, f.go_type));
          ok = false;
        } else {
          *static_cast<double*>(m) = d;
        }
      }
      break;
    case Kind::kString:
      ok = DecodeString(v, loc, f.go_type, static_cast<std::string*>(m), st);
      break;
    case Kind::kOptString: {
      std::string s;
      ok = DecodeString(v, loc, f.go_type, &s, st);
      if (ok) *static_cast<std::optional<std::string>*>(m) = std::move(s);
      break;
    }
    case Kind::kOptInt32: {
      int64_t n = 0;
      ok = DecodeInt(v, loc, f.go_type, std::numeric_limits<int32_t>::min(),
                     std::numeric_limits<int32_t>::max(), &n, st);
      if (ok) *static_cast<std::optional<int32_t>*>(m) = static_cast<int32_t>(n);
      break;
    }
    case Kind::kDuration: {
      // metav1.Duration.UnmarshalJSON: a JSON string parsed by time.ParseDuration.
      if (v.type != Value::Type::kString) {
        st->Abort(TypeError(KindWord(v), loc.struct_name, loc.fpath, "string"));
        return;
      }
      auto d = ParseGoDuration(v.text);
      if (!d.ok()) {
        st->Abort(FieldError(loc.path, SV(d.status().message())));
        return;
      }
      *static_cast<absl::Duration*>(m) = *d;
      break;
    }
    case Kind::kFlushFrequency: {
      // TimeOrMetaDuration: "5s" (metav1.Duration) or an integer number of nanoseconds.
      auto* logging = static_cast<LoggingConfiguration*>(m);
      if (v.type == Value::Type::kString) {
        logging->flush_frequency_as_string = true;
        auto d = ParseGoDuration(v.text);
        if (!d.ok()) {
          st->Abort(FieldError(loc.path, SV(d.status().message())));
          return;
        }
        logging->flush_frequency = *d;
      } else {
        logging->flush_frequency_as_string = false;
        int64_t n = 0;
        if (v.type != Value::Type::kNumber || !ParseDecimalInt(v.text, &n)) {
          std::string what = v.type == Value::Type::kNumber ? absl::StrCat("number ", v.text)
                                                            : std::string(KindWord(v));
          st->Abort(FieldError(loc.path, absl::StrCat("invalid duration ", GoQuote(Raw(v)),
                                                      ": json: cannot unmarshal ", what,
                                                      " into Go value of type time.Duration")));
          return;
        }
        logging->flush_frequency = absl::Nanoseconds(n);
      }
      break;
    }
    case Kind::kQuantity: {
      auto q = ParseQuantityValue(v);
      if (!q.ok()) {
        st->Abort(FieldError(loc.path, SV(q.status().message())));
        return;
      }
      *static_cast<api::Quantity*>(m) = *q;
      break;
    }
    case Kind::kTime: {
      if (v.type != Value::Type::kString) {
        st->Abort(TypeError(KindWord(v), loc.struct_name, loc.fpath, "string"));
        return;
      }
      auto t = ParseRFC3339(v.text);
      if (!t.ok()) {
        st->Abort(FieldError(loc.path, SV(t.status().message())));
        return;
      }
      *static_cast<std::optional<absl::Time>*>(m) = *t;
      break;
    }
    case Kind::kStringList:
      DecodeStringList(v, loc, f.go_type, static_cast<std::vector<std::string>*>(m), st);
      ok = v.type == Value::Type::kArray;
      break;
    case Kind::kStringMap:
    case Kind::kBoolMap:
    case Kind::kStringListMap:
    case Kind::kQuantityMap: {
      if (v.type != Value::Type::kObject) {
        st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
        ok = false;
        break;
      }
      std::set<std::string> seen;
      for (const auto& [key, item] : v.members) {
        if (st->aborted()) return;
        if (!seen.insert(key).second) {
          st->strict_errors.push_back(
              absl::StrCat("duplicate field \"", Join(loc.path, key), "\""));
        }
        if (f.kind == Kind::kStringMap) {
          std::string s;
          DecodeString(item, loc, "string", &s, st);
          (*static_cast<std::map<std::string, std::string>*>(m))[key] = std::move(s);
        } else if (f.kind == Kind::kBoolMap) {
          bool b = false;
          if (item.type == Value::Type::kBool) {
            b = item.b;
          } else if (item.type != Value::Type::kNull) {
            st->Save(TypeError(KindWord(item), loc.struct_name, loc.fpath, "bool"));
          }
          (*static_cast<std::map<std::string, bool>*>(m))[key] = b;
        } else if (f.kind == Kind::kStringListMap) {
          std::vector<std::string> list;
          if (item.type != Value::Type::kNull) {
            DecodeStringList(item, loc, "[]string", &list, st);
          }
          (*static_cast<std::map<std::string, std::vector<std::string>>*>(m))[key] =
              std::move(list);
        } else {
          auto q = ParseQuantityValue(item);
          if (!q.ok()) {
            st->Abort(FieldError(Join(loc.path, key), SV(q.status().message())));
            return;
          }
          (*static_cast<std::map<std::string, api::Quantity>*>(m))[key] = *q;
        }
      }
      break;
    }
    case Kind::kStruct:
    case Kind::kOptStruct: {
      if (v.type != Value::Type::kObject) {
        st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
        return;
      }
      void* target = f.kind == Kind::kOptStruct ? f.opt->emplace(m) : m;
      size_t before = st->fields_set.size();
      DecodeStruct(v, *f.sub, target, loc, false, st);
      // An object with nothing known inside still sets the struct itself.
      if (loc.record && st->fields_set.size() == before && !st->aborted()) {
        st->MarkSet(loc.fpath);
      }
      return;
    }
    case Kind::kStructList: {
      if (v.type != Value::Type::kArray) {
        st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
        ok = false;
        break;
      }
      std::string elem_type = std::string(f.go_type).rfind("[]", 0) == 0
                                  ? std::string(f.go_type).substr(2)
                                  : absl::StrCat("v1.", f.sub->go_name);
      f.list->clear(m);
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (st->aborted()) return;
        const Value& item = v.items[i];
        void* elem = f.list->append(m);
        if (item.type == Value::Type::kNull) continue;
        if (item.type != Value::Type::kObject) {
          st->Save(TypeError(KindWord(item), loc.struct_name, loc.fpath, elem_type));
          continue;
        }
        Loc elem_loc{absl::StrCat(loc.path, "[", i, "]"), loc.fpath, f.sub->go_name, false};
        DecodeStruct(item, *f.sub, elem, elem_loc, false, st);
      }
      break;
    }
  }
  if (ok && loc.record && !st->aborted()) st->MarkSet(loc.fpath);
}

void DecodeStruct(const Value& obj, const StructDesc& desc, void* target, const Loc& loc, bool top,
                  DecodeState* st) {
  std::set<std::string> seen;
  for (const auto& [key, v] : obj.members) {
    if (st->aborted()) return;
    std::string path = Join(loc.path, key);
    if (!seen.insert(key).second) {
      st->strict_errors.push_back(absl::StrCat("duplicate field \"", path, "\""));
    }
    if (top && (key == "apiVersion" || key == "kind")) continue;  // TypeMeta
    const Field* field = nullptr;
    for (const Field& f : desc.fields) {
      if (key == f.json) {
        field = &f;
        break;
      }
    }
    if (field == nullptr) {
      st->strict_errors.push_back(absl::StrCat("unknown field \"", path, "\""));
      continue;
    }
    Loc child{path, Join(loc.fpath, key), desc.go_name, loc.record};
    DecodeField(*field, v, field->member(target), child, st);
  }
}

// ---------------------------------------------------------------------------------------------
// Paths (Go path/filepath on Linux).

std::string CleanPath(std::string_view p) {
  if (p.empty()) return ".";
  bool rooted = p[0] == '/';
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view part = p.substr(i, j - i);
    i = j + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!rooted) {
        parts.push_back(part);
      }
      continue;
    }
    parts.push_back(part);
  }
  std::string out = rooted ? "/" : "";
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k) out += '/';
    out += parts[k];
  }
  if (out.empty()) return ".";
  return out;
}

std::string AbsPath(std::string_view name) {
  if (!name.empty() && name[0] == '/') return CleanPath(name);
  std::error_code ec;
  std::filesystem::path cwd = std::filesystem::current_path(ec);
  std::string base = ec ? "/" : cwd.string();
  return CleanPath(absl::StrCat(base, "/", AV(name)));
}

std::string DirOf(const std::string& abs) {
  size_t slash = abs.rfind('/');
  if (slash == std::string::npos) return ".";
  return CleanPath(abs.substr(0, slash + 1));
}

void ResolveRelative(std::string* path, const std::string& root) {
  if (!path->empty() && (*path)[0] != '/') *path = CleanPath(absl::StrCat(root, "/", *path));
}

// ---------------------------------------------------------------------------------------------

std::string ChainError(std::string_view name, std::string_view detail) {
  return absl::StrCat("failed to load kubelet config file, path: ", AV(name),
                      ", error: failed to load Kubelet config file ", AV(name), ", error ",
                      AV(detail));
}

struct RegisteredKind {
  const char* version;
  const char* kind;
};
constexpr RegisteredKind kRegistered[] = {
    {"v1beta1", "KubeletConfiguration"},     {"v1beta1", "SerializedNodeConfigSource"},
    {"v1beta1", "CredentialProviderConfig"}, {"v1alpha1", "CredentialProviderConfig"},
    {"v1", "CredentialProviderConfig"},
};

// The decoder proper; errors are the codec-level text (without the file chain).
absl::StatusOr<LoadedConfig> DecodeImpl(std::string_view data, std::string_view source_name,
                                        const DecodeOptions& options) {
  // The universal deserializer treats data starting with '{' as JSON, anything else as YAML.
  size_t first = data.find_first_not_of(" \t\r\n\v\f");
  bool is_json = first != std::string_view::npos && data[first] == '{';

  Value root;
  std::vector<std::string> yaml_duplicates;
  if (is_json) {
    JsonBuilder builder(&root);
    bool ok = false;
    try {
      ok = nlohmann::json::sax_parse(data.begin(), data.end(), &builder);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(
          "failed to decode: couldn't get version/kind; json parse error: ", e.what()));
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "failed to decode: couldn't get version/kind; json parse error: ", builder.error()));
    }
  } else {
    YamlContext yctx;
    try {
      YAML::Node node = YAML::Load(std::string(data));
      root = FromYaml(node, &yctx, 0);
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to decode: error converting YAML to JSON: yaml: line ",
                       e.mark.line + 1, ": ", e.msg));
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to decode: error converting YAML to JSON: yaml: ", e.what()));
    }
    if (!yctx.fatal.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to decode: error converting YAML to JSON: ", yctx.fatal));
    }
    yaml_duplicates = std::move(yctx.duplicate_errors);
  }

  // TypeMeta, as SimpleMetaFactory.Interpret and the serializer check it.
  static constexpr char kFindKindType[] =
      "struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
      "\"json:\\\"kind,omitempty\\\"\" }";
  std::string api_version, kind, meta_error;
  if (root.type == Value::Type::kObject) {
    for (const auto& [key, v] : root.members) {
      std::string* target = key == "apiVersion" ? &api_version : key == "kind" ? &kind : nullptr;
      if (target == nullptr || v.type == Value::Type::kNull) continue;
      if (v.type != Value::Type::kString) {
        if (meta_error.empty()) {
          meta_error = absl::StrCat("json: cannot unmarshal ", KindWord(v),
                                    " into Go struct field .", key, " of type string");
        }
        continue;
      }
      *target = v.text;
    }
  } else if (root.type != Value::Type::kNull) {
    meta_error = absl::StrCat("json: cannot unmarshal ", KindWord(root), " into Go value of type ",
                              kFindKindType);
  }
  if (!meta_error.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "failed to decode: couldn't get version/kind; json parse error: ", meta_error));
  }
  std::string group, version;
  if (!api_version.empty() && api_version != "/") {
    size_t slashes = std::count(api_version.begin(), api_version.end(), '/');
    if (slashes == 0) {
      version = api_version;
    } else if (slashes == 1) {
      size_t i = api_version.find('/');
      group = api_version.substr(0, i);
      version = api_version.substr(i + 1);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to decode: unexpected GroupVersion string: ", api_version));
    }
  }
  if (kind.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to decode: Object 'Kind' is missing in '", AV(data), "'"));
  }
  if (version.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to decode: Object 'apiVersion' is missing in '", AV(data), "'"));
  }
  std::string gv = group.empty() ? version : absl::StrCat(group, "/", version);
  bool registered = false;
  if (group == kKubeletConfigGroup) {
    for (const RegisteredKind& r : kRegistered) {
      if (version == r.version && kind == r.kind) registered = true;
    }
  }
  if (!registered) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to decode: no kind \"", kind, "\" is registered for version \"", gv,
                     "\" in scheme \"pkg/kubelet/apis/config/scheme/scheme.go:33\""));
  }
  if (version != "v1beta1" || kind != kKubeletConfigKind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "failed to cast object to KubeletConfiguration, unexpected type: ", gv, ", Kind=", kind));
  }

  LoadedConfig out;
  DecodeState st;
  DecodeStruct(root, schema::KubeletConfigurationDesc(), &out.config,
               Loc{"", "", "KubeletConfiguration", true}, true, &st);
  if (st.aborted()) {
    return absl::InvalidArgumentError(absl::StrCat("failed to decode: ", st.abort_error));
  }
  if (!st.saved_error.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("failed to decode: ", st.saved_error));
  }
  std::vector<std::string> strict;
  if (!yaml_duplicates.empty()) {
    strict.push_back(absl::StrCat("error converting YAML to JSON: yaml: unmarshal errors:\n  ",
                                  absl::StrJoin(yaml_duplicates, "\n  ")));
  }
  strict.insert(strict.end(), st.strict_errors.begin(), st.strict_errors.end());
  if (!strict.empty()) {
    out.strict_decoding_error =
        absl::StrCat("strict decoding error: ", absl::StrJoin(strict, ", "));
    if (options.strict) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to decode: ", out.strict_decoding_error));
    }
    if (options.log_lenient_fallback) {
      KLOG_INFO("Using lenient decoding as strict decoding failed", "err",
                out.strict_decoding_error);
    }
  }
  out.fields_set = std::move(st.fields_set);

  // The universal decoder defaults the v1beta1 object before converting it.
  SetDefaults(&out.config, out.fields_set);
  // configfiles: make all paths absolute.
  if (!source_name.empty()) {
    std::string root_dir = DirOf(AbsPath(source_name));
    KubeletConfiguration& c = out.config;
    for (std::string* p : {&c.static_pod_path, &c.authentication.x509.client_ca_file,
                           &c.tls_cert_file, &c.tls_private_key_file, &c.resolv_conf}) {
      ResolveRelative(p, root_dir);
    }
  }
  // server.go loadConfigFile: evictionHard has OS-specific defaults, applied when unset.
  if (std::find(out.fields_set.begin(), out.fields_set.end(), "evictionHard") ==
      out.fields_set.end()) {
    out.config.eviction_hard = DefaultEvictionHard();
  }
  return out;
}

std::string ErrnoText(int err) {
  std::string s = std::strerror(err);
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

}  // namespace

absl::StatusOr<LoadedConfig> DecodeKubeletConfiguration(std::string_view data,
                                                        std::string_view source_name,
                                                        const DecodeOptions& options) {
  absl::StatusOr<LoadedConfig> out;
  try {
    out = DecodeImpl(data, source_name, options);
  } catch (const std::exception& e) {
    out = absl::InternalError(absl::StrCat("failed to decode: ", e.what()));
  }
  if (!out.ok()) {
    return absl::Status(out.status().code(), ChainError(source_name, SV(out.status().message())));
  }
  return out;
}

absl::StatusOr<LoadedConfig> LoadKubeletConfigFile(const std::string& path,
                                                   const DecodeOptions& options) {
  std::string abs = AbsPath(path);
  std::string data;
  int fd = ::open(abs.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return absl::Status(
        err == ENOENT ? absl::StatusCode::kNotFound : absl::StatusCode::kInvalidArgument,
        ChainError(path, absl::StrCat("failed to read kubelet config file \"", abs,
                                      "\", error: open ", abs, ": ", ErrnoText(err))));
  }
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return absl::InvalidArgumentError(
          ChainError(path, absl::StrCat("failed to read kubelet config file \"", abs,
                                        "\", error: read ", abs, ": ", ErrnoText(err))));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (data.empty()) {
    return absl::InvalidArgumentError(
        ChainError(path, absl::StrCat("kubelet config file \"", abs, "\" was empty")));
  }
  return DecodeKubeletConfiguration(data, path, options);
}

}  // namespace kubelet::config
