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
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "api/go_json.h"
#include "api/quantity.h"
#include "api/yaml.h"
#include "common/duration.h"
#include "common/go_compat.h"
#include "common/log.h"
#include "common/strings.h"
#include "config/kubelet_configuration.h"
#include "config/kubelet_configuration_fields.h"
#include "nlohmann/json.hpp"

namespace kubelet::config {
namespace {

using api::codec::Fields;
using api::codec::kGoPointer;

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
      api::AppendGoString(out, v.text);
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
        api::AppendGoString(out, v.members[i].first);
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
// Go number parsing.

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
// Struct decoding over the field tables, with Go encoding/json semantics: type errors are
// remembered (the first one is reported) and decoding goes on; errors from UnmarshalJSON methods
// (durations, quantities, times) stop it. Unknown and duplicate fields are strict errors.

struct DecodeState {
  std::vector<std::string> strict_errors;
  std::string saved_error;  // first type error
  std::string abort_error;  // stops decoding
  std::vector<std::string> fields_set;
  std::set<std::string> fields_set_index;
  // A drop-in (--config-dir) is merged: null is a no-op at any depth (upstream prunes nulls
  // from the merge patch) and unknown fields are ignored.
  bool merge = false;

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
  std::string_view struct_name;
  bool record;
};

// Go's name of a member type where the table does not give one.
template <typename M>
constexpr std::string_view GoTypeName() {
  if constexpr (std::is_same_v<M, bool>) {
    return "bool";
  } else if constexpr (std::is_same_v<M, double>) {
    return "float64";
  } else if constexpr (std::is_integral_v<M>) {
    return api::codec::IntName<M>();
  } else if constexpr (std::is_same_v<M, std::string>) {
    return "string";
  } else if constexpr (std::is_same_v<M, std::vector<std::string>>) {
    return "[]string";
  } else if constexpr (std::is_same_v<M, std::map<std::string, std::string>>) {
    return "map[string]string";
  } else if constexpr (std::is_same_v<M, std::map<std::string, bool>>) {
    return "map[string]bool";
  } else if constexpr (std::is_same_v<M, std::map<std::string, std::vector<std::string>>>) {
    return "map[string][]string";
  } else if constexpr (api::codec::IsOptional<M>::value) {
    return GoTypeName<typename M::value_type>();
  } else {
    return "";  // named in the table
  }
}

// What a table entry tells the decoder about its member.
struct GoField {
  uint32_t opts;
  std::string_view go_type;
  bool pointer() const { return (opts & kGoPointer) != 0; }
};

bool DecodeInt(const Value& v, const Loc& loc, std::string_view go_type, int64_t min, int64_t max,
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

bool DecodeString(const Value& v, const Loc& loc, std::string_view go_type, std::string* out,
                  DecodeState* st) {
  if (v.type == Value::Type::kNull) return true;  // no-op, as Go
  if (v.type != Value::Type::kString) {
    st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, go_type));
    return false;
  }
  *out = v.text;
  return true;
}

void DecodeStringList(const Value& v, const Loc& loc, std::string_view go_type,
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
absl::StatusOr<api::Time> ParseRFC3339(const std::string& s) {
  absl::Time t;
  std::string err;
  if (absl::ParseTime("%Y-%m-%dT%H:%M:%E*S%Ez", s, &t, &err)) {
    const int64_t secs = absl::ToUnixSeconds(t);
    return api::Time::FromUnix(
        secs, static_cast<int32_t>(absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(secs))));
  }
  return absl::InvalidArgumentError(absl::StrCat("parsing time ", log::Quote(s),
                                                 " as \"2006-01-02T15:04:05Z07:00\": cannot parse ",
                                                 log::Quote(s), " as \"2006\""));
}

// Go sets a JSON null: a pointer (or slice, map) becomes nil, so defaulting decides again; a
// plain value is left alone; metav1.Duration's UnmarshalJSON is called with "null".
template <typename M>
void DecodeNull(const GoField& f, M* m, const Loc& loc, DecodeState* st) {
  auto unset = [&] {
    if (loc.record) st->MarkUnset(loc.fpath);
  };
  if constexpr (std::is_same_v<M, absl::Duration>) {
    if (f.pointer()) {
      *m = absl::ZeroDuration();
      unset();
    } else {
      st->Abort(FieldError(loc.path, "time: invalid duration \"\""));
    }
  } else if constexpr (std::is_same_v<M, TimeOrMetaDuration>) {
    m->as_string = false;
  } else if constexpr (std::is_same_v<M, api::Quantity>) {
    *m = api::Quantity();
  } else if constexpr (api::codec::IsOptional<M>::value || api::codec::IsVector<M>::value ||
                       api::codec::IsStringMap<M>::value) {
    *m = M{};
    unset();
  } else if constexpr (api::codec::Described<M>) {
    // A struct value: nothing to do.
  } else {
    if (f.pointer()) {
      *m = M{};
      unset();
    }
  }
}

template <typename T>
void DecodeStruct(const Value& obj, T* target, const Loc& loc, bool top, DecodeState* st);

// Decodes a non-null value; false when nothing was stored (a type error, or decoding stopped).
template <typename M>
bool DecodeInto(const GoField& f, const Value& v, M* m, const Loc& loc, DecodeState* st) {
  if constexpr (std::is_same_v<M, bool>) {
    if (v.type != Value::Type::kBool) {
      st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
      return false;
    }
    *m = v.b;
    return true;
  } else if constexpr (std::is_same_v<M, uint32_t>) {
    uint64_t n = 0;
    if (v.type != Value::Type::kNumber) {
      st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
      return false;
    }
    if (!ParseDecimalUint(v.text, &n) || n > std::numeric_limits<uint32_t>::max()) {
      st->Save(TypeError(absl::StrCat("number ", v.text), loc.struct_name, loc.fpath, f.go_type));
      return false;
    }
    *m = static_cast<uint32_t>(n);
    return true;
  } else if constexpr (std::is_integral_v<M>) {
    int64_t n = 0;
    if (!DecodeInt(v, loc, f.go_type, std::numeric_limits<M>::min(), std::numeric_limits<M>::max(),
                   &n, st)) {
      return false;
    }
    *m = static_cast<M>(n);
    return true;
  } else if constexpr (std::is_same_v<M, double>) {
    if (v.type != Value::Type::kNumber) {
      st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
      return false;
    }
    const double d = std::strtod(v.text.c_str(), nullptr);
    if (std::isinf(d)) {
      st->Save(TypeError(absl::StrCat("number ", v.text), loc.struct_name, loc.fpath, f.go_type));
      return false;
    }
    *m = d;
    return true;
  } else if constexpr (std::is_same_v<M, std::string>) {
    return DecodeString(v, loc, f.go_type, m, st);
  } else if constexpr (std::is_same_v<M, absl::Duration>) {
    // metav1.Duration.UnmarshalJSON: a JSON string parsed by time.ParseDuration.
    if (v.type != Value::Type::kString) {
      st->Abort(TypeError(KindWord(v), loc.struct_name, loc.fpath, "string"));
      return false;
    }
    absl::StatusOr<absl::Duration> d = ParseGoDuration(v.text);
    if (!d.ok()) {
      st->Abort(FieldError(loc.path, SV(d.status().message())));
      return false;
    }
    *m = *d;
    return true;
  } else if constexpr (std::is_same_v<M, TimeOrMetaDuration>) {
    // "5s" (metav1.Duration) or an integer number of nanoseconds.
    if (v.type == Value::Type::kString) {
      m->as_string = true;
      absl::StatusOr<absl::Duration> d = ParseGoDuration(v.text);
      if (!d.ok()) {
        st->Abort(FieldError(loc.path, SV(d.status().message())));
        return false;
      }
      m->duration = *d;
      return true;
    }
    m->as_string = false;
    int64_t n = 0;
    if (v.type != Value::Type::kNumber || !ParseDecimalInt(v.text, &n)) {
      std::string what = v.type == Value::Type::kNumber ? absl::StrCat("number ", v.text)
                                                        : std::string(KindWord(v));
      st->Abort(FieldError(loc.path, absl::StrCat("invalid duration ", log::Quote(Raw(v)),
                                                  ": json: cannot unmarshal ", what,
                                                  " into Go value of type time.Duration")));
      return false;
    }
    m->duration = absl::Nanoseconds(n);
    return true;
  } else if constexpr (std::is_same_v<M, api::Quantity>) {
    absl::StatusOr<api::Quantity> q = ParseQuantityValue(v);
    if (!q.ok()) {
      st->Abort(FieldError(loc.path, SV(q.status().message())));
      return false;
    }
    *m = *q;
    return true;
  } else if constexpr (std::is_same_v<M, api::Time>) {
    if (v.type != Value::Type::kString) {
      st->Abort(TypeError(KindWord(v), loc.struct_name, loc.fpath, "string"));
      return false;
    }
    absl::StatusOr<api::Time> t = ParseRFC3339(v.text);
    if (!t.ok()) {
      st->Abort(FieldError(loc.path, SV(t.status().message())));
      return false;
    }
    *m = *t;
    return true;
  } else if constexpr (api::codec::IsOptional<M>::value) {
    typename M::value_type x{};
    if (!DecodeInto(f, v, &x, loc, st)) return false;
    *m = std::move(x);
    return true;
  } else if constexpr (std::is_same_v<M, std::vector<std::string>>) {
    DecodeStringList(v, loc, f.go_type, m, st);
    return v.type == Value::Type::kArray;
  } else if constexpr (api::codec::IsVector<M>::value) {
    using Elem = typename M::value_type;
    if (v.type != Value::Type::kArray) {
      st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
      return false;
    }
    const std::string elem_type = f.go_type.substr(0, 2) == "[]"
                                      ? std::string(f.go_type.substr(2))
                                      : absl::StrCat("v1.", AV(Fields<Elem>::kGoName));
    m->clear();
    for (size_t i = 0; i < v.items.size(); ++i) {
      if (st->aborted()) return true;
      const Value& item = v.items[i];
      Elem* elem = &m->emplace_back();
      if (item.type == Value::Type::kNull) continue;
      if (item.type != Value::Type::kObject) {
        st->Save(TypeError(KindWord(item), loc.struct_name, loc.fpath, elem_type));
        continue;
      }
      Loc elem_loc{absl::StrCat(loc.path, "[", i, "]"), loc.fpath, Fields<Elem>::kGoName, false};
      DecodeStruct(item, elem, elem_loc, false, st);
    }
    return true;
  } else if constexpr (api::codec::IsStringMap<M>::value) {
    using V = typename M::mapped_type;
    if (v.type != Value::Type::kObject) {
      st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
      return false;
    }
    std::set<std::string> seen;
    for (const auto& [key, item] : v.members) {
      if (st->aborted()) return true;
      if (!seen.insert(key).second) {
        st->strict_errors.push_back(absl::StrCat("duplicate field \"", Join(loc.path, key), "\""));
      }
      if (st->merge && item.type == Value::Type::kNull) continue;
      V x{};
      if constexpr (std::is_same_v<V, std::string>) {
        DecodeString(item, loc, "string", &x, st);
      } else if constexpr (std::is_same_v<V, bool>) {
        if (item.type == Value::Type::kBool) {
          x = item.b;
        } else if (item.type != Value::Type::kNull) {
          st->Save(TypeError(KindWord(item), loc.struct_name, loc.fpath, "bool"));
        }
      } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
        if (item.type != Value::Type::kNull) DecodeStringList(item, loc, "[]string", &x, st);
      } else {
        static_assert(std::is_same_v<V, api::Quantity>, "unsupported map value");
        absl::StatusOr<api::Quantity> q = ParseQuantityValue(item);
        if (!q.ok()) {
          st->Abort(FieldError(Join(loc.path, key), SV(q.status().message())));
          return true;
        }
        x = *q;
      }
      (*m)[key] = std::move(x);
    }
    return true;
  } else {
    static_assert(sizeof(M) == 0, "member type not supported by the configuration decoder");
    return false;
  }
}

