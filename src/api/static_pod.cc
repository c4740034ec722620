#include "api/static_pod.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pod_codec.h"
#include "api/pod_defaults.h"
#include "api/pod_refs.h"
#include "api/pod_validation.h"
#include "common/log.h"
#include "common/openssl.h"
#include "common/strings.h"

namespace kubelet::api {
namespace {

absl::StatusOr<std::string> Md5Hex(std::string_view data) {
  const std::string digest = ossl::Digest(EVP_md5(), data);
  if (digest.empty()) return absl::InternalError("md5 digest unavailable");
  return absl::BytesToHexString(AV(digest));
}

// helper.AddOrUpdateTolerationInPod.
void AddOrUpdateToleration(PodSpec* spec, const Toleration& t) {
  std::vector<Toleration> out;
  bool updated = false;
  for (const auto& existing : spec->tolerations) {
    const bool matches = existing.key == t.key && existing.effect == t.effect &&
                         existing.operator_ == t.operator_ && existing.value == t.value;
    if (matches) {
      if (existing == t) return;
      out.push_back(t);
      updated = true;
      continue;
    }
    out.push_back(existing);
  }
  if (!updated) out.push_back(t);
  spec->tolerations = std::move(out);
}

// tryDecodeSinglePod. `parsed` tells whether the data decoded as a Pod at all.
absl::StatusOr<Pod> TryDecodeSinglePod(std::string_view data, std::string_view node_name,
                                       std::string_view source, std::string_view source_path,
                                       absl::Time now, bool* parsed) {
  *parsed = false;
  auto pod = DecodePod(data);
  if (!pod.ok()) return pod.status();
  *parsed = true;
  SetDefaultsPod(&*pod);
  if (absl::Status st = ApplyStaticPodDefaults(&*pod, node_name, source, source_path, now);
      !st.ok()) {
    return st;
  }
  if (FieldErrorList errs = ValidatePodCreate(*pod); !errs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid pod: ", FormatErrorListGo(errs)));
  }
  if (std::vector<std::string> refs = GetAPIReferences(*pod); !refs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pod ", ::kubelet::log::Quote(pod->metadata.name),
                     " has forbidden references to API objects: ", absl::StrJoin(refs, ", ")));
  }
  return pod;
}

}  // namespace

std::string FormatRFC3339Nano(absl::Time t, absl::TimeZone tz) {
  std::string s = absl::FormatTime("%Y-%m-%dT%H:%M:%E*S", t, tz);
  const int offset = tz.At(t).offset;
  if (offset == 0) return s + "Z";
  const int abs_off = std::abs(offset);
  const int hours = abs_off / 3600, minutes = (abs_off / 60) % 60;
  absl::StrAppend(&s, offset < 0 ? "-" : "+", hours < 10 ? "0" : "", hours, ":",
                  minutes < 10 ? "0" : "", minutes);
  return s;
}

absl::Status ApplyStaticPodDefaults(Pod* pod, std::string_view node_name, std::string_view source,
                                    std::string_view source_path, absl::Time now) {
  const bool is_file = source == kFileSource;
  if (!is_file && source != kHTTPSource) {
    return absl::InvalidArgumentError(absl::StrCat("unknown static pod source ",
                                                   ::kubelet::log::Quote(source),
                                                   " (want \"file\" or \"http\")"));
  }
  if (pod->metadata.uid.empty()) {
    std::string input = EncodePodJson(*pod);
    if (is_file) {
      absl::StrAppend(&input, "host:", AV(node_name), "file:", AV(source_path));
    } else {
      absl::StrAppend(&input, "url:", AV(source_path));
    }
    auto uid = Md5Hex(input);
    if (!uid.ok()) return uid.status();
    pod->metadata.uid = *uid;
    KLOG_V(5, "Generated UID", "pod", PodKey(*pod), "podUID", pod->metadata.uid, "source",
           source_path);
  }
  pod->metadata.name = absl::StrCat(pod->metadata.name, "-", absl::AsciiStrToLower(AV(node_name)));
  KLOG_V(5, "Generated pod name", "pod", PodKey(*pod), "podUID", pod->metadata.uid, "source",
         source_path);
  if (pod->metadata.namespace_.empty()) pod->metadata.namespace_ = kNamespaceDefault;
  KLOG_V(5, "Set namespace for pod", "pod", PodKey(*pod), "source", source_path);
  pod->spec.node_name = std::string(node_name);
  pod->metadata.annotations[kConfigHashAnnotationKey] = pod->metadata.uid;
  if (is_file) {
    Toleration t;
    t.operator_ = "Exists";
    t.effect = "NoExecute";
    AddOrUpdateToleration(&pod->spec, t);
  }
  pod->status.phase = kPodPending;
  pod->metadata.annotations[kConfigSourceAnnotationKey] = std::string(source);
  pod->metadata.annotations[kConfigFirstSeenAnnotationKey] = FormatRFC3339Nano(now);
  return absl::OkStatus();
}

