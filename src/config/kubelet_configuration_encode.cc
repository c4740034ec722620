// Encoding of KubeletConfiguration as the v1beta1 JSON that Go's json.Marshal produces (what
// /configz serves): Go field order, omitempty per the struct tags, Go's value formats and string
// escaping (HTML-safe, as json.Marshal).
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/quantity.h"
#include "common/duration.h"
#include "config/kubelet_configuration.h"
#include "config/kubelet_configuration_schema.h"

namespace kubelet::config {
namespace {

using schema::Field;
using schema::Kind;
using schema::StructDesc;

// encoding/json string encoding with escapeHTML (json.Marshal's default).
void AppendString(std::string* out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  *out += '"';
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          *out += "\\\"";
          break;
        case '\\':
          *out += "\\\\";
          break;
        case '\n':
          *out += "\\n";
          break;
        case '\r':
          *out += "\\r";
          break;
        case '\t':
          *out += "\\t";
          break;
        case '<':
        case '>':
        case '&':
          *out += "\\u00";
          *out += kHex[c >> 4];
          *out += kHex[c & 15];
          break;
        default:
          if (c < 0x20) {
            *out += "\\u00";
            *out += kHex[c >> 4];
            *out += kHex[c & 15];
          } else {
            *out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // Multi-byte UTF-8: validate; invalid bytes become U+FFFD, U+2028/2029 are escaped.
    int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool valid = len > 0 && i + len <= s.size();
    uint32_t cp = 0;
    if (valid) {
      cp = c & (0x7F >> len);
      for (int k = 1; k < len; ++k) {
        unsigned char cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xC0) != 0x80) {
          valid = false;
          break;
        }
        cp = (cp << 6) | (cc & 0x3F);
      }
      if (valid) {
        static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) valid = false;
      }
    }
    if (!valid) {
      *out += "\\ufffd";
      ++i;
      continue;
    }
    if (cp == 0x2028 || cp == 0x2029) {
      *out += cp == 0x2028 ? "\\u2028" : "\\u2029";
    } else {
      out->append(s.substr(i, len));
    }
    i += len;
  }
  *out += '"';
}

void AppendFloat(std::string* out, double f) {
  char buf[64];
  double abs = std::fabs(f);
  bool exp = abs != 0 && (abs < 1e-6 || abs >= 1e21);
  auto res = std::to_chars(buf, buf + sizeof(buf), f,
                           exp ? std::chars_format::scientific : std::chars_format::fixed);
  std::string s(buf, res.ptr);
  if (exp) {
    size_t n = s.size();
    if (n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') s.erase(n - 2, 1);
  }
  *out += s;
}

void AppendStringList(std::string* out, const std::vector<std::string>& list) {
  *out += '[';
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) *out += ',';
    AppendString(out, list[i]);
  }
  *out += ']';
}

// Whether omitempty drops the value (non-pointer fields only).
bool IsEmpty(const Field& f, const void* m) {
  switch (f.kind) {
    case Kind::kBool:
      return !*static_cast<const bool*>(m);
    case Kind::kInt32:
      return *static_cast<const int32_t*>(m) == 0;
    case Kind::kInt64:
      return *static_cast<const int64_t*>(m) == 0;
    case Kind::kUint32:
      return *static_cast<const uint32_t*>(m) == 0;
    case Kind::kDouble:
      return *static_cast<const double*>(m) == 0;
    case Kind::kString:
      return static_cast<const std::string*>(m)->empty();
    case Kind::kStringList:
      return static_cast<const std::vector<std::string>*>(m)->empty();
    case Kind::kStringMap:
      return static_cast<const std::map<std::string, std::string>*>(m)->empty();
    case Kind::kBoolMap:
      return static_cast<const std::map<std::string, bool>*>(m)->empty();
    case Kind::kStringListMap:
      return static_cast<const std::map<std::string, std::vector<std::string>>*>(m)->empty();
    case Kind::kQuantityMap:
      return static_cast<const std::map<std::string, api::Quantity>*>(m)->empty();
    case Kind::kStructList:
      return f.list->size(m) == 0;
    case Kind::kTime:
      return !static_cast<const std::optional<absl::Time>*>(m)->has_value();
    case Kind::kOptInt32:
      return !static_cast<const std::optional<int32_t>*>(m)->has_value();
    case Kind::kOptString:
      return !static_cast<const std::optional<std::string>*>(m)->has_value();
    case Kind::kOptStruct:
      return f.opt->get(m) == nullptr;
    default:
      return false;  // structs (Duration, Quantity, nested) are never omitted
  }
}

void AppendStruct(std::string* out, const StructDesc& desc, const void* obj, bool open);

