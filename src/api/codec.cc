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
#include "api/go_json.h"
#include "common/strings.h"

namespace kubelet::api {
namespace {

constexpr size_t kMaxValueInMessage = 200;  // chars of a bad value quoted in an error

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
  if (JsonNestingExceeds(text, codec::kMaxDepth)) return codec::DepthError();
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
