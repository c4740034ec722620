#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/volume/mount_utils.h"
#include "kubelet/volume/subpath.h"

namespace kubelet::volume {
namespace {

// How many mounts stacked on one bind target are unmounted before giving up.
constexpr int kMaxStackedMounts = 8;

absl::Status ErrnoStatus(int err, std::string_view what) {
  return absl::InternalError(absl::StrCat(AV(what), ": ", strerror(err)));
}

// realpath(3); "" with errno set when it fails.
std::string RealPath(const std::string& p) {
  char* r = ::realpath(p.c_str(), nullptr);
  if (r == nullptr) return "";
  std::string out(r);
  ::free(r);
  return out;
}

bool Within(const std::string& path, const std::string& base) {
  return path == base || absl::StartsWith(AV(path), AV(base == "/" ? base : base + "/"));
}

// The elements of a relative path, without "" and "."; ".." is refused.
absl::StatusOr<std::vector<std::string>> Elements(const std::string& rel) {
  std::vector<std::string> out;
  for (absl::string_view e : absl::StrSplit(AV(rel), '/')) {
    if (e.empty() || e == ".") continue;
    if (e == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("path ", log::Quote(rel), " must not contain '..'"));
    }
    out.emplace_back(e.data(), e.size());
  }
  return out;
}

std::string JoinElements(const std::string& base, const std::vector<std::string>& elems, size_t n) {
  std::string out = base;
  for (size_t i = 0; i < n; ++i) absl::StrAppend(&out, base == "/" && i == 0 ? "" : "/", elems[i]);
  return out;
}

// Opens `base` and then each element of `elems` below it with O_PATH | O_NOFOLLOW. Each element
// must be a real file (never a symlink) and, when `dirs_only`, a directory.
absl::StatusOr<ScopedFd> Walk(const std::string& base, const std::vector<std::string>& elems,
                              bool dirs_only) {
  ScopedFd fd(::open(base.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    return ErrnoStatus(err, absl::StrCat("open ", base));
  }
  std::string cur = base;
  for (const std::string& e : elems) {
    absl::StrAppend(&cur, cur == "/" ? "" : "/", e);
    ScopedFd child(::openat(fd.get(), e.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!child.valid()) {
      const int err = errno;
      return ErrnoStatus(err, absl::StrCat("open ", cur));
    }
    struct stat st;
    if (::fstat(child.get(), &st) != 0) {
      const int err = errno;
      return ErrnoStatus(err, absl::StrCat("fstat ", cur));
    }
    if (S_ISLNK(st.st_mode)) {
      return absl::PermissionDeniedError(absl::StrCat("unexpected symlink found ", cur));
    }
    if (dirs_only && !S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(cur, " is not a directory"));
    }
    fd = std::move(child);
  }
  return fd;
}

// mkdir -p with `mode` (subject to the umask) for the kubelet's own directories.
absl::Status MkdirAll(const std::string& path, mode_t mode) {
  std::string cur;
  for (absl::string_view e : absl::StrSplit(AV(path), '/')) {
    if (e.empty()) continue;
    absl::StrAppend(&cur, "/", e);
    if (::mkdir(cur.c_str(), mode) != 0 && errno != EEXIST) {
      const int err = errno;
      return ErrnoStatus(err, absl::StrCat("mkdir ", cur));
    }
  }
  return absl::OkStatus();
}

// Unmounts everything stacked on `path`.
absl::Status UnmountAll(const std::string& path) {
  for (int i = 0; IsMountPoint(path); ++i) {
    if (i == kMaxStackedMounts) {
      return absl::FailedPreconditionError(absl::StrCat(path, " is still mounted"));
    }
    if (absl::Status st = Unmount(path); !st.ok()) return st;
  }
  return absl::OkStatus();
}

// Removes one bind target: unmounted first, then rmdir / unlink (never recursive, so nothing
// below a mount that is somehow still there is deleted).
absl::Status RemoveBindTarget(const std::string& path) {
  if (absl::Status st = UnmountAll(path); !st.ok()) return st;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    return err == ENOENT ? absl::OkStatus() : ErrnoStatus(err, absl::StrCat("lstat ", path));
  }
  const int rc = S_ISDIR(st.st_mode) ? ::rmdir(path.c_str()) : ::unlink(path.c_str());
  if (rc != 0 && errno != ENOENT) {
    const int err = errno;
    return ErrnoStatus(err, absl::StrCat("remove ", path));
  }
  return absl::OkStatus();
}

// rmdir that tolerates a missing or non-empty directory (the caller reports why it is not).
void RemoveDirIfEmpty(const std::string& dir) { (void)::rmdir(dir.c_str()); }

}  // namespace

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