absl::StatusOr<Pod> DecodeStaticPodFile(std::string_view data, std::string_view node_name,
                                        std::string_view path, absl::Time now) {
  bool parsed = false;
  auto pod = TryDecodeSinglePod(data, node_name, kFileSource, path, now, &parsed);
  if (pod.ok() || parsed) return pod;
  return absl::InvalidArgumentError(absl::StrCat(
      AV(path), ": couldn't parse as pod(", pod.status().message(), "), please check config file"));
}

absl::StatusOr<std::vector<Pod>> DecodeStaticPodsHTTP(std::string_view data,
                                                      std::string_view node_name,
                                                      std::string_view url, absl::Time now) {
  bool parsed = false;
  auto single = TryDecodeSinglePod(data, node_name, kHTTPSource, url, now, &parsed);
  if (single.ok()) return std::vector<Pod>{std::move(*single)};
  if (parsed) return single.status();
  // tryDecodePodList.
  auto list = DecodePodOrPodList(data);
  absl::Status multi_err;
  if (list.ok()) {
    // A plain Pod would have been handled above; DecodePodOrPodList only succeeds here for
    // PodList documents.
    for (Pod& pod : *list) {
      SetDefaultsPod(&pod);
      if (absl::Status st = ApplyStaticPodDefaults(&pod, node_name, kHTTPSource, url, now);
          !st.ok()) {
        return st;
      }
      if (FieldErrorList errs = ValidatePodCreate(pod); !errs.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("invalid pod: ", FormatErrorListGo(errs)));
      }
    }
    return list;
  }
  multi_err = list.status();
  return absl::InvalidArgumentError(
      absl::StrCat(AV(url), ": received '", AV(data), "', but couldn't parse as single (",
                   single.status().message(), ") or multiple pods (", multi_err.message(), ")"));
}

std::vector<std::string> GetAPIReferences(const Pod& pod) {
  std::set<std::string> refs;
  const PodSpec& spec = pod.spec;
  auto q = [](std::string_view s) { return ::kubelet::log::Quote(s); };
  if (!spec.service_account_name.empty()) {
    refs.insert(absl::StrCat("ServiceAccount ", q(spec.service_account_name)));
  }
  // VisitPodSecretNames / VisitPodConfigmapNames over all containers and volumes.
  for (const std::string& n : PodSecretNames(pod)) refs.insert(absl::StrCat("Secret ", q(n)));
  for (const std::string& n : PodConfigMapNames(pod)) {
    refs.insert(absl::StrCat("ConfigMap ", q(n)));
  }
  static const std::set<std::string> kLocalSources = {
      "awsElasticBlockStore",
      "azureDisk",
      "azureFile",
      "cephfs",
      "cinder",
      "fc",
      "flexVolume",
      "flocker",
      "gcePersistentDisk",
      "gitRepo",
      "glusterfs",
      "iscsi",
      "nfs",
      "photonPersistentDisk",
      "portworxVolume",
      "quobyte",
      "rbd",
      "scaleIO",
      "storageos",
      "vsphereVolume",
  };
  for (const auto& v : spec.volumes) {
    // Volume types.
    bool local = v.downward_api.has_value() || v.empty_dir.has_value() || v.host_path.has_value();
    for (const auto& [name, raw] : v.other_sources) local = local || kLocalSources.count(name) > 0;
    if (local) continue;
    if (v.projected.has_value()) {
      for (const auto& s : v.projected->sources) {
        if (s.config_map.has_value()) {
          refs.insert(absl::StrCat("configMap projected volume ", q(v.name)));
        } else if (s.secret.has_value()) {
          refs.insert(absl::StrCat("secret projected volume ", q(v.name)));
        } else if (s.service_account_token.has_value()) {
          refs.insert(absl::StrCat("serviceAccountToken projected volume ", q(v.name)));
        } else if (!s.downward_api.has_value()) {
          refs.insert(absl::StrCat("unknown source for projected volume ", q(v.name)));
        }
      }
    } else if (v.config_map.has_value()) {
      refs.insert(absl::StrCat("ConfigMap volume ", q(v.name)));
    } else if (v.other_sources.count("csi") > 0) {
      refs.insert(absl::StrCat("CSI volume ", q(v.name)));
    } else if (v.other_sources.count("ephemeral") > 0) {
      refs.insert(absl::StrCat("Ephemeral volume ", q(v.name)));
    } else if (v.persistent_volume_claim.has_value()) {
      refs.insert(absl::StrCat("PersistentVolumeClaim volume ", q(v.name)));
    } else if (v.secret.has_value()) {
      refs.insert(absl::StrCat("Secret volume ", q(v.name)));
    } else {
      refs.insert(absl::StrCat("unknown type for volume ", q(v.name)));
    }
  }
  return std::vector<std::string>(refs.begin(), refs.end());
}

