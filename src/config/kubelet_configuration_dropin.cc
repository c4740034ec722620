// --config-dir: the drop-in files of a directory merged over the configuration, following
// upstream v1.28 server.go mergeKubeletConfigurations (filepath.WalkDir over the directory,
// files with the ".conf" extension loaded with configfiles.fsLoader.LoadIntoJSON and merged in
// walk order). The per-document merge is DecodeKubeletConfigurationDropin
// (kubelet_configuration_decode.cc).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/go_compat.h"
#include "config/kubelet_configuration.h"

namespace kubelet::config {
namespace {

// filepath.Join(dir, name).
std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return GoCleanPath(name);
  return GoCleanPath(absl::StrCat(dir, "/", name));
}

// filepath.Abs.
std::string AbsPath(const std::string& name) {
  if (!name.empty() && name[0] == '/') return GoCleanPath(name);
  std::error_code ec;
  std::filesystem::path cwd = std::filesystem::current_path(ec);
  return GoCleanPath(absl::StrCat(ec ? "/" : cwd.string(), "/", name));
}

// filepath.Ext: the suffix from the final dot of the last element ("" without one).
std::string_view Ext(std::string_view name) {
  for (size_t i = name.size(); i > 0; --i) {
    if (name[i - 1] == '/') break;
    if (name[i - 1] == '.') return name.substr(i - 1);
  }
  return {};
}

// fsLoader.LoadIntoJSON's reading: the whole file, refusing an empty one.
absl::StatusOr<std::string> ReadDropin(const std::string& path) {
  const std::string abs = AbsPath(path);
  int fd = ::open(abs.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return absl::InvalidArgumentError(absl::StrCat("failed to read drop-in kubelet config file \"",
                                                   abs, "\", error: open ", abs, ": ",
                                                   GoErrnoText(err)));
  }
  std::string data;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat("failed to read drop-in kubelet config file \"", abs, "\", error: read ",
                       abs, ": ", GoErrnoText(err)));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (data.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("kubelet config file \"", abs, "\" was empty"));
  }
  return data;
}

struct Walker {
  KubeletConfiguration* config;
  std::vector<std::string> fields;
  std::set<std::string> seen;

  // The walk function for a non-directory entry.
  absl::Status Visit(const std::string& path, std::string_view name) {
    if (Ext(name) != ".conf") return absl::OkStatus();
    absl::StatusOr<std::string> data = ReadDropin(path);
    absl::StatusOr<std::vector<std::string>> set =
        data.ok() ? DecodeKubeletConfigurationDropin(*data, config)
                  : absl::StatusOr<std::vector<std::string>>(data.status());
    if (!set.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "failed to load kubelet dropin file, path: ", path, ", error: ", set.status().message()));
    }
    for (std::string& f : *set) {
      if (seen.insert(f).second) fields.push_back(std::move(f));
    }
    return absl::OkStatus();
  }

  // filepath.WalkDir's walkDir for a directory: its entries sorted by name; a directory entry
  // (lstat semantics) is descended into, anything else visited.
  absl::Status Dir(const std::string& path, int depth) {
    if (depth > 256) {
      return absl::InvalidArgumentError(absl::StrCat("open ", path, ": too many levels"));
    }
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("open ", path, ": ", GoErrnoText(errno)));
    }
    std::vector<std::pair<std::string, bool>> entries;  // name, is a directory
    errno = 0;
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      bool is_dir = e->d_type == DT_DIR;
      if (e->d_type == DT_UNKNOWN) {
        struct stat st;
        std::string child = JoinPath(path, name);
        is_dir = ::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      }
      entries.emplace_back(std::move(name), is_dir);
    }
    const int read_err = errno;
    ::closedir(d);
    if (read_err != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("readdirent ", path, ": ", GoErrnoText(read_err)));
    }
    std::sort(entries.begin(), entries.end());
    for (const auto& entry : entries) {
      const std::string child = JoinPath(path, entry.first);
      absl::Status st = entry.second ? Dir(child, depth + 1) : Visit(child, entry.first);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }
};

}  // namespace

absl::StatusOr<std::vector<std::string>> MergeKubeletConfigDropins(const std::string& dir,
                                                                   KubeletConfiguration* config) {
  Walker w{config, {}, {}};
  auto walk = [&]() -> absl::Status {
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("lstat ", dir, ": ", GoErrnoText(errno)));
    }
    if (S_ISDIR(st.st_mode)) return w.Dir(dir, 0);
    size_t slash = dir.find_last_of('/');
    return w.Visit(dir, slash == std::string::npos ? dir : dir.substr(slash + 1));
  };
  if (absl::Status st = walk(); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "failed to walk through kubelet dropin directory \"", dir, "\": ", st.message()));
  }
  return std::move(w.fields);
}

}  // namespace kubelet::config
