#include "kubelet/volume/atomic_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::volume {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxPathLength = 4096;
constexpr size_t kMaxFileNameLength = 255;

absl::Status ErrnoError(std::string_view op, const std::string& path, int err) {
  return absl::InternalError(absl::StrCat(AV(op), " ", path, ": ", strerror(err)));
}

std::string TopLevel(const std::string& path) {
  const size_t slash = path.find('/');
  return slash == std::string::npos ? path : path.substr(0, slash);
}

// Reads the regular files below `dir` (relative path -> contents + permission bits).
absl::StatusOr<Payload> ReadVersion(const std::string& dir) {
  Payload out;
  std::error_code ec;
  auto it = fs::recursive_directory_iterator(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("read ", dir, ": ", ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return absl::InternalError(absl::StrCat("read ", dir, ": ", ec.message()));
    if (!it->is_regular_file(ec)) continue;
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    FileProjection f;
    f.mode = st.st_mode & 07777;
    int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError("open", it->path().string(), errno);
    char buf[8192];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof(buf))) > 0) f.data.append(buf, static_cast<size_t>(n));
    ::close(fd);
    // Lexical: the throwing fs::relative would also resolve symlinks, and the path is below dir.
    out.emplace(it->path().lexically_relative(dir).string(), std::move(f));
  }
  return out;
}

absl::Status WriteFile(const std::string& path, const FileProjection& f) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, f.mode);
  if (fd < 0) return ErrnoError("open", path, errno);
  size_t off = 0;
  while (off < f.data.size()) {
    ssize_t n = ::write(fd, f.data.data() + off, f.data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return ErrnoError("write", path, err);
    }
    off += static_cast<size_t>(n);
  }
  if (::fchmod(fd, f.mode) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoError("chmod", path, err);
  }
  if (::close(fd) != 0) return ErrnoError("close", path, errno);
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePayloadPath(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("invalid path: must not be empty");
  if (path.size() > kMaxPathLength) {
    return absl::InvalidArgumentError(absl::StrCat("invalid path: must be less than or equal to ",
                                                   kMaxPathLength, " characters"));
  }
  if (path[0] == '/') {
    return absl::InvalidArgumentError("invalid path: must be relative path");
  }
  if (path.rfind("..", 0) == 0) {
    return absl::InvalidArgumentError("invalid path: must not start with '..'");
  }
  for (absl::string_view element : absl::StrSplit(AV(path), '/')) {
    if (element == "..") {
      return absl::InvalidArgumentError("invalid path: must not contain '..'");
    }
    if (element.size() > kMaxFileNameLength) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid path: filenames must be less than or equal to ", kMaxFileNameLength,
                       " characters"));
    }
  }
  return absl::OkStatus();
}

AtomicWriter::AtomicWriter(std::string target_dir, std::string log_context, const Clock& clock)
    : target_dir_(std::move(target_dir)), log_context_(std::move(log_context)), clock_(clock) {}