ScopedFd::~ScopedFd() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status SafeMakeDir(const std::string& base, const std::string& rel, mode_t perm) {
  absl::StatusOr<std::vector<std::string>> elems = Elements(rel);
  if (!elems.ok()) return elems.status();
  // The longest prefix that exists (symlinks followed, as they will be for the subPath).
  size_t existing = 0;
  for (; existing < elems->size(); ++existing) {
    const std::string p = JoinElements(base, *elems, existing + 1);
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT) break;
      return ErrnoStatus(err, absl::StrCat("lstat ", p));
    }
  }
  // That prefix must resolve inside base; it is walked again below without following symlinks.
  std::vector<std::string> resolved_elems;
  if (existing > 0) {
    const std::string p = JoinElements(base, *elems, existing);
    const std::string resolved = RealPath(p);
    if (resolved.empty()) {
      const int err = errno;
      return ErrnoStatus(err, absl::StrCat("evaluate symlinks of ", p));
    }
    if (!Within(resolved, base)) {
      return absl::PermissionDeniedError(
          absl::StrCat("path ", log::Quote(p), " is outside of ", log::Quote(base)));
    }
    absl::StatusOr<std::vector<std::string>> r = Elements(resolved.substr(base.size()));
    if (!r.ok()) return r.status();
    resolved_elems = *std::move(r);
  }
  absl::StatusOr<ScopedFd> parent = Walk(base, resolved_elems, /*dirs_only=*/true);
  if (!parent.ok()) return parent.status();
  ScopedFd fd = *std::move(parent);
  std::string cur = JoinElements(base, *elems, existing);
  for (size_t i = existing; i < elems->size(); ++i) {
    const std::string& e = (*elems)[i];
    absl::StrAppend(&cur, cur == "/" ? "" : "/", e);
    bool created = true;
    if (::mkdirat(fd.get(), e.c_str(), perm) != 0) {
      const int err = errno;
      if (err != EEXIST) return ErrnoStatus(err, absl::StrCat("mkdir ", cur));
      created = false;  // appeared meanwhile: fine if it is a directory, checked below
    }
    // O_NOFOLLOW | O_DIRECTORY: a symlink planted since the mkdirat fails here.
    ScopedFd child(::openat(fd.get(), e.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!child.valid()) {
      const int err = errno;
      if (err == ELOOP || err == ENOTDIR) {
        return absl::PermissionDeniedError(
            absl::StrCat(cur, " is a symlink or not a directory, refusing to follow it"));
      }
      return ErrnoStatus(err, absl::StrCat("open ", cur));
    }
    if (created && ::fchmod(child.get(), perm) != 0) {
      const int err = errno;
      return ErrnoStatus(err, absl::StrCat("chmod ", cur));
    }
    fd = std::move(child);
  }
  return absl::OkStatus();
}

absl::StatusOr<ScopedFd> SafeOpen(const std::string& base, const std::string& rel) {
  absl::StatusOr<std::vector<std::string>> elems = Elements(rel);
  if (!elems.ok()) return elems.status();
  return Walk(base, *elems, /*dirs_only=*/false);
}

std::string SubPathBindTarget(const SubPath& sp) {
  return absl::StrCat(sp.pod_dir, "/", kVolumeSubPathsDir, "/", sp.volume_name, "/",
                      sp.container_name, "/", sp.mount_index);
}

