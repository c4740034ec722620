#include "kubelet/volume/plugins.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "api/pod_validation.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/volume/mount_utils.h"

namespace kubelet::volume {
namespace {

namespace fs = std::filesystem;

enum class FileKind { kMissing, kDirectory, kFile, kSocket, kCharDevice, kBlockDevice, kOther };

FileKind KindOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return FileKind::kMissing;
  if (S_ISDIR(st.st_mode)) return FileKind::kDirectory;
  if (S_ISREG(st.st_mode)) return FileKind::kFile;
  if (S_ISSOCK(st.st_mode)) return FileKind::kSocket;
  if (S_ISCHR(st.st_mode)) return FileKind::kCharDevice;
  if (S_ISBLK(st.st_mode)) return FileKind::kBlockDevice;
  return FileKind::kOther;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

absl::Status TypeMismatch(const std::string& path, std::string_view what) {
  return absl::FailedPreconditionError(
      absl::StrCat("hostPath type check failed: ", path, " is not a ", AV(what)));
}

// fieldpath.SplitMaybeSubscriptedPath.
bool SplitSubscriptedPath(const std::string& path, std::string* base, std::string* subscript) {
  if (!absl::EndsWith(path, "']")) return false;
  const std::string s = path.substr(0, path.size() - 2);
  const size_t open = s.find("['");
  if (open == std::string::npos || open == 0) return false;
  *base = s.substr(0, open);
  *subscript = s.substr(open + 2);
  return true;
}

const api::Quantity* Find(const api::ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? nullptr : &it->second;
}

std::string CeilDiv(double value, double divisor) {
  if (divisor == 0) return "0";
  const double r = std::ceil(value / divisor);
  if (!(r < 9.2e18 && r > -9.2e18)) return "0";
  return std::to_string(static_cast<int64_t>(r));
}

int64_t MemoryLimit(const api::Container& c) {
  const api::Quantity* q = Find(c.resources.limits, api::kResourceMemory);
  return q == nullptr ? 0 : q->Value();
}

}  // namespace

std::string EscapePluginName(std::string_view plugin_name) {
  return absl::StrReplaceAll(AV(plugin_name), {{"/", "~"}});
}

// ---- hostPath ------------------------------------------------------------------------------

absl::Status CheckHostPathType(const std::string& path, const std::optional<std::string>& type) {
  if (!type.has_value() || type->empty()) return absl::OkStatus();
  const std::string& t = *type;
  if (t == "DirectoryOrCreate") {
    if (!Exists(path)) {
      std::error_code ec;
      fs::create_directories(path, ec);
      if (ec) return absl::InternalError(absl::StrCat("mkdir ", path, ": ", ec.message()));
      ::chmod(path.c_str(), 0755);
      return absl::OkStatus();
    }
    if (KindOf(path) != FileKind::kDirectory) return TypeMismatch(path, "directory");
    return absl::OkStatus();
  }
  if (t == "Directory") {
    if (KindOf(path) != FileKind::kDirectory) return TypeMismatch(path, "directory");
    return absl::OkStatus();
  }
  if (t == "FileOrCreate") {
    if (!Exists(path)) {
      int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) {
        const int err = errno;
        return absl::InternalError(absl::StrCat("open ", path, ": ", strerror(err)));
      }
      ::close(fd);
      return absl::OkStatus();
    }
    if (KindOf(path) != FileKind::kFile) return TypeMismatch(path, "file");
    return absl::OkStatus();
  }
  if (t == "File") {
    if (KindOf(path) != FileKind::kFile) return TypeMismatch(path, "file");
    return absl::OkStatus();
  }
  if (t == "Socket") {
    if (KindOf(path) != FileKind::kSocket) return TypeMismatch(path, "socket file");
    return absl::OkStatus();
  }
  if (t == "CharDevice") {
    if (KindOf(path) != FileKind::kCharDevice) return TypeMismatch(path, "character device");
    return absl::OkStatus();
  }
  if (t == "BlockDevice") {
    if (KindOf(path) != FileKind::kBlockDevice) return TypeMismatch(path, "block device");
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(t, " is an invalid volume type"));
}

// ---- downwardAPI ---------------------------------------------------------------------------

std::string FormatMap(const api::StringMap& m) {
  std::vector<std::string> lines;
  lines.reserve(m.size());
  for (const auto& [k, v] : m) lines.push_back(absl::StrCat(k, "=", log::Quote(v)));
  return absl::StrJoin(lines, "\n");
}