template <typename M>
void DecodeField(const GoField& f, const Value& v, M* m, const Loc& loc, DecodeState* st) {
  if (v.type == Value::Type::kNull) {
    if (!st->merge) DecodeNull(f, m, loc, st);
    return;
  }
  constexpr bool kOptStruct = [] {
    if constexpr (api::codec::IsOptional<M>::value) {
      return api::codec::Described<typename M::value_type>;
    } else {
      return false;
    }
  }();
  if constexpr (api::codec::Described<M> || kOptStruct) {
    if (v.type != Value::Type::kObject) {
      st->Save(TypeError(KindWord(v), loc.struct_name, loc.fpath, f.go_type));
      return;
    }
    auto* target = [m] {
      if constexpr (kOptStruct) {
        if (!m->has_value()) m->emplace();
        return &**m;
      } else {
        return m;
      }
    }();
    const size_t before = st->fields_set.size();
    DecodeStruct(v, target, loc, false, st);
    // An object with nothing known inside still sets the struct itself.
    if (loc.record && st->fields_set.size() == before && !st->aborted()) st->MarkSet(loc.fpath);
  } else {
    if (DecodeInto(f, v, m, loc, st) && loc.record && !st->aborted()) st->MarkSet(loc.fpath);
  }
}

// Decodes `v` into the member of `target` that entry `f` names, when it names `key`.
template <typename T, typename M>
bool DecodeEntry(const api::codec::FieldSpec<T, M>& f, const std::string& key, const Value& v,
                 T* target, const Loc& loc, DecodeState* st) {
  if (f.name != key) return false;
  Loc child{Join(loc.path, key), Join(loc.fpath, key), Fields<T>::kGoName, loc.record};
  GoField gf{f.opts, f.go_type.empty() ? GoTypeName<M>() : f.go_type};
  DecodeField(gf, v, &(target->*f.member), child, st);
  return true;
}

