#include "api/pod_refs.h"

#include <functional>

namespace kubelet::api {
namespace {

void ForEachContainer(const PodSpec& spec, const std::function<void(const Container&)>& fn) {
  for (const Container& c : spec.init_containers) fn(c);
  for (const Container& c : spec.containers) fn(c);
  for (const EphemeralContainer& c : spec.ephemeral_containers) fn(c.common);
}

void Insert(std::set<std::string>& out, const std::string& name) { out.insert(name); }

}  // namespace

std::set<std::string> PodSecretNames(const Pod& pod) {
  std::set<std::string> out;
  for (const LocalObjectReference& r : pod.spec.image_pull_secrets) Insert(out, r.name);
  ForEachContainer(pod.spec, [&](const Container& c) {
    for (const EnvFromSource& from : c.env_from) {
      if (from.secret_ref.has_value()) Insert(out, from.secret_ref->name);
    }
    for (const EnvVar& e : c.env) {
      if (e.value_from.has_value() && e.value_from->secret_key_ref.has_value()) {
        Insert(out, e.value_from->secret_key_ref->name);
      }
    }
  });
  for (const Volume& v : pod.spec.volumes) {
    if (v.secret.has_value()) Insert(out, v.secret->secret_name);
    if (!v.projected.has_value()) continue;
    for (const VolumeProjection& p : v.projected->sources) {
      if (p.secret.has_value()) Insert(out, p.secret->name);
    }
  }
  return out;
}

std::set<std::string> PodConfigMapNames(const Pod& pod) {
  std::set<std::string> out;
  ForEachContainer(pod.spec, [&](const Container& c) {
    for (const EnvFromSource& from : c.env_from) {
      if (from.config_map_ref.has_value()) Insert(out, from.config_map_ref->name);
    }
    for (const EnvVar& e : c.env) {
      if (e.value_from.has_value() && e.value_from->config_map_key_ref.has_value()) {
        Insert(out, e.value_from->config_map_key_ref->name);
      }
    }
  });
  for (const Volume& v : pod.spec.volumes) {
    if (v.config_map.has_value()) Insert(out, v.config_map->name);
    if (!v.projected.has_value()) continue;
    for (const VolumeProjection& p : v.projected->sources) {
      if (p.config_map.has_value()) Insert(out, p.config_map->name);
    }
  }
  return out;
}

}  // namespace kubelet::api
