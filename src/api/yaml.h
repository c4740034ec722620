// YAML -> JSON, as sigs.k8s.io/yaml.YAMLToJSON does it with go-yaml v2 (YAML 1.1): the one path
// by which every YAML document the kubelet reads (pod manifests, the KubeletConfiguration file)
// becomes JSON before a decoder sees it.
//
// Contract:
//  * Plain scalars resolve as yaml.v2 does: ~/null/empty -> null; y/yes/on/true (any of their
//    cases yaml.v2 knows) -> true, n/no/off/false -> false; integers in Go's base-0 syntax with
//    underscores (0x1F, 0o17, 017, 1_000) -> numbers, up to uint64; yaml.v2's float syntax ->
//    numbers written as Go's json.Marshal writes a float64 (1.0 -> 1); anything else, and every
//    quoted or !!str scalar, a string. .nan/.inf are refused as json.Marshal refuses them
//    ("json: unsupported value: NaN"). An explicit !!int/!!bool/!!float/!!null tag must match.
//  * Mapping keys become strings (true, 5); a null or non-scalar key is an error. `<<` merge keys
//    merge a map or a list of maps (earlier maps win, the mapping's own keys win over merged).
//  * A key given twice keeps its first position and its last value (yaml.v2 decoding into a map);
//    each repetition is reported in `duplicate_keys` as YAMLToJSONStrict words it
//    (`line 5: key "maxPods" already set in map`), for callers that decode strictly.
//  * Object members keep document order in the text (Go would sort them: callers that care parse
//    the text into a sorted tree).
//  * Limits: nesting deeper than kMaxYamlDepth, or more nodes than the input has bytes (plus
//    1024), is an error: aliases cannot expand a small document into a huge one.
//  * Errors read "error converting YAML to JSON: <detail>", e.g. "... yaml: line 3: did not find
//    expected key". Nothing throws. Thread-safe (no state).
#ifndef KUBELET_API_YAML_H_
#define KUBELET_API_YAML_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kubelet::api {

inline constexpr int kMaxYamlDepth = 1000;

struct YamlJson {
  std::string json;                         // compact JSON text of the document
  std::vector<std::string> duplicate_keys;  // strict-mode complaints, in document order
};

absl::StatusOr<YamlJson> YamlToJson(std::string_view yaml);

}  // namespace kubelet::api

#endif  // KUBELET_API_YAML_H_
