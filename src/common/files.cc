#include "common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace kubelet {

absl::Status WriteFileAtomically(const std::string& path, const std::string& data, mode_t mode) {
  std::error_code ec;
  std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("mkdir ", p.parent_path().string(), ": ", ec.message()));
    }
  }
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("open ", tmp, ": ", strerror(errno)));
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return absl::UnavailableError(absl::StrCat("write ", tmp, ": ", strerror(err)));
    }
    off += static_cast<size_t>(n);
  }
  ::fchmod(fd, mode);
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("rename ", tmp, ": ", strerror(err)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<FsInfo> StatFs(const std::string& path) {
  struct statvfs s {};
  if (::statvfs(path.c_str(), &s) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("statfs ", path));
  }
  FsInfo fs;
  const uint64_t frsize = s.f_frsize != 0 ? s.f_frsize : s.f_bsize;
  fs.capacity_bytes = static_cast<uint64_t>(s.f_blocks) * frsize;
  fs.available_bytes = static_cast<uint64_t>(s.f_bavail) * frsize;
  fs.used_bytes = static_cast<uint64_t>(s.f_blocks - s.f_bfree) * frsize;
  fs.inodes = s.f_files;
  fs.inodes_free = s.f_ffree;
  return fs;
}

}  // namespace kubelet