std::string PodFullName(const Pod& pod) {
  return absl::StrCat(pod.metadata.name, "_", pod.metadata.namespace_);
}

std::string PodKey(const Pod& pod) {
  if (pod.metadata.namespace_.empty()) return pod.metadata.name;
  return absl::StrCat(pod.metadata.namespace_, "/", pod.metadata.name);
}

absl::StatusOr<std::string> GetPodSource(const Pod& pod) {
  auto it = pod.metadata.annotations.find(kConfigSourceAnnotationKey);
  if (it == pod.metadata.annotations.end()) {
    return absl::NotFoundError(
        absl::StrCat("cannot get source of pod ", ::kubelet::log::Quote(pod.metadata.uid)));
  }
  return it->second;
}

bool IsStaticPod(const Pod& pod) {
  auto source = GetPodSource(pod);
  return source.ok() && *source != kApiserverSource;
}

bool IsMirrorPod(const Pod& pod) {
  return pod.metadata.annotations.count(kConfigMirrorAnnotationKey) > 0;
}

bool IsCriticalPodBasedOnPriority(int32_t priority) { return priority >= kSystemCriticalPriority; }

bool IsCriticalPod(const Pod& pod) {
  if (IsStaticPod(pod) || IsMirrorPod(pod)) return true;
  return pod.spec.priority.has_value() && IsCriticalPodBasedOnPriority(*pod.spec.priority);
}

std::string_view QOSClassName(QOSClass c) {
  switch (c) {
    case QOSClass::kGuaranteed:
      return "Guaranteed";
    case QOSClass::kBurstable:
      return "Burstable";
    case QOSClass::kBestEffort:
      return "BestEffort";
  }
  return "BestEffort";
}

QOSClass ComputePodQOS(const Pod& pod) {
  ResourceList requests, limits;
  bool guaranteed = true;
  auto add = [](ResourceList* rl, const std::string& name, const Quantity& q) {
    auto it = rl->find(name);
    if (it == rl->end()) {
      (*rl)[name] = q;
    } else {
      it->second = it->second + q;
    }
  };
  auto visit = [&](const Container& c) {
    for (const auto& [name, q] : c.resources.requests) {
      if (name != kResourceCPU && name != kResourceMemory) continue;
      if (q.Sign() > 0) add(&requests, name, q);
    }
    std::set<std::string> limits_found;
    for (const auto& [name, q] : c.resources.limits) {
      if (name != kResourceCPU && name != kResourceMemory) continue;
      if (q.Sign() > 0) {
        limits_found.insert(name);
        add(&limits, name, q);
      }
    }
    if (limits_found.size() != 2) guaranteed = false;
  };
  for (const auto& c : pod.spec.containers) visit(c);
  for (const auto& c : pod.spec.init_containers) visit(c);
  if (requests.empty() && limits.empty()) return QOSClass::kBestEffort;
  if (guaranteed) {
    for (const auto& [name, req] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || !(it->second == req)) {
        guaranteed = false;
        break;
      }
    }
  }
  if (guaranteed && requests.size() == limits.size()) return QOSClass::kGuaranteed;
  return QOSClass::kBurstable;
}

QOSClass GetPodQOS(const Pod& pod) {
  const std::string& q = pod.status.qos_class;
  if (q == "Guaranteed") return QOSClass::kGuaranteed;
  if (q == "Burstable") return QOSClass::kBurstable;
  if (q == "BestEffort") return QOSClass::kBestEffort;
  return ComputePodQOS(pod);
}

uint64_t HashContainer(const Container& container) {
  // v1.28 hashutil.DeepHashObject(fnv32a, json.Marshal(container)): spew prints the byte slice
  // as "([]uint8)[" + decimal bytes separated by spaces + "]", and that text is hashed.
  const std::string json = EncodeContainerJson(container);
  uint32_t h = 2166136261u;
  auto feed = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 16777619u;
    }
  };
  feed("([]uint8)[");
  for (size_t i = 0; i < json.size(); ++i) {
    if (i > 0) feed(" ");
    feed(std::to_string(static_cast<unsigned char>(json[i])));
  }
  feed("]");
  return h;
}

}  // namespace kubelet::api