absl::Status AtomicWriter::Write(const Payload& raw) {
  // 1. Validate and clean the payload paths.
  Payload payload;
  for (const auto& [path, file] : raw) {
    if (absl::Status st = ValidatePayloadPath(path); !st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(log_context_, ": invalid payload: ", st.message()));
    }
    std::string clean = fs::path(path).lexically_normal().string();
    while (!clean.empty() && clean.back() == '/') clean.pop_back();
    payload[clean] = file;
  }
  std::error_code ec;
  fs::create_directories(target_dir_, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("mkdir ", target_dir_, ": ", ec.message()));
  }

  // 2. The current version, if any.
  const std::string data_link = absl::StrCat(target_dir_, "/", kDataDirName);
  std::string old_version;
  {
    char buf[4096];
    ssize_t n = ::readlink(data_link.c_str(), buf, sizeof(buf) - 1);
    if (n > 0) old_version.assign(buf, static_cast<size_t>(n));
    // Only a version directory of ours (a plain "..<name>" entry) is read and later removed.
    if (old_version.rfind("..", 0) != 0 || old_version.find('/') != std::string::npos ||
        old_version == ".." || old_version == kDataDirName || old_version == kNewDataDirName) {
      old_version.clear();
    }
  }
  Payload old_payload;
  if (!old_version.empty()) {
    absl::StatusOr<Payload> current = ReadVersion(absl::StrCat(target_dir_, "/", old_version));
    if (current.ok()) {
      old_payload = *std::move(current);
    } else {
      old_version.clear();  // dangling or unreadable: write a fresh version
    }
  }
  std::set<std::string> new_top, old_top;
  for (const auto& [path, file] : payload) new_top.insert(TopLevel(path));
  for (const auto& [path, file] : old_payload) old_top.insert(TopLevel(path));

  const bool changed = old_version.empty() || old_payload != payload;
  if (changed) {
    // 3. A new version directory holding every file.
    const std::string prefix = absl::StrCat(
        "..", absl::FormatTime("%Y_%m_%d_%H_%M_%S", clock_.Now(), absl::UTCTimeZone()), ".");
    std::string tmpl = absl::StrCat(target_dir_, "/", prefix, "XXXXXX");
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) return ErrnoError("mkdtemp", tmpl, errno);
    const std::string version_dir(buf.data());
    const std::string version_name = fs::path(version_dir).filename().string();
    ::chmod(version_dir.c_str(), 0755);
    for (const auto& [path, file] : payload) {
      const fs::path full = fs::path(version_dir) / path;
      fs::create_directories(full.parent_path(), ec);
      if (ec) {
        fs::remove_all(version_dir, ec);
        return absl::InternalError(
            absl::StrCat("mkdir ", full.parent_path().string(), ": ", ec.message()));
      }
      if (absl::Status st = WriteFile(full.string(), file); !st.ok()) {
        fs::remove_all(version_dir, ec);
        return st;
      }
    }

    // 4. Swap ..data to the new version (symlink + rename is atomic for readers).
    const std::string tmp_link = absl::StrCat(target_dir_, "/", kNewDataDirName);
    ::unlink(tmp_link.c_str());
    if (::symlink(version_name.c_str(), tmp_link.c_str()) != 0) {
      const int err = errno;
      fs::remove_all(version_dir, ec);
      return ErrnoError("symlink", tmp_link, err);
    }
    if (::rename(tmp_link.c_str(), data_link.c_str()) != 0) {
      const int err = errno;
      ::unlink(tmp_link.c_str());
      fs::remove_all(version_dir, ec);
      return ErrnoError("rename", tmp_link, err);
    }
    KLOG_V(4, "Atomic writer: published new data version", "context", log_context_, "dir",
           target_dir_, "version", version_name);
  }

  // 5. User-visible symlinks for every top-level entry (also repairs missing ones).
  for (const std::string& top : new_top) {
    const std::string visible = absl::StrCat(target_dir_, "/", top);
    struct stat st;
    if (::lstat(visible.c_str(), &st) == 0) continue;
    const std::string dest = absl::StrCat(kDataDirName, "/", top);
    if (::symlink(dest.c_str(), visible.c_str()) != 0) return ErrnoError("symlink", visible, errno);
  }

  // 6. Stale user-visible paths and the previous version directory.
  for (const std::string& top : old_top) {
    if (new_top.count(top)) continue;
    const std::string visible = absl::StrCat(target_dir_, "/", top);
    struct stat st;
    if (::lstat(visible.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) ::unlink(visible.c_str());
  }
  if (changed && !old_version.empty()) {
    fs::remove_all(fs::path(target_dir_) / old_version, ec);
    if (ec) {
      KLOG_WARNING("Atomic writer: could not remove the previous data version", "context",
                   log_context_, "path", (fs::path(target_dir_) / old_version).string(), "err",
                   ec.message());
    }
  }
  return absl::OkStatus();
}

}  // namespace kubelet::volume