template <typename T>
void DecodeStruct(const Value& obj, T* target, const Loc& loc, bool top, DecodeState* st) {
  std::set<std::string> seen;
  for (const Member& m : obj.members) {
    // Named, not structured bindings: clang 14 cannot capture those in the lambda below.
    const std::string& key = m.first;
    const Value& v = m.second;
    if (st->aborted()) return;
    if (!seen.insert(key).second) {
      st->strict_errors.push_back(absl::StrCat("duplicate field \"", Join(loc.path, key), "\""));
    }
    if (top && (key == "apiVersion" || key == "kind")) continue;  // TypeMeta
    const bool known = std::apply(
        [&](const auto&... f) { return (DecodeEntry(f, key, v, target, loc, st) || ...); },
        Fields<T>::kList);
    if (!known) {
      st->strict_errors.push_back(absl::StrCat("unknown field \"", Join(loc.path, key), "\""));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Paths (Go path/filepath on Linux).

std::string AbsPath(std::string_view name) {
  if (!name.empty() && name[0] == '/') return GoCleanPath(name);
  std::error_code ec;
  std::filesystem::path cwd = std::filesystem::current_path(ec);
  std::string base = ec ? "/" : cwd.string();
  return GoCleanPath(absl::StrCat(base, "/", AV(name)));
}

std::string DirOf(const std::string& abs) {
  size_t slash = abs.rfind('/');
  if (slash == std::string::npos) return ".";
  return GoCleanPath(abs.substr(0, slash + 1));
}

void ResolveRelative(std::string* path, const std::string& root) {
  if (!path->empty() && (*path)[0] != '/') *path = GoCleanPath(absl::StrCat(root, "/", *path));
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
  std::string json_text;  // YAML input, converted as sigs.k8s.io/yaml does
  if (!is_json) {
    absl::StatusOr<api::YamlJson> converted = api::YamlToJson(data);
    if (!converted.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to decode: ", converted.status().message()));
    }
    json_text = std::move(converted->json);
    yaml_duplicates = std::move(converted->duplicate_keys);
  }
  const std::string_view json = is_json ? data : std::string_view(json_text);
  JsonBuilder builder(&root);
  bool parsed = false;
  try {
    parsed = nlohmann::json::sax_parse(json.begin(), json.end(), &builder);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to decode: couldn't get version/kind; json parse error: ", e.what()));
  }
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "failed to decode: couldn't get version/kind; json parse error: ", builder.error()));
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
  if (root.type == Value::Type::kObject) {
    DecodeStruct(root, &out.config, Loc{"", "", "KubeletConfiguration", true}, true, &st);
  }
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

// A drop-in document merged over `config` (see DecodeKubeletConfigurationDropin).
absl::StatusOr<std::vector<std::string>> DecodeDropinImpl(std::string_view data,
                                                          KubeletConfiguration* config) {
  // Upstream converts every drop-in with sigs.k8s.io/yaml's ToJSON (JSON is YAML too).
  absl::StatusOr<api::YamlJson> converted = api::YamlToJson(data);
  if (!converted.ok()) return converted.status();
  Value root;
  JsonBuilder builder(&root);
  bool parsed = false;
  try {
    parsed = nlohmann::json::sax_parse(converted->json.begin(), converted->json.end(), &builder);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("json parse error: ", e.what()));
  }
  if (!parsed) return absl::InvalidArgumentError(builder.error());
  // jsonpatch.MergePatch refuses a patch that is neither an object nor an array; an array
  // replaces the document, which then cannot decode into the configuration.
  if (root.type == Value::Type::kArray) {
    return absl::InvalidArgumentError(
        "failed to unmarshal merged JSON into kubelet configuration: json: cannot unmarshal "
        "array into Go value of type config.KubeletConfiguration");
  }
  if (root.type != Value::Type::kObject) {
    return absl::InvalidArgumentError(
        "failed to merge drop-in and current config: Invalid JSON Patch");
  }
  DecodeState st;
  st.merge = true;
  DecodeStruct(root, config, Loc{"", "", "KubeletConfiguration", true}, true, &st);
  if (st.aborted()) return absl::InvalidArgumentError(st.abort_error);
  if (!st.saved_error.empty()) return absl::InvalidArgumentError(st.saved_error);
  return std::move(st.fields_set);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> DecodeKubeletConfigurationDropin(
    std::string_view data, KubeletConfiguration* config) {
  try {
    return DecodeDropinImpl(data, config);
  } catch (const std::exception& e) {
    return absl::InternalError(e.what());
  }
}

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
                                      "\", error: open ", abs, ": ", GoErrnoText(err))));
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
                                        "\", error: read ", abs, ": ", GoErrnoText(err))));
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
