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
#include "common/duration.h"
#include "common/strings.h"

namespace kubelet::api {
namespace {

constexpr size_t kMaxValueInMessage = 200;  // chars of a bad value quoted in an error

template <typename J>
void AppendJson(std::string* out, const J& j, bool sort_keys) {
  switch (j.type()) {
    case J::value_t::object: {
      out->push_back('{');
      std::vector<typename J::const_iterator> members;
      members.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it) members.push_back(it);
      if (sort_keys) {
        std::sort(members.begin(), members.end(),
                  [](const auto& a, const auto& b) { return a.key() < b.key(); });
      }
      bool first = true;
      for (const auto& it : members) {
        if (!first) out->push_back(',');
        first = false;
        AppendGoString(out, it.key());
        out->push_back(':');
        AppendJson(out, it.value(), sort_keys);
      }
      out->push_back('}');
      break;
    }
    case J::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const J& e : j) {
        if (!first) out->push_back(',');
        first = false;
        AppendJson(out, e, sort_keys);
      }
      out->push_back(']');
      break;
    }
    case J::value_t::string:
      AppendGoString(out, j.template get_ref<const std::string&>());
      break;
    case J::value_t::boolean:
      out->append(j.template get<bool>() ? "true" : "false");
      break;
    case J::value_t::number_integer:
      absl::StrAppend(out, j.template get<int64_t>());
      break;
    case J::value_t::number_unsigned:
      absl::StrAppend(out, j.template get<uint64_t>());
      break;
    case J::value_t::number_float:
      AppendGoFloat(out, j.template get<double>());
      break;
    default:  // null, discarded, binary
      out->append("null");
  }
}

template <typename J>
std::string Describe(const J& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  std::string s;
  AppendJson(&s, v, /*sort_keys=*/false);
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
  AppendJson(&out, j, /*sort_keys=*/false);
  return out;
}

std::string SerializeJsonSortedKeys(const Json& j) {
  std::string out;
  AppendJson(&out, j, /*sort_keys=*/true);
  return out;
}

std::string SerializeJson(const UnorderedJson& j) {
  std::string out;
  AppendJson(&out, j, /*sort_keys=*/false);
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

template <typename J>
absl::Status TypeError(const Path& p, std::string_view want, const J& got) {
  return FieldError(p, absl::StrCat("expected ", AV(want), ", got ", Describe(got)));
}

Json EncodeString(const std::string& s, uint32_t opts) {
  if ((opts & kBase64) != 0) return Json(absl::Base64Escape(AV(s)));
  return Json(s);
}

template <typename J>
absl::Status DecodeString(const J& j, const Path& p, uint32_t opts, std::string* out) {
  if (!j.is_string()) return TypeError(p, "string", j);
  const std::string& s = j.template get_ref<const std::string&>();
  if ((opts & kBase64) == 0) {
    *out = s;
    return absl::OkStatus();
  }
  std::string bytes;
  if (!absl::Base64Unescape(AV(s), &bytes)) return FieldError(p, "illegal base64 data");
  *out = std::move(bytes);
  return absl::OkStatus();
}

template <typename J>
absl::Status DecodeInt(const J& j, const Path& p, int64_t lo, int64_t hi, std::string_view type,
                       int64_t* out) {
  if (j.is_number_unsigned()) {
    const uint64_t u = j.template get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) {
      return FieldError(p, absl::StrCat("value ", u, " out of range for ", AV(type)));
    }
    *out = static_cast<int64_t>(u);
    return absl::OkStatus();
  }
  if (!j.is_number_integer()) return TypeError(p, "integer", j);
  const int64_t i = j.template get<int64_t>();
  if (i < lo || i > hi) {
    return FieldError(p, absl::StrCat("value ", i, " out of range for ", AV(type)));
  }
  *out = i;
  return absl::OkStatus();
}

template <typename J>
absl::Status DecodeUint(const J& j, const Path& p, uint64_t hi, std::string_view type,
                        uint64_t* out) {
  if (!j.is_number_integer()) return TypeError(p, "integer", j);
  if (!j.is_number_unsigned() && j.template get<int64_t>() < 0) {
    return FieldError(
        p, absl::StrCat("value ", j.template get<int64_t>(), " out of range for ", AV(type)));
  }
  const uint64_t u = j.template get<uint64_t>();
  if (u > hi) return FieldError(p, absl::StrCat("value ", u, " out of range for ", AV(type)));
  *out = u;
  return absl::OkStatus();
}

Json EncodeLeaf(const Time& t) { return t.set ? Json(t.RFC3339()) : Json(nullptr); }

Json EncodeLeaf(const MicroTime& t) { return t.set ? Json(t.RFC3339Micro()) : Json(nullptr); }

Json EncodeLeaf(const Quantity& q) { return Json(q.String()); }

Json EncodeLeaf(const absl::Duration& d) { return Json(FormatGoDuration(d)); }

Json EncodeLeaf(const IntOrString& v) {
  return v.is_string() ? Json(v.str_val) : Json(static_cast<int64_t>(v.int_val));
}

Json EncodeLeaf(const RawJson& r) {
  if (r.empty()) return Json(nullptr);
  absl::StatusOr<Json> j = ParseJson(r.json);
  return j.ok() ? *std::move(j) : Json(nullptr);
}

template <typename J>
absl::Status DecodeLeaf(const J& j, const Path& p, Time* out) {
  if (!j.is_string()) return TypeError(p, "RFC3339 time string", j);
  absl::StatusOr<Time> t = Time::ParseRFC3339(j.template get_ref<const std::string&>());
  if (!t.ok()) return FieldError(p, t.status().message());
  *out = *t;
  return absl::OkStatus();
}

