// The identity of a Kubernetes object held as a JSON tree (what the reflector stores and the
// sources receive): its metadata.namespace and metadata.name, and the cache key upstream's
// MetaNamespaceKeyFunc makes of them. Header-only and generic over the JSON type (any tree with
// nlohmann's interface), so layers that do not link the API types can share it.
// Pure functions; thread-safe.
#ifndef KUBELET_COMMON_OBJECT_KEY_H_
#define KUBELET_COMMON_OBJECT_KEY_H_

#include <string>

namespace kubelet {

struct ObjectName {
  std::string namespace_name;  // "" for a cluster-scoped object
  std::string name;            // "" when metadata.name is missing or not a string
};

// Members that are missing or not strings read as "".
template <typename Json>
ObjectName NameOf(const Json& object) {
  ObjectName out;
  if (!object.is_object()) return out;
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return out;
  auto read = [&md](const char* key, std::string* to) {
    auto it = md->find(key);
    if (it != md->end() && it->is_string()) *to = it->template get<std::string>();
  };
  read("namespace", &out.namespace_name);
  read("name", &out.name);
  return out;
}

// "<namespace>/<name>", or "<name>" for a cluster-scoped object; "" without a name.
template <typename Json>
std::string ObjectKey(const Json& object) {
  ObjectName n = NameOf(object);
  if (n.name.empty()) return "";
  return n.namespace_name.empty() ? n.name : n.namespace_name + "/" + n.name;
}

}  // namespace kubelet

#endif  // KUBELET_COMMON_OBJECT_KEY_H_