void AppendValue(std::string* out, const Field& f, const void* m) {
  switch (f.kind) {
    case Kind::kBool:
      *out += *static_cast<const bool*>(m) ? "true" : "false";
      break;
    case Kind::kInt32:
      *out += std::to_string(*static_cast<const int32_t*>(m));
      break;
    case Kind::kInt64:
      *out += std::to_string(*static_cast<const int64_t*>(m));
      break;
    case Kind::kUint32:
      *out += std::to_string(*static_cast<const uint32_t*>(m));
      break;
    case Kind::kDouble:
      AppendFloat(out, *static_cast<const double*>(m));
      break;
    case Kind::kString:
      AppendString(out, *static_cast<const std::string*>(m));
      break;
    case Kind::kDuration:
      AppendString(out, FormatGoDuration(*static_cast<const absl::Duration*>(m)));
      break;
    case Kind::kFlushFrequency: {
      const auto* logging = static_cast<const LoggingConfiguration*>(m);
      if (logging->flush_frequency_as_string) {
        AppendString(out, FormatGoDuration(logging->flush_frequency));
      } else {
        *out += std::to_string(absl::ToInt64Nanoseconds(logging->flush_frequency));
      }
      break;
    }
    case Kind::kQuantity:
      AppendString(out, static_cast<const api::Quantity*>(m)->String());
      break;
    case Kind::kTime: {
      const auto& t = *static_cast<const std::optional<absl::Time>*>(m);
      if (!t.has_value()) {
        *out += "null";
      } else {
        AppendString(out, absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", *t, absl::UTCTimeZone()));
      }
      break;
    }
    case Kind::kOptInt32: {
      const auto& v = *static_cast<const std::optional<int32_t>*>(m);
      *out += v.has_value() ? std::to_string(*v) : "null";
      break;
    }
    case Kind::kOptString: {
      const auto& v = *static_cast<const std::optional<std::string>*>(m);
      if (v.has_value()) {
        AppendString(out, *v);
      } else {
        *out += "null";
      }
      break;
    }
    case Kind::kStringList:
      AppendStringList(out, *static_cast<const std::vector<std::string>*>(m));
      break;
    case Kind::kStringMap: {
      const auto& map = *static_cast<const std::map<std::string, std::string>*>(m);
      *out += '{';
      bool first = true;
      for (const auto& [k, v] : map) {
        if (!first) *out += ',';
        first = false;
        AppendString(out, k);
        *out += ':';
        AppendString(out, v);
      }
      *out += '}';
      break;
    }
    case Kind::kBoolMap: {
      const auto& map = *static_cast<const std::map<std::string, bool>*>(m);
      *out += '{';
      bool first = true;
      for (const auto& [k, v] : map) {
        if (!first) *out += ',';
        first = false;
        AppendString(out, k);
        *out += v ? ":true" : ":false";
      }
      *out += '}';
      break;
    }
    case Kind::kStringListMap: {
      const auto& map = *static_cast<const std::map<std::string, std::vector<std::string>>*>(m);
      *out += '{';
      bool first = true;
      for (const auto& [k, v] : map) {
        if (!first) *out += ',';
        first = false;
        AppendString(out, k);
        *out += ':';
        AppendStringList(out, v);
      }
      *out += '}';
      break;
    }
    case Kind::kQuantityMap: {
      const auto& map = *static_cast<const std::map<std::string, api::Quantity>*>(m);
      if (map.empty()) {
        *out += "null";  // a nil ResourceList
        break;
      }
      *out += '{';
      bool first = true;
      for (const auto& [k, v] : map) {
        if (!first) *out += ',';
        first = false;
        AppendString(out, k);
        *out += ':';
        AppendString(out, v.String());
      }
      *out += '}';
      break;
    }
    case Kind::kStruct:
      AppendStruct(out, *f.sub, m, true);
      break;
    case Kind::kOptStruct: {
      const void* v = f.opt->get(m);
      if (v == nullptr) {
        *out += "null";
      } else {
        AppendStruct(out, *f.sub, v, true);
      }
      break;
    }
    case Kind::kStructList: {
      size_t n = f.list->size(m);
      *out += '[';
      for (size_t i = 0; i < n; ++i) {
        if (i) *out += ',';
        AppendStruct(out, *f.sub, f.list->at(m, i), true);
      }
      *out += ']';
      break;
    }
  }
}

// Appends the members of `obj`; with `open` wraps them in braces. Returns via `out`.
void AppendStruct(std::string* out, const StructDesc& desc, const void* obj, bool open) {
  if (open) *out += '{';
  bool first = out->back() == '{';
  for (const Field& f : desc.fields) {
    const void* m = schema::Member(f, obj);
    bool optional_kind = f.kind == Kind::kOptInt32 || f.kind == Kind::kOptString ||
                         f.kind == Kind::kOptStruct || f.kind == Kind::kTime;
    if (optional_kind) {
      // Nil-able after conversion: omitted when nil (all such fields are omitempty).
      if (IsEmpty(f, m)) continue;
    } else if (!f.go_pointer && f.omitempty && IsEmpty(f, m)) {
      continue;
    }
    if (!first) *out += ',';
    first = false;
    AppendString(out, f.json);
    *out += ':';
    AppendValue(out, f, m);
  }
  if (open) *out += '}';
}

}  // namespace

std::string KubeletConfigurationToJson(const KubeletConfiguration& config, bool include_type_meta) {
  std::string out = "{";
  if (include_type_meta) {
    out += "\"kind\":";
    AppendString(&out, kKubeletConfigKind);
    out += ",\"apiVersion\":";
    AppendString(&out, kKubeletConfigAPIVersion);
  }
  AppendStruct(&out, schema::KubeletConfigurationDesc(), &config, false);
  out += '}';
  return out;
}

std::string KubeletConfigzJson(const KubeletConfiguration& config) {
  return absl::StrCat("{\"kubeletconfig\":", KubeletConfigurationToJson(config), "}");
}

}  // namespace kubelet::config