absl::StatusOr<std::string> ExtractFieldPathAsString(const api::Pod& pod,
                                                     const std::string& field_path) {
  std::string base, subscript;
  if (SplitSubscriptedPath(field_path, &base, &subscript)) {
    if (base == "metadata.annotations") {
      std::vector<std::string> errs = api::IsQualifiedName(absl::AsciiStrToLower(subscript));
      if (!errs.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid key subscript in ", field_path, ": ", absl::StrJoin(errs, ";")));
      }
      auto it = pod.metadata.annotations.find(subscript);
      return it == pod.metadata.annotations.end() ? "" : it->second;
    }
    if (base == "metadata.labels") {
      std::vector<std::string> errs = api::IsQualifiedName(subscript);
      if (!errs.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid key subscript in ", field_path, ": ", absl::StrJoin(errs, ";")));
      }
      auto it = pod.metadata.labels.find(subscript);
      return it == pod.metadata.labels.end() ? "" : it->second;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("fieldPath ", log::Quote(field_path), " does not support subscript"));
  }
  if (field_path == "metadata.annotations") return FormatMap(pod.metadata.annotations);
  if (field_path == "metadata.labels") return FormatMap(pod.metadata.labels);
  if (field_path == "metadata.name") return pod.metadata.name;
  if (field_path == "metadata.namespace") return pod.metadata.namespace_;
  if (field_path == "metadata.uid") return pod.metadata.uid;
  return absl::InvalidArgumentError(absl::StrCat("unsupported fieldPath: ", field_path));
}

absl::StatusOr<std::string> ExtractResourceValue(const api::ResourceFieldSelector& fs,
                                                 const api::Pod& pod,
                                                 const api::ResourceList& node_allocatable) {
  const api::Container* found = nullptr;
  for (const auto* list : {&pod.spec.containers, &pod.spec.init_containers}) {
    for (const api::Container& c : *list) {
      if (found == nullptr && c.name == fs.container_name) found = &c;
    }
  }
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat("container ", fs.container_name, " not found"));
  }
  // MergeContainerResourceLimits: unset or zero limits take node allocatable.
  api::ResourceList limits = found->resources.limits;
  for (const char* name :
       {api::kResourceCPU, api::kResourceMemory, api::kResourceEphemeralStorage}) {
    auto it = limits.find(name);
    if (it != limits.end() && !it->second.IsZero()) continue;
    if (const api::Quantity* a = Find(node_allocatable, name); a != nullptr) limits[name] = *a;
  }
  const api::ResourceList& requests = found->resources.requests;
  api::Quantity divisor = fs.divisor;
  if (divisor.IsZero()) divisor = api::Quantity::FromValue(1);
  auto get = [](const api::ResourceList& list, const std::string& name) {
    const api::Quantity* q = Find(list, name);
    return q == nullptr ? api::Quantity() : *q;
  };
  auto cpu = [&](const api::Quantity& q) {
    return CeilDiv(static_cast<double>(q.MilliValue()), static_cast<double>(divisor.MilliValue()));
  };
  auto bytes = [&](const api::Quantity& q) {
    return CeilDiv(static_cast<double>(q.Value()), static_cast<double>(divisor.Value()));
  };
  const std::string& r = fs.resource;
  if (r == "limits.cpu") return cpu(get(limits, api::kResourceCPU));
  if (r == "requests.cpu") return cpu(get(requests, api::kResourceCPU));
  if (r == "limits.memory") return bytes(get(limits, api::kResourceMemory));
  if (r == "requests.memory") return bytes(get(requests, api::kResourceMemory));
  if (r == "limits.ephemeral-storage") return bytes(get(limits, api::kResourceEphemeralStorage));
  if (r == "requests.ephemeral-storage") {
    return bytes(get(requests, api::kResourceEphemeralStorage));
  }
  if (absl::StartsWith(r, "limits.hugepages-")) return bytes(get(limits, r.substr(7)));
  if (absl::StartsWith(r, "requests.hugepages-")) return bytes(get(requests, r.substr(9)));
  return absl::InvalidArgumentError(absl::StrCat("unsupported container resource : ", r));
}

