#include "api/codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace kubelet::api {
namespace {

constexpr size_t kMaxValueInMessage = 200;  // chars of a bad value quoted in an error

void AppendHexEscape(std::string* out, unsigned c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(c >> shift) & 0xF]);
}

// Length of the valid UTF-8 sequence starting at s[i] (Go's utf8.DecodeRuneInString rules),
// 0 when the bytes there are not one.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  }
  if (len == 0 || i + len > s.size()) return 0;
  const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
  if (c1 < lo || c1 > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    const unsigned char ck = static_cast<unsigned char>(s[i + k]);
    if (ck < 0x80 || ck > 0xBF) return 0;
  }
  return len;
}

// A JSON string literal as Go's encoding/json writes it (HTML-safe).
void AppendGoString(std::string* out, std::string_view s) {
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out->append("\\\"");
          break;
        case '\\':
          out->append("\\\\");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        case '<':
        case '>':
        case '&':
          AppendHexEscape(out, c);
          break;
        default:
          if (c < 0x20) {
            AppendHexEscape(out, c);
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out->append("\\ufffd");
      ++i;
    } else if (len == 3 && c == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) & 0xFE) == 0xA8) {
      AppendHexEscape(out, 0x2028 + (static_cast<unsigned char>(s[i + 2]) - 0xA8));
      i += len;
    } else {
      out->append(s.substr(i, len));
      i += len;
    }
  }
  out->push_back('"');
}

// strconv.FormatFloat(f, 'f' or 'e', -1, 64) as encoding/json chooses between them.
void AppendGoFloat(std::string* out, double f) {
  if (!std::isfinite(f)) {  // Go refuses to encode these; null keeps the document valid
    out->append("null");
    return;
  }
  char buf[128];
  const double a = std::fabs(f);
  const bool exp = a != 0 && (a < 1e-6 || a >= 1e21);
  auto r = std::to_chars(buf, buf + sizeof(buf), f,
                         exp ? std::chars_format::scientific : std::chars_format::fixed);
  std::string s(buf, r.ptr);
  const size_t n = s.size();
  if (exp && n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') s.erase(n - 2, 1);
  out->append(s);
}

void AppendJson(std::string* out, const Json& j) {
  switch (j.type()) {
    case Json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) out->push_back(',');
        first = false;
        AppendGoString(out, it.key());
        out->push_back(':');
        AppendJson(out, it.value());
      }
      out->push_back('}');
      break;
    }
    case Json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const Json& e : j) {
        if (!first) out->push_back(',');
        first = false;
        AppendJson(out, e);
      }
      out->push_back(']');
      break;
    }
    case Json::value_t::string:
      AppendGoString(out, j.get_ref<const std::string&>());
      break;
    case Json::value_t::boolean:
      out->append(j.get<bool>() ? "true" : "false");
      break;
    case Json::value_t::number_integer:
      absl::StrAppend(out, j.get<int64_t>());
      break;
    case Json::value_t::number_unsigned:
      absl::StrAppend(out, j.get<uint64_t>());
      break;
    case Json::value_t::number_float:
      AppendGoFloat(out, j.get<double>());
      break;
    default:  // null, discarded, binary
      out->append("null");
  }
}

// Whether the {}/[] nesting outside string literals exceeds kMaxDepth.
bool TooDeep(std::string_view s) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > codec::kMaxDepth) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

std::string Describe(const Json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  std::string s = SerializeJson(v);
  if (s.size() > kMaxValueInMessage) s = s.substr(0, kMaxValueInMessage) + "...";
  return s;
}

absl::Status FieldError(const codec::Path& p, absl::string_view message) {
  const std::string path = p.String();
  if (path.empty()) return absl::InvalidArgumentError(message);
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

}  // namespace

std::string SerializeJson(const Json& j) {
  std::string out;
  AppendJson(&out, j);
  return out;
}

absl::StatusOr<Json> ParseJson(std::string_view text) {
  if (TooDeep(text)) return codec::DepthError();
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON: ", e.what()));
  }
}

namespace codec {

absl::Status DepthError() {
  return absl::InvalidArgumentError(absl::StrCat("JSON nested deeper than ", kMaxDepth, " levels"));
}

std::string Path::String() const {
  std::vector<const Path*> chain;
  for (const Path* n = this; n != nullptr; n = n->parent) chain.push_back(n);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Path& n = **it;
    if (n.index >= 0) {
      absl::StrAppend(&out, "[", n.index, "]");
    } else if (n.is_key) {
      absl::StrAppend(&out, "[", AV(n.name), "]");
    } else if (!n.name.empty()) {
      absl::StrAppend(&out, out.empty() ? "" : ".", AV(n.name));
    }
  }
  return out;
}

absl::Status TypeError(const Path& p, std::string_view want, const Json& got) {
  return FieldError(p, absl::StrCat("expected ", AV(want), ", got ", Describe(got)));
}

Json EncodeString(const std::string& s, uint32_t opts) {
  if ((opts & kBase64) != 0) return Json(absl::Base64Escape(AV(s)));
  return Json(s);
}

