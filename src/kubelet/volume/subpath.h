// subPath pinning (upstream pkg/volume/util/subpath, Linux). A container's subPath is never
// handed to the runtime as a path below the volume: the container can write there, and could
// swap a checked directory for a symlink between the kubelet's check and the runtime's bind
// mount (CVE-2017-1002101). Instead:
//
//   1. SafeMakeDir creates the missing directories of a subPath one element at a time from open
//      directory fds (mkdirat, then openat with O_NOFOLLOW), so a symlink planted meanwhile is
//      refused instead of followed.
//   2. BindSubPath evaluates the subPath's symlinks once (realpath); the result must stay in the
//      volume ("subpath ... not within volume path ..."). Relative and absolute symlinks that
//      resolve inside the volume are fine.
//   3. SafeOpen opens that resolved path element by element from the volume root with
//      openat(O_PATH | O_NOFOLLOW | O_CLOEXEC) and refuses any element that is a symlink (or
//      ".."): a swap after step 2 makes the open fail instead of escaping.
//   4. /proc/self/fd/<fd> is bind-mounted onto
//        <pod dir>/volume-subpaths/<volume name>/<container name>/<volumeMount index>
//      (an empty directory or file, matching the source) and that path is what the runtime
//      mounts. A bind mount already there of the same file (container or kubelet restart) is
//      reused; one of another file is replaced.
//
// CleanSubPaths unmounts and removes those entries of one volume (rmdir / unlink only, never a
// recursive delete: an entry that stays mounted is reported, never descended into), so that the
// pod directory can be removed afterwards.
//
// Thread-safety: stateless free functions; callers serialize work on one pod. Mounting needs
// CAP_SYS_ADMIN.
#ifndef KUBELET_KUBELET_VOLUME_SUBPATH_H_
#define KUBELET_KUBELET_VOLUME_SUBPATH_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kubelet::volume {

// Owns one file descriptor (closed on destruction). Move-only.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.Release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// One subPath of a container's volumeMount.
struct SubPath {
  std::string volume_path;  // the volume's host path (may contain symlinks)
  std::string sub_path;     // relative to volume_path; absolute or ".." paths are refused
  std::string pod_dir;      // <root dir>/pods/<uid>
  std::string volume_name;
  std::string container_name;
  int mount_index = 0;  // index of the volumeMount in the container's list
};

// "volume-subpaths": the folder below the pod dir holding the bind mounts.
inline constexpr char kVolumeSubPathsDir[] = "volume-subpaths";

// Creates the missing directories of `rel` below the directory `base` (no symlink in `base`
// itself, e.g. a realpath) with mode `perm` (chmod'ed, so the umask does not apply). Existing
// elements may be symlinks that resolve inside `base`; an element that leaves `base`, is not a
// directory, or turns into a symlink while the directories are being created fails.
absl::Status SafeMakeDir(const std::string& base, const std::string& rel, mode_t perm);

// Opens `rel` below `base` (see SafeMakeDir) without following any symlink: an O_PATH fd of the
// file itself. Fails when an element of `rel` is ".." or a symlink, or does not exist.
absl::StatusOr<ScopedFd> SafeOpen(const std::string& base, const std::string& rel);

// <pod_dir>/volume-subpaths/<volume_name>/<container_name>/<mount_index>.
std::string SubPathBindTarget(const SubPath& sp);

// Steps 2 to 4 above: pins the existing subPath and returns the bind target for the runtime.
// The error is detailed (it names host paths): callers log it and return a generic message to
// the pod, as upstream does.
absl::StatusOr<std::string> BindSubPath(const SubPath& sp);

// Unmounts and removes <pod_dir>/volume-subpaths/<volume_name> (and volume-subpaths itself when
// it ends up empty). Missing entries are not an error.
absl::Status CleanSubPaths(const std::string& pod_dir, const std::string& volume_name);

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_SUBPATH_H_
