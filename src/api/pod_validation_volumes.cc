// Volumes: names, exactly one source per volume, the hostPath/emptyDir/secret/configMap/
// downwardAPI/projected/PVC sources, local paths, and downward API field/resource selectors.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/pod_validation_internal.h"
#include "common/strings.h"

namespace kubelet::api::validation_internal {
namespace {

constexpr char kFileModeErrorMsg[] = "must be a number between 0 and 0777 (octal), both inclusive";

Errs ValidateLocalNonReservedPath(std::string_view target, const std::string& path) {
  Errs e = ValidateLocalDescendingPath(target, path);
  if (absl::StartsWith(AV(target), "..") && !absl::StartsWith(AV(target), "../")) {
    e.push_back(InvalidS(path, target, "must not start with '..'"));
  }
  return e;
}

void ValidateMode(const std::optional<int32_t>& mode, const std::string& path, Errs* e) {
  if (mode.has_value() && (*mode > 0777 || *mode < 0)) {
    e->push_back(InvalidI(path, *mode, kFileModeErrorMsg));
  }
}

Errs ValidateKeyToPath(const KeyToPath& kp, const std::string& path) {
  Errs e;
  if (kp.key.empty()) e.push_back(Required(Child(path, "key")));
  if (kp.path.empty()) e.push_back(Required(Child(path, "path")));
  Append(&e, ValidateLocalNonReservedPath(kp.path, Child(path, "path")));
  ValidateMode(kp.mode, Child(path, "mode"), &e);
  return e;
}

// Downward API field paths.
bool SplitMaybeSubscriptedPath(std::string_view fp, std::string* path, std::string* subscript) {
  if (!absl::EndsWith(AV(fp), "']")) return false;
  std::string_view s = fp.substr(0, fp.size() - 2);
  size_t open = s.find("['");
  if (open == std::string_view::npos || open == 0) return false;
  *path = std::string(s.substr(0, open));
  *subscript = std::string(s.substr(open + 2));
  return true;
}

// pods.ConvertDownwardAPIFieldLabel for v1.
absl::Status ConvertDownwardAPIFieldLabel(std::string_view version, std::string_view label,
                                          std::string* internal) {
  if (version != "v1") {
    return absl::InvalidArgumentError(absl::StrCat("unsupported pod version: ", AV(version)));
  }
  std::string path, sub;
  if (SplitMaybeSubscriptedPath(label, &path, &sub)) {
    if (path == "metadata.annotations" || path == "metadata.labels") {
      *internal = std::string(label);
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        absl::StrCat("field label does not support subscript: ", AV(label)));
  }
  static const std::set<std::string, std::less<>> kSupported = {
      "metadata.annotations", "metadata.labels", "metadata.name",      "metadata.namespace",
      "metadata.uid",         "spec.nodeName",   "spec.restartPolicy", "spec.serviceAccountName",
      "spec.schedulerName",   "status.phase",    "status.hostIP",      "status.hostIPs",
      "status.podIP",         "status.podIPs",
  };
  if (kSupported.count(label) > 0) {
    *internal = std::string(label);
    return absl::OkStatus();
  }
  if (label == "spec.host") {
    *internal = "spec.nodeName";
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("field label not supported: ", AV(label)));
}

const Strs kVolumeFieldPaths = {"metadata.annotations", "metadata.labels", "metadata.name",
                                "metadata.namespace", "metadata.uid"};

const Strs kResourceFieldPaths = {"limits.cpu",   "limits.ephemeral-storage",   "limits.memory",
                                  "requests.cpu", "requests.ephemeral-storage", "requests.memory"};

Errs ValidateContainerResourceDivisor(std::string_view r, const Quantity& divisor,
                                      const std::string& path) {
  if (divisor.IsZero()) return {};
  const std::string d = divisor.String();
  static const std::set<std::string, std::less<>> kBytes = {
      "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"};
  Errs e;
  if (r == "limits.cpu" || r == "requests.cpu") {
    if (d != "1m" && d != "1") {
      e.push_back(InvalidS(Child(path, "divisor"), r,
                           "only divisor's values 1m and 1 are supported with the cpu resource"));
    }
  } else if (r == "limits.memory" || r == "requests.memory") {
    if (kBytes.count(d) == 0) {
      e.push_back(InvalidS(Child(path, "divisor"), r,
                           "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, "
                           "1Ti, 1Pi, 1Ei are supported with the memory resource"));
    }
  } else if (r == "limits.ephemeral-storage" || r == "requests.ephemeral-storage") {
    if (kBytes.count(d) == 0) {
      e.push_back(InvalidS(Child(path, "divisor"), r,
                           "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, "
                           "1Ti, 1Pi, 1Ei are supported with the local ephemeral storage "
                           "resource"));
    }
  }
  if (absl::StartsWith(AV(r), "requests.hugepages-") ||
      absl::StartsWith(AV(r), "limits.hugepages-")) {
    if (kBytes.count(d) == 0) {
      e.push_back(InvalidS(Child(path, "divisor"), r,
                           "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, "
                           "1Ti, 1Pi, 1Ei are supported with the hugepages resource"));
    }
  }
  return e;
}

Errs ValidateDownwardAPIVolumeFile(const DownwardAPIVolumeFile& f, const std::string& path) {
  Errs e;
  if (f.path.empty()) e.push_back(Required(Child(path, "path")));
  Append(&e, ValidateLocalNonReservedPath(f.path, Child(path, "path")));
  if (f.field_ref.has_value()) {
    Append(&e,
           ValidateObjectFieldSelector(*f.field_ref, kVolumeFieldPaths, Child(path, "fieldRef")));
    if (f.resource_field_ref.has_value()) {
      e.push_back(InvalidS(path, "resource",
                           "fieldRef and resourceFieldRef can not be specified simultaneously"));
    }
  } else if (f.resource_field_ref.has_value()) {
    Append(&e, ValidateContainerResourceFieldSelector(*f.resource_field_ref,
                                                      Child(path, "resourceFieldRef"), true));
  } else {
    e.push_back(Required(path, "one of fieldRef and resourceFieldRef is required"));
  }
  ValidateMode(f.mode, Child(path, "mode"), &e);
  return e;
}

Errs ValidateProjectedVolumeSource(const ProjectedVolumeSource& pv, const std::string& path) {
  Errs e;
  ValidateMode(pv.default_mode, Child(path, "defaultMode"), &e);
  std::set<std::string> all_paths;
  for (size_t i = 0; i < pv.sources.size(); ++i) {
    const VolumeProjection& src = pv.sources[i];
    const std::string src_path = Idx(Child(path, "sources"), i);
    int num = 0;
    auto key_paths = [&](const std::vector<KeyToPath>& items, const std::string& proj_path,
                         const std::string& owner) {
      const std::string items_path = Child(proj_path, "items");
      for (size_t j = 0; j < items.size(); ++j) {
        Append(&e, ValidateKeyToPath(items[j], Idx(items_path, j)));
        if (!items[j].path.empty() && !all_paths.insert(items[j].path).second) {
          e.push_back(InvalidS(path, owner, "conflicting duplicate paths"));
        }
      }
    };
    if (src.secret.has_value()) {
      ++num;
      const std::string pp = Child(src_path, "secret");
      if (src.secret->name.empty()) e.push_back(Required(Child(pp, "name")));
      key_paths(src.secret->items, pp, src.secret->name);
    }
    if (src.config_map.has_value()) {
      ++num;
      const std::string pp = Child(src_path, "configMap");
      if (src.config_map->name.empty()) e.push_back(Required(Child(pp, "name")));
      key_paths(src.config_map->items, pp, src.config_map->name);
    }
    if (src.downward_api.has_value()) {
      ++num;
      const std::string pp = Child(src_path, "downwardAPI");
      for (const auto& f : src.downward_api->items) {
        Append(&e, ValidateDownwardAPIVolumeFile(f, pp));
        if (!f.path.empty() && !all_paths.insert(f.path).second) {
          e.push_back(InvalidS(path, f.path, "conflicting duplicate paths"));
        }
      }
    }
    if (src.service_account_token.has_value()) {
      ++num;
      const std::string pp = Child(src_path, "serviceAccountToken");
      const int64_t exp = src.service_account_token->expiration_seconds.value_or(0);
      if (exp < 10 * 60) {
        e.push_back(InvalidI(Child(pp, "expirationSeconds"), exp,
                             "may not specify a duration less than 10 minutes"));
      }
      if (exp > (int64_t{1} << 32)) {
        e.push_back(InvalidI(Child(pp, "expirationSeconds"), exp,
                             "may not specify a duration larger than 2^32 seconds"));
      }
      if (src.service_account_token->path.empty()) {
        e.push_back(Required(Child(path, "path")));
      } else {
        Append(&e,
               ValidateLocalNonReservedPath(src.service_account_token->path, Child(path, "path")));
      }
    }
    if (num > 1) {
      e.push_back(Forbidden(src_path, "may not specify more than 1 volume type per source"));
    }
  }
  return e;
}

Errs ValidateVolumeSource(const Volume& v, const std::string& path) {
  Errs e;
  int num = 0;
  // One entry per upstream VolumeSource member in validateVolumeSource's order; `forbidden_name`
  // is the child name upstream reports (including its "downwarAPI" and "cephFS" spellings).
  struct Src {
    const char* json_name;
    const char* forbidden_name;
  };
  static constexpr Src kOrder[] = {
      {"emptyDir", "emptyDir"},
      {"hostPath", "hostPath"},
      {"gitRepo", "gitRepo"},
      {"gcePersistentDisk", "gcePersistentDisk"},
      {"awsElasticBlockStore", "awsElasticBlockStore"},
      {"secret", "secret"},
      {"nfs", "nfs"},
      {"iscsi", "iscsi"},
      {"glusterfs", "glusterfs"},
      {"flocker", "flocker"},
      {"persistentVolumeClaim", "persistentVolumeClaim"},
      {"rbd", "rbd"},
      {"cinder", "cinder"},
      {"cephfs", "cephFS"},
      {"quobyte", "quobyte"},
      {"downwardAPI", "downwarAPI"},
      {"fc", "fc"},
      {"flexVolume", "flexVolume"},
      {"configMap", "configMap"},
      {"azureFile", "azureFile"},
      {"vsphereVolume", "vsphereVolume"},
      {"photonPersistentDisk", "photonPersistentDisk"},
      {"portworxVolume", "portworxVolume"},
      {"azureDisk", "azureDisk"},
      {"storageos", "storageos"},
      {"projected", "projected"},
      {"scaleIO", "scaleIO"},
      {"csi", "csi"},
      {"ephemeral", "ephemeral"},
  };
  for (const Src& s : kOrder) {
    const std::string_view n = s.json_name;
    bool present;
    if (n == "emptyDir") {
      present = v.empty_dir.has_value();
    } else if (n == "hostPath") {
      present = v.host_path.has_value();
    } else if (n == "secret") {
      present = v.secret.has_value();
    } else if (n == "persistentVolumeClaim") {
      present = v.persistent_volume_claim.has_value();
    } else if (n == "downwardAPI") {
      present = v.downward_api.has_value();
    } else if (n == "configMap") {
      present = v.config_map.has_value();
    } else if (n == "projected") {
      present = v.projected.has_value();
    } else {
      present = v.other_sources.count(s.json_name) > 0;
    }
    if (!present) continue;
    if (n == "emptyDir") {
      // EmptyDir is first; no "more than 1" check possible yet.
      ++num;
      if (v.empty_dir->size_limit.has_value() && v.empty_dir->size_limit->Sign() < 0) {
        e.push_back(Forbidden(Child(Child(path, "emptyDir"), "sizeLimit"),
                              "SizeLimit field must be a valid resource quantity"));
      }
      continue;
    }
    if (num > 0) {
      e.push_back(
          Forbidden(Child(path, s.forbidden_name), "may not specify more than 1 volume type"));
      continue;
    }
    ++num;
    const std::string sp = Child(path, s.json_name);
    if (n == "hostPath") {
      const auto& hp = *v.host_path;
      if (hp.path.empty()) {
        e.push_back(Required(Child(sp, "path")));
        continue;
      }
      Append(&e, ValidatePathNoBacksteps(hp.path, Child(sp, "path")));
      static const Strs kTypes = {
          "",     "BlockDevice",  "CharDevice", "Directory", "DirectoryOrCreate",
          "File", "FileOrCreate", "Socket"};
      if (hp.type.has_value() &&
          std::find(kTypes.begin(), kTypes.end(), *hp.type) == kTypes.end()) {
        e.push_back(NotSupported(Child(sp, "type"), Q(*hp.type), kTypes));
      }
    } else if (n == "secret") {
      const auto& s2 = *v.secret;
      if (s2.secret_name.empty()) e.push_back(Required(Child(sp, "secretName")));
      ValidateMode(s2.default_mode, Child(sp, "defaultMode"), &e);
      for (size_t i = 0; i < s2.items.size(); ++i) {
        Append(&e, ValidateKeyToPath(s2.items[i], Idx(Child(sp, "items"), i)));
      }
    } else if (n == "persistentVolumeClaim") {
      if (v.persistent_volume_claim->claim_name.empty()) {
        e.push_back(Required(Child(sp, "claimName")));
      }
    } else if (n == "downwardAPI") {
      ValidateMode(v.downward_api->default_mode, Child(sp, "defaultMode"), &e);
      for (const auto& f : v.downward_api->items) {
        Append(&e, ValidateDownwardAPIVolumeFile(f, sp));
      }
    } else if (n == "configMap") {
      const auto& cm = *v.config_map;
      if (cm.name.empty()) e.push_back(Required(Child(sp, "name")));
      ValidateMode(cm.default_mode, Child(sp, "defaultMode"), &e);
      for (size_t i = 0; i < cm.items.size(); ++i) {
        Append(&e, ValidateKeyToPath(cm.items[i], Idx(Child(sp, "items"), i)));
      }
    } else if (n == "projected") {
      Append(&e, ValidateProjectedVolumeSource(*v.projected, sp));
    }
  }
  if (num == 0) e.push_back(Required(path, "must specify a volume type"));
  return e;
}

}  // namespace

Errs ValidatePathNoBacksteps(std::string_view target, const std::string& path) {
  for (absl::string_view part : absl::StrSplit(AV(target), '/')) {
    if (part == "..") return {InvalidS(path, target, "must not contain '..'")};
  }
  return {};
}

Errs ValidateLocalDescendingPath(std::string_view target, const std::string& path) {
  Errs e;
  if (IsAbsPath(target)) e.push_back(InvalidS(path, target, "must be a relative path"));
  Append(&e, ValidatePathNoBacksteps(target, path));
  return e;
}

Errs ValidateObjectFieldSelector(const ObjectFieldSelector& fs, const Strs& expressions,
                                 const std::string& path) {
  if (fs.api_version.empty()) return {Required(Child(path, "apiVersion"))};
  if (fs.field_path.empty()) return {Required(Child(path, "fieldPath"))};
  std::string internal;
  if (absl::Status st = ConvertDownwardAPIFieldLabel(fs.api_version, fs.field_path, &internal);
      !st.ok()) {
    return {InvalidS(Child(path, "fieldPath"), fs.field_path,
                     absl::StrCat("error converting fieldPath: ", st.message()))};
  }
  std::string p, sub;
  if (SplitMaybeSubscriptedPath(internal, &p, &sub)) {
    if (p == "metadata.annotations") return ValidateQualifiedName(absl::AsciiStrToLower(sub), path);
    if (p == "metadata.labels") return ValidateQualifiedName(sub, path);
    return {InvalidS(path, p, "does not support subscript")};
  }
  if (std::find(expressions.begin(), expressions.end(), internal) == expressions.end()) {
    return {NotSupported(Child(path, "fieldPath"), Q(internal), expressions)};
  }
  return {};
}

Errs ValidateContainerResourceFieldSelector(const ResourceFieldSelector& fs,
                                            const std::string& path, bool volume) {
  Errs e;
  if (volume && fs.container_name.empty()) {
    e.push_back(Required(Child(path, "containerName")));
  } else if (fs.resource.empty()) {
    e.push_back(Required(Child(path, "resource")));
  } else if (std::find(kResourceFieldPaths.begin(), kResourceFieldPaths.end(), fs.resource) ==
                 kResourceFieldPaths.end() &&
             !absl::StartsWith(fs.resource, "requests.hugepages-") &&
             !absl::StartsWith(fs.resource, "limits.hugepages-")) {
    e.push_back(NotSupported(Child(path, "resource"), Q(fs.resource), kResourceFieldPaths));
  }
  Append(&e, ValidateContainerResourceDivisor(fs.resource, fs.divisor, path));
  return e;
}

// Returns the valid volumes by name.
std::map<std::string, const Volume*> ValidateVolumes(const std::vector<Volume>& volumes,
                                                     const std::string& path, Errs* e) {
  std::map<std::string, const Volume*> vols;
  for (size_t i = 0; i < volumes.size(); ++i) {
    const Volume& v = volumes[i];
    const std::string idx = Idx(path, i);
    const std::string name_path = Child(idx, "name");
    Errs el = ValidateVolumeSource(v, idx);
    if (v.name.empty()) {
      el.push_back(Required(name_path));
    } else {
      Append(&el, ValidateDNS1123Label(v.name, name_path));
    }
    if (vols.count(v.name) > 0) el.push_back(Duplicate(name_path, Q(v.name)));
    if (el.empty()) {
      vols[v.name] = &v;
    } else {
      Append(e, std::move(el));
    }
  }
  return vols;
}

}  // namespace kubelet::api::validation_internal