template <typename J>
absl::Status DecodeLeaf(const J& j, const Path& p, MicroTime* out) {
  if (!j.is_string()) return TypeError(p, "RFC3339 time string", j);
  absl::StatusOr<MicroTime> t = MicroTime::Parse(j.template get_ref<const std::string&>());
  if (!t.ok()) return FieldError(p, t.status().message());
  *out = *t;
  return absl::OkStatus();
}

template <typename J>
absl::Status DecodeLeaf(const J& j, const Path& p, Quantity* out) {
  std::string text;
  if (j.is_string()) {
    text = std::string(absl::StripAsciiWhitespace(j.template get_ref<const std::string&>()));
  } else if (j.is_number()) {
    AppendJson(&text, j, /*sort_keys=*/false);
  } else {
    return TypeError(p, "quantity", j);
  }
  absl::StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) return FieldError(p, q.status().message());
  *out = *q;
  return absl::OkStatus();
}

template <typename J>
absl::Status DecodeLeaf(const J& j, const Path& p, absl::Duration* out) {
  if (!j.is_string()) return TypeError(p, "duration string", j);
  absl::StatusOr<absl::Duration> d = ParseGoDuration(j.template get_ref<const std::string&>());
  if (!d.ok()) return FieldError(p, d.status().message());
  *out = *d;
  return absl::OkStatus();
}

template <typename J>
absl::Status DecodeLeaf(const J& j, const Path& p, IntOrString* out) {
  if (j.is_string()) {
    *out = IntOrString::FromString(j.template get<std::string>());
    return absl::OkStatus();
  }
  if (!j.is_number_integer()) return TypeError(p, "integer or string", j);
  int64_t i = 0;
  absl::Status st = DecodeInt(j, p, INT32_MIN, INT32_MAX, "int32", &i);
  if (st.ok()) *out = IntOrString::FromInt(static_cast<int32_t>(i));
  return st;
}

template <typename J>
absl::Status DecodeRaw(const J& j, const Path& p, uint32_t opts, RawJson* out) {
  if ((opts & kObject) != 0 && !j.is_object()) return TypeError(p, "object", j);
  out->json.clear();
  AppendJson(&out->json, j, (opts & kSortKeys) != 0);
  return absl::OkStatus();
}

void NoteUnknown(const Path& p, std::string_view key) {
  const Path* root = &p;
  while (root->parent != nullptr) root = root->parent;
  if (root->unknown_paths == nullptr) return;
  root->unknown_paths->push_back(Path{&p, key}.String());
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

void AppendLeaf(std::string* out, const Time& t) {
  if (!t.set) {
    out->append("null");
    return;
  }
  AppendGoString(out, t.RFC3339());
}

void AppendLeaf(std::string* out, const MicroTime& t) { AppendJson(out, EncodeLeaf(t), false); }

void AppendLeaf(std::string* out, const Quantity& q) { AppendGoString(out, q.String()); }

void AppendLeaf(std::string* out, const absl::Duration& d) {
  AppendGoString(out, FormatGoDuration(d));
}

void AppendLeaf(std::string* out, const IntOrString& v) {
  if (v.is_string()) {
    AppendGoString(out, v.str_val);
  } else {
    absl::StrAppend(out, v.int_val);
  }
}

void AppendLeaf(std::string* out, const RawJson& r) { AppendJson(out, EncodeLeaf(r), false); }

void AppendString(std::string* out, const std::string& s, uint32_t opts) {
  if ((opts & kBase64) != 0) {
    AppendGoString(out, absl::Base64Escape(AV(s)));
  } else {
    AppendGoString(out, s);
  }
}

void AppendInt(std::string* out, int64_t i) { absl::StrAppend(out, i); }

void AppendUint(std::string* out, uint64_t u) { absl::StrAppend(out, u); }

void AppendDouble(std::string* out, double d) { AppendGoFloat(out, d); }

void AppendJsonText(std::string* out, const Json& j) { AppendJson(out, j, false); }

void AppendKey(std::string* out, std::string_view name, bool* first) {
  if (!*first) out->push_back(',');
  *first = false;
  AppendGoString(out, name);
  out->push_back(':');
}

void AppendUnknownMembers(std::string* out, const RawJson& unknown,
                          const std::vector<std::string_view>& known, bool* first) {
  Json members = Json::object();
  AppendUnknown(unknown, known, &members);
  for (auto it = members.begin(); it != members.end(); ++it) {
    AppendKey(out, it.key(), first);
    AppendJson(out, it.value(), false);
  }
}

// The two trees the decoders accept.
#define KUBELET_CODEC_INSTANTIATE(J)                                                              \
  template absl::Status TypeError(const Path&, std::string_view, const J&);                       \
  template absl::Status DecodeString(const J&, const Path&, uint32_t, std::string*);              \
  template absl::Status DecodeInt(const J&, const Path&, int64_t, int64_t, std::string_view,      \
                                  int64_t*);                                                      \
  template absl::Status DecodeUint(const J&, const Path&, uint64_t, std::string_view, uint64_t*); \
  template absl::Status DecodeRaw(const J&, const Path&, uint32_t, RawJson*);                     \
  template absl::Status DecodeLeaf(const J&, const Path&, Time*);                                 \
  template absl::Status DecodeLeaf(const J&, const Path&, MicroTime*);                            \
  template absl::Status DecodeLeaf(const J&, const Path&, Quantity*);                             \
  template absl::Status DecodeLeaf(const J&, const Path&, IntOrString*);                          \
  template absl::Status DecodeLeaf(const J&, const Path&, absl::Duration*);
KUBELET_CODEC_INSTANTIATE(Json)
KUBELET_CODEC_INSTANTIATE(UnorderedJson)
#undef KUBELET_CODEC_INSTANTIATE

}  // namespace codec
}  // namespace kubelet::api