absl::StatusOr<Payload> CollectDownwardAPIData(const api::Pod& pod,
                                               const std::vector<api::DownwardAPIVolumeFile>& items,
                                               std::optional<int32_t> default_mode,
                                               const api::ResourceList& node_allocatable) {
  Payload out;
  std::vector<std::string> errors;
  for (const api::DownwardAPIVolumeFile& item : items) {
    FileProjection f;
    f.mode = static_cast<uint32_t>(
        item.mode.value_or(default_mode.value_or(api::kDefaultVolumeMode)) & 07777);
    if (item.field_ref.has_value()) {
      absl::StatusOr<std::string> v = ExtractFieldPathAsString(pod, item.field_ref->field_path);
      if (v.ok()) {
        f.data = *std::move(v);
      } else {
        KLOG_ERROR(v.status(), "Unable to extract field", "fieldPath", item.field_ref->field_path);
        errors.push_back(std::string(v.status().message()));
      }
    } else if (item.resource_field_ref.has_value()) {
      absl::StatusOr<std::string> v =
          ExtractResourceValue(*item.resource_field_ref, pod, node_allocatable);
      if (v.ok()) {
        f.data = *std::move(v);
      } else {
        KLOG_ERROR(v.status(), "Unable to extract field", "resource",
                   item.resource_field_ref->resource);
        errors.push_back(std::string(v.status().message()));
      }
    }
    std::string path = fs::path(item.path).lexically_normal().string();
    out[path] = std::move(f);
  }
  if (errors.size() == 1) return absl::InvalidArgumentError(errors[0]);
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("[", absl::StrJoin(errors, ", "), "]"));
  }
  return out;
}

// ---- emptyDir ------------------------------------------------------------------------------

int64_t PodMemoryLimitBytes(const api::Pod& pod) {
  int64_t sum = 0;
  for (const api::Container& c : pod.spec.containers) {
    const int64_t l = MemoryLimit(c);
    if (l <= 0) return 0;
    sum += l;
  }
  int64_t init_max = 0;
  int64_t sidecars = 0;
  for (const api::Container& c : pod.spec.init_containers) {
    const int64_t l = MemoryLimit(c);
    if (l <= 0) return 0;
    if (api::IsRestartableInitContainer(c)) {
      sidecars += l;
      sum += l;
      init_max = std::max(init_max, sidecars);
    } else {
      init_max = std::max(init_max, sidecars + l);
    }
  }
  int64_t limit = std::max(sum, init_max);
  if (const api::Quantity* o = Find(pod.spec.overhead, api::kResourceMemory); o != nullptr) {
    limit += o->Value();
  }
  return limit;
}

int64_t MemoryBackedSizeBytes(const api::Pod& pod, const std::optional<api::Quantity>& size_limit,
                              int64_t node_allocatable_memory) {
  // Unknown allocatable (<= 0) bounds nothing.
  int64_t size = node_allocatable_memory > 0 ? node_allocatable_memory : 0;
  auto lower = [&](int64_t v) {
    if (v > 0 && (size <= 0 || v <= size)) size = v;
  };
  lower(PodMemoryLimitBytes(pod));
  if (size_limit.has_value()) lower(size_limit->Value());
  return size;
}

absl::Status SetUpEmptyDir(const std::string& dir, bool memory, int64_t tmpfs_size_bytes) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("mkdir ", dir, ": ", ec.message()));
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    return absl::InternalError(absl::StrCat("stat ", dir, ": ", strerror(err)));
  }
  if (!memory) {
    if ((st.st_mode & 07777) != 0777 && ::chmod(dir.c_str(), 0777) != 0) {
      const int err = errno;
      return absl::InternalError(absl::StrCat("chmod ", dir, ": ", strerror(err)));
    }
    return absl::OkStatus();
  }
  if (IsMountPoint(dir)) {
    if (IsTmpfs(dir)) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat(dir, " is mounted but is not a tmpfs; refusing to set up an emptyDir on it"));
  }
  ::chmod(dir.c_str(), 0777);
  return MountTmpfs(dir, tmpfs_size_bytes);
}

absl::Status TearDownEmptyDir(const std::string& dir) {
  // Nested mounts (e.g. Bidirectional propagation) go first, deepest first.
  for (const std::string& m : MountPointsUnder(dir)) {
    if (absl::Status st = Unmount(m); !st.ok()) return st;
  }
  return RemoveAllNoCrossMounts(dir);
}

std::string EmptyDirLimitMessage(const std::string& volume, const api::Quantity& limit) {
  return absl::StrCat("Usage of EmptyDir volume ", log::Quote(volume), " exceeds the limit ",
                      log::Quote(limit.String()), ". ");
}

}  // namespace kubelet::volume