absl::Status DecodeString(const Json& j, const Path& p, uint32_t opts, std::string* out) {
  if (!j.is_string()) return TypeError(p, "string", j);
  const std::string& s = j.get_ref<const std::string&>();
  if ((opts & kBase64) == 0) {
    *out = s;
    return absl::OkStatus();
  }
  std::string bytes;
  if (!absl::Base64Unescape(AV(s), &bytes)) return FieldError(p, "illegal base64 data");
  *out = std::move(bytes);
  return absl::OkStatus();
}

absl::Status DecodeInt(const Json& j, const Path& p, int64_t lo, int64_t hi, int64_t* out) {
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) {
      return FieldError(p, absl::StrCat("value ", u, " out of range"));
    }
    *out = static_cast<int64_t>(u);
    return absl::OkStatus();
  }
  if (!j.is_number_integer()) return TypeError(p, "integer", j);
  const int64_t i = j.get<int64_t>();
  if (i < lo || i > hi) return FieldError(p, absl::StrCat("value ", i, " out of range"));
  *out = i;
  return absl::OkStatus();
}

absl::Status DecodeUint(const Json& j, const Path& p, uint64_t hi, uint64_t* out) {
  if (!j.is_number_integer()) return TypeError(p, "integer", j);
  if (!j.is_number_unsigned() && j.get<int64_t>() < 0) {
    return FieldError(p, absl::StrCat("value ", j.get<int64_t>(), " out of range"));
  }
  const uint64_t u = j.get<uint64_t>();
  if (u > hi) return FieldError(p, absl::StrCat("value ", u, " out of range"));
  *out = u;
  return absl::OkStatus();
}

Json EncodeLeaf(const Time& t) { return t.set ? Json(t.RFC3339()) : Json(nullptr); }

Json EncodeLeaf(const MicroTime& t) { return t.set ? Json(t.RFC3339Micro()) : Json(nullptr); }

Json EncodeLeaf(const Quantity& q) { return Json(q.String()); }

Json EncodeLeaf(const IntOrString& v) {
  return v.is_string() ? Json(v.str_val) : Json(static_cast<int64_t>(v.int_val));
}

Json EncodeLeaf(const RawJson& r) {
  if (r.empty()) return Json(nullptr);
  absl::StatusOr<Json> j = ParseJson(r.json);
  return j.ok() ? *std::move(j) : Json(nullptr);
}

absl::Status DecodeLeaf(const Json& j, const Path& p, Time* out) {
  if (!j.is_string()) return TypeError(p, "RFC3339 time string", j);
  absl::StatusOr<Time> t = Time::ParseRFC3339(j.get_ref<const std::string&>());
  if (!t.ok()) return FieldError(p, t.status().message());
  *out = *t;
  return absl::OkStatus();
}

absl::Status DecodeLeaf(const Json& j, const Path& p, MicroTime* out) {
  if (!j.is_string()) return TypeError(p, "RFC3339 time string", j);
  absl::StatusOr<MicroTime> t = MicroTime::Parse(j.get_ref<const std::string&>());
  if (!t.ok()) return FieldError(p, t.status().message());
  *out = *t;
  return absl::OkStatus();
}

absl::Status DecodeLeaf(const Json& j, const Path& p, Quantity* out) {
  std::string text;
  if (j.is_string()) {
    text = std::string(absl::StripAsciiWhitespace(j.get_ref<const std::string&>()));
  } else if (j.is_number()) {
    text = SerializeJson(j);
  } else {
    return TypeError(p, "quantity", j);
  }
  absl::StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) return FieldError(p, q.status().message());
  *out = *q;
  return absl::OkStatus();
}

absl::Status DecodeLeaf(const Json& j, const Path& p, IntOrString* out) {
  if (j.is_string()) {
    *out = IntOrString::FromString(j.get<std::string>());
    return absl::OkStatus();
  }
  if (!j.is_number_integer()) return TypeError(p, "integer or string", j);
  int64_t i = 0;
  absl::Status st = DecodeInt(j, p, INT32_MIN, INT32_MAX, &i);
  if (st.ok()) *out = IntOrString::FromInt(static_cast<int32_t>(i));
  return st;
}

absl::Status DecodeLeaf(const Json& j, const Path& /*p*/, RawJson* out) {
  out->json = SerializeJson(j);
  return absl::OkStatus();
}

void AppendUnknown(const RawJson& unknown, const std::vector<std::string_view>& known, Json* out) {
  absl::StatusOr<Json> j = ParseJson(unknown.json);
  if (!j.ok() || !j->is_object()) return;
  for (auto it = j->begin(); it != j->end(); ++it) {
    const std::string& key = it.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    if (out->contains(key)) continue;
    out->emplace(key, std::move(it.value()));
  }
}

RawJson KeepUnknown(const Json& members) { return RawJson{SerializeJson(members)}; }

}  // namespace codec
}  // namespace kubelet::api
