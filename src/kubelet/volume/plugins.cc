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
#include "api/fieldpath.h"
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

const api::Quantity* Find(const api::ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? nullptr : &it->second;
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

absl::StatusOr<std::string> ExtractResourceValue(const api::ResourceFieldSelector& fs,
                                                 const api::Pod& pod,
                                                 const api::ResourceList& node_allocatable) {
  for (const auto* list : {&pod.spec.containers, &pod.spec.init_containers}) {
    for (const api::Container& c : *list) {
      if (c.name != fs.container_name) continue;
      return api::ExtractContainerResourceValue(
          fs, api::MergeContainerResourceLimits(c, node_allocatable));
    }
  }
  return absl::NotFoundError(absl::StrCat("container ", fs.container_name, " not found"));
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
      absl::StatusOr<std::string> v =
          api::ExtractFieldPathAsString(pod, item.field_ref->field_path);
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