absl::StatusOr<std::string> BindSubPath(const SubPath& sp) {
  if (absl::StartsWith(AV(sp.sub_path), "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat("subpath ", log::Quote(sp.sub_path), " must not be absolute"));
  }
  // Symlinks are evaluated once, here; everything after works on the resolved path and refuses
  // symlinks, so a swap from now on fails instead of escaping.
  const std::string base = RealPath(sp.volume_path);
  if (base.empty()) {
    const int err = errno;
    return ErrnoStatus(err, absl::StrCat("evaluate symlinks of volume path ", sp.volume_path));
  }
  const std::string full = absl::StrCat(sp.volume_path, "/", sp.sub_path);
  const std::string resolved = RealPath(full);
  if (resolved.empty()) {
    const int err = errno;
    return ErrnoStatus(err, absl::StrCat("evaluate symlinks of subpath ", full));
  }
  if (!Within(resolved, base)) {
    return absl::PermissionDeniedError(absl::StrCat("subpath ", log::Quote(resolved),
                                                    " not within volume path ", log::Quote(base)));
  }
  absl::StatusOr<ScopedFd> fd = SafeOpen(base, resolved.substr(base.size()));
  if (!fd.ok()) return fd.status();
  struct stat src;
  if (::fstat(fd->get(), &src) != 0) {
    const int err = errno;
    return ErrnoStatus(err, absl::StrCat("fstat ", resolved));
  }

  std::string target = SubPathBindTarget(sp);
  const std::string target_dir = target.substr(0, target.rfind('/'));
  if (absl::Status st = MkdirAll(target_dir, 0750); !st.ok()) return st;
  // Mount points are matched against /proc/self/mountinfo, which lists resolved paths.
  const std::string real_target_dir = RealPath(target_dir);
  if (real_target_dir.empty()) {
    const int err = errno;
    return ErrnoStatus(err, absl::StrCat("evaluate symlinks of ", target_dir));
  }
  target = absl::StrCat(real_target_dir, "/", sp.mount_index);
  struct stat tst;
  bool exists = ::lstat(target.c_str(), &tst) == 0;
  if (exists && IsMountPoint(target)) {
    if (tst.st_dev == src.st_dev && tst.st_ino == src.st_ino) {
      KLOG_V(4, "Skipping bind-mounting subpath: already mounted", "target", target, "subpath",
             resolved);
      return target;
    }
    // Another file is mounted there (e.g. the subPath's directory was replaced since).
    if (absl::Status st = UnmountAll(target); !st.ok()) return st;
    exists = ::lstat(target.c_str(), &tst) == 0;
  }
  if (exists && (S_ISLNK(tst.st_mode) || S_ISDIR(tst.st_mode) != S_ISDIR(src.st_mode))) {
    if (absl::Status st = RemoveBindTarget(target); !st.ok()) return st;
    exists = false;
  }
  if (!exists) {
    if (S_ISDIR(src.st_mode)) {
      if (::mkdir(target.c_str(), 0750) != 0) {
        const int err = errno;
        return ErrnoStatus(err, absl::StrCat("mkdir ", target));
      }
    } else {
      ScopedFd f(
          ::open(target.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0640));
      if (!f.valid()) {
        const int err = errno;
        return ErrnoStatus(err, absl::StrCat("create ", target));
      }
    }
  }
  // The fd's magic link names the very file that was checked, whatever the path says now.
  const std::string source = absl::StrCat("/proc/self/fd/", fd->get());
  if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    const int err = errno;
    if (!exists) (void)RemoveBindTarget(target);
    return ErrnoStatus(err, absl::StrCat("bind mount ", resolved, " (", source, ") on ", target));
  }
  KLOG_V(4, "Bind-mounted subpath", "subpath", resolved, "target", target);
  return target;
}

absl::Status CleanSubPaths(const std::string& pod_dir, const std::string& volume_name) {
  // Resolved, as mount points are matched against /proc/self/mountinfo.
  const std::string real_pod_dir = RealPath(pod_dir);
  if (real_pod_dir.empty()) return absl::OkStatus();  // no pod dir, nothing mounted there
  const std::string root = absl::StrCat(real_pod_dir, "/", kVolumeSubPathsDir);
  const std::string volume_dir = absl::StrCat(root, "/", volume_name);
  std::vector<std::string> errors;
  for (const std::string& container : ListDir(volume_dir)) {
    const std::string container_dir = absl::StrCat(volume_dir, "/", container);
    struct stat st;
    if (::lstat(container_dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      errors.push_back(absl::StrCat(container_dir, " is not a directory"));
      continue;
    }
    for (const std::string& index : ListDir(container_dir)) {
      if (absl::Status s = RemoveBindTarget(absl::StrCat(container_dir, "/", index)); !s.ok()) {
        errors.push_back(std::string(s.message()));
      }
    }
    RemoveDirIfEmpty(container_dir);
  }
  RemoveDirIfEmpty(volume_dir);
  RemoveDirIfEmpty(root);
  if (!errors.empty()) {
    return absl::InternalError(absl::StrCat("failed to clean subpaths of volume ",
                                            log::Quote(volume_name), ": ",
                                            absl::StrJoin(errors, "; ")));
  }
  return absl::OkStatus();
}

}  // namespace kubelet::volume
