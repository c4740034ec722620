// JSON/YAML codec for core/v1 Pod and PodList, matching the upstream kubelet's file/http pod
// sources (utilyaml.ToJSON + the non-strict legacyscheme UniversalDecoder) and the JSON the
// kubelet serves (encoding/json of v1 types).
//
// Decoding:
//   * Input may be YAML or JSON (JSON is tried first when the text starts with '{' or '[').
//     YAML scalars are typed the way sigs.k8s.io/yaml (go-yaml v2, YAML 1.1) types them:
//     unquoted 0644 is octal 420, yes/no/on/off are booleans, quoted scalars are strings.
//   * Typing follows Go's encoding/json: a string where an integer is required is an error that
//     names the field path, e.g.
//       spec.containers[0].ports[0].containerPort: expected integer, got "abc"
//     null anywhere means "absent". Quantities accept strings or numbers, IntOrString accepts
//     integers or strings.
//   * Unknown fields are ignored (the upstream decoder is non-strict); their paths are appended
//     to `unknown_fields` when it is non-null.
//   * kind/apiVersion are required (missing -> "Object 'Kind' is missing in '<json>'" /
//     "Object 'apiVersion' is missing in '<json>'"); DecodePod requires kind Pod, apiVersion v1.
//     DecodePodOrPodList also accepts kind PodList (v1); like upstream it rejects kind "List".
//   * No defaulting happens here: callers apply SetDefaultsPod (pod_defaults.h) afterwards, which
//     is what the upstream decoder does implicitly.
//   * Never throws or crashes: garbage, truncated, deeply nested (> 1000 levels) or alias-bomb
//     input yields an error Status.
//
// Encoding: compact JSON with upstream field names, field order (Go declaration order) and
// omitempty behaviour, including status; e.g. "resources":{} on containers, "creationTimestamp":
// null in metadata, "state":{} in container statuses, '<' '>' '&' escaped as \u003c etc. like
// Go's encoder. No trailing newline.
// Thread-safe (no shared state).
#ifndef KUBELET_API_POD_CODEC_H_
#define KUBELET_API_POD_CODEC_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/pod.h"
#include "nlohmann/json.hpp"

namespace kubelet::api {

// Decodes one Pod (kind Pod, apiVersion v1).
absl::StatusOr<Pod> DecodePod(std::string_view data,
                              std::vector<std::string>* unknown_fields = nullptr);

// Decodes one Pod from a parsed JSON document (a watch event's or a list's object), as DecodePod
// decodes its text, without writing and parsing it again. A list's items come without kind and
// apiVersion: with `list_item` those that are absent read as Pod and v1. The document's nesting
// is what its parser allowed (the text decoders' 1000 levels do not apply).
absl::StatusOr<Pod> DecodePodDocument(const nlohmann::json& doc, bool list_item = false);

// Decodes a Pod (-> one element) or a PodList (-> its items, possibly none).
absl::StatusOr<std::vector<Pod>> DecodePodOrPodList(
    std::string_view data, std::vector<std::string>* unknown_fields = nullptr);

// Encodes a Pod as upstream's JSON encoder would ("kind":"Pod","apiVersion":"v1" first).
std::string EncodePodJson(const Pod& pod);

// Encodes {"kind":"PodList","apiVersion":"v1","metadata":{},"items":[...]} (the kubelet's /pods
// body). Items keep their own (usually empty) kind/apiVersion, as upstream.
std::string EncodePodListJson(const std::vector<Pod>& pods);

// Encodes a single Container as JSON (used for container spec hashing).
std::string EncodeContainerJson(const Container& container);

}  // namespace kubelet::api

#endif  // KUBELET_API_POD_CODEC_H_
