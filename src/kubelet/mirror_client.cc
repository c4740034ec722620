#include "kubelet/mirror_client.h"

#include "api/static_pod.h"

namespace kubelet {
namespace {

std::string Annotation(const api::Pod& pod, const char* key) {
  auto it = pod.metadata.annotations.find(key);
  return it == pod.metadata.annotations.end() ? "" : it->second;
}

}  // namespace

api::Pod BuildMirrorPod(const api::Pod& static_pod, const std::string& node_name,
                        const std::string& node_uid) {
  api::Pod mirror;
  mirror.metadata = static_pod.metadata;
  mirror.spec = static_pod.spec;
  // The API server assigns these; a resourceVersion on create is rejected.
  mirror.metadata.uid.clear();
  mirror.metadata.resource_version.clear();
  mirror.metadata.self_link.clear();
  mirror.metadata.generation = 0;
  mirror.metadata.creation_timestamp = api::Time();
  mirror.metadata.deletion_timestamp.reset();
  mirror.metadata.deletion_grace_period_seconds.reset();
  mirror.metadata.managed_fields = api::RawJson();
  mirror.metadata.annotations[api::kConfigMirrorAnnotationKey] =
      Annotation(static_pod, api::kConfigHashAnnotationKey);
  mirror.metadata.owner_references = {api::OwnerReference{
      .api_version = "v1", .kind = "Node", .name = node_name, .uid = node_uid, .controller = true}};
  return mirror;
}

bool IsMirrorPodOf(const api::Pod& mirror, const api::Pod& static_pod) {
  if (mirror.metadata.name != static_pod.metadata.name ||
      mirror.metadata.namespace_ != static_pod.metadata.namespace_) {
    return false;
  }
  auto it = mirror.metadata.annotations.find(api::kConfigMirrorAnnotationKey);
  if (it == mirror.metadata.annotations.end()) return false;
  return it->second == Annotation(static_pod, api::kConfigHashAnnotationKey);
}

bool IsMirrorPodOwnedByNode(const api::Pod& mirror, const std::string& node_name,
                            const std::string& node_uid) {
  for (const api::OwnerReference& o : mirror.metadata.owner_references) {
    if (!o.controller.value_or(false)) continue;
    return o.api_version == "v1" && o.kind == "Node" && o.name == node_name && o.uid == node_uid;
  }
  return false;
}

}  // namespace kubelet
