// Internal to the kubelet_configuration*.cc files: a table describing the v1beta1 wire shape of
// KubeletConfiguration (JSON names in Go field order, Go types for error messages, pointer-ness
// and omitempty), shared by the decoder and the encoder. Not a public API.
#ifndef KUBELET_CONFIG_KUBELET_CONFIGURATION_SCHEMA_H_
#define KUBELET_CONFIG_KUBELET_CONFIGURATION_SCHEMA_H_

#include <cstddef>
#include <vector>

namespace kubelet::config::schema {

enum class Kind {
  kBool,            // bool
  kInt32,           // int32_t
  kInt64,           // int64_t
  kUint32,          // uint32_t
  kDouble,          // double
  kString,          // std::string
  kDuration,        // absl::Duration (metav1.Duration)
  kFlushFrequency,  // LoggingConfiguration (TimeOrMetaDuration): member is the whole struct
  kQuantity,        // api::Quantity (resource.Quantity / QuantityValue)
  kTime,            // std::optional<absl::Time> (*metav1.Time)
  kOptInt32,        // std::optional<int32_t>
  kOptString,       // std::optional<std::string>
  kStringList,      // std::vector<std::string>
  kStringMap,       // std::map<std::string, std::string>
  kBoolMap,         // std::map<std::string, bool>
  kStringListMap,   // std::map<std::string, std::vector<std::string>>
  kQuantityMap,     // std::map<std::string, api::Quantity>
  kStruct,          // nested struct (sub)
  kOptStruct,       // std::optional<nested struct> (sub, opt)
  kStructList,      // std::vector<nested struct> (sub, list)
};

struct StructDesc;

// Type-erased std::vector<T> operations for kStructList.
struct ListOps {
  size_t (*size)(const void* vec);
  void (*clear)(void* vec);
  void* (*append)(void* vec);
  const void* (*at)(const void* vec, size_t i);
};

// Type-erased std::optional<T> operations for kOptStruct.
struct OptOps {
  const void* (*get)(const void* opt);  // nullptr when empty
  void* (*emplace)(void* opt);          // engages if needed, returns the value
  void (*reset)(void* opt);
};

struct Field {
  const char* json;  // JSON name
  Kind kind;
  bool go_pointer;      // *T in v1beta1: null unsets, never omitted when encoding
  bool omitempty;       // `json:",omitempty"` on a non-struct value
  const char* go_type;  // the Go type as json error messages print it
  void* (*member)(void* obj);
  const StructDesc* sub = nullptr;
  const ListOps* list = nullptr;
  const OptOps* opt = nullptr;
};

struct StructDesc {
  const char* go_name;  // struct type name without package, for "Go struct field X.path"
  std::vector<Field> fields;
};

// The KubeletConfiguration table (TypeMeta not included).
const StructDesc& KubeletConfigurationDesc();

inline const void* Member(const Field& f, const void* obj) {
  return f.member(const_cast<void*>(obj));
}

}  // namespace kubelet::config::schema

#endif  // KUBELET_CONFIG_KUBELET_CONFIGURATION_SCHEMA_H_
