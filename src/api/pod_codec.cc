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
#include "api/yaml.h"

namespace kubelet::api {
namespace {

constexpr int kMaxDepth = kMaxYamlDepth;  // nesting levels accepted in a document
constexpr char kScheme[] = "pkg/api/legacyscheme/scheme.go:30";

// Manifests are parsed into nlohmann's std::map tree: members sorted (as the Go decoder's maps
// iterate them: unknown members are reported and opaque fields stored in that order, whatever
// order the manifest used), and faster to build than the ordered Json.
using Doc = UnorderedJson;

// Compact JSON as Go's json.Marshal writes a generic value (map keys sorted).
std::string Dump(const Doc& j) { return SerializeJson(j); }

// Parses YAML or JSON text into a JSON document (YAML through the shared api/yaml.h path).
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
  absl::StatusOr<YamlJson> converted = YamlToJson(data);
  if (!converted.ok()) return converted.status();
  try {
    return Doc::parse(converted->json);
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

// `absent`: what a member that is not there reads as (a list's items come without them).
absl::StatusOr<TypeMeta> InterpretTypeMeta(const Doc& doc, const TypeMeta* absent = nullptr) {
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
  auto get = [&](const char* key, std::string* out, const std::string* fallback) -> absl::Status {
    auto it = doc.find(key);
    if (it == doc.end() && fallback != nullptr) *out = *fallback;
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
  KRETURN_IF_ERROR(
      get("apiVersion", &tm.api_version, absent != nullptr ? &absent->api_version : nullptr));
  KRETURN_IF_ERROR(get("kind", &tm.kind, absent != nullptr ? &absent->kind : nullptr));
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

absl::StatusOr<std::vector<Pod>> DecodeDoc(const Doc& doc, bool allow_list,
                                           std::vector<std::string>* unknown,
                                           const TypeMeta* absent) {
  try {
    absl::StatusOr<TypeMeta> tm = InterpretTypeMeta(doc, absent);
    if (!tm.ok()) return tm.status();
    codec::Path root;
    root.unknown_paths = unknown;
    if (tm->kind == "Pod") {
      std::vector<Pod> out(1);
      KRETURN_IF_ERROR(codec::DecodeStruct(doc, root, &out[0]));
      Normalize(&out[0]);
      return out;
    }
    if (allow_list && tm->kind == "PodList") {
      PodListDoc list;
      KRETURN_IF_ERROR(codec::DecodeStruct(doc, root, &list));
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

absl::StatusOr<std::vector<Pod>> DecodeImpl(std::string_view data, bool allow_list,
                                            std::vector<std::string>* unknown) {
  try {
    absl::StatusOr<Doc> doc = ParseDocument(data);
    if (!doc.ok()) return doc.status();
    return DecodeDoc(*doc, allow_list, unknown, nullptr);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("failed to decode pod: ", e.what()));
  }
}

}  // namespace

absl::StatusOr<Pod> DecodePodDocument(const nlohmann::json& doc, bool list_item) {
  static const TypeMeta kListItem{"Pod", "v1"};
  auto pods = DecodeDoc(doc, /*allow_list=*/false, nullptr, list_item ? &kListItem : nullptr);
  if (!pods.ok()) return pods.status();
  return std::move((*pods)[0]);
}

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
