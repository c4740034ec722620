// Test helpers of the logs tests: a temporary directory removed with its content on
// destruction, whole-file writes and reads, and reading a gzip-compressed (rotated) log.
// Header-only (users link zlib, as kubelet_logs does); for tests only; not thread-safe.
#ifndef KUBELET_KUBELET_LOGS_TESTING_FILES_H_
#define KUBELET_KUBELET_LOGS_TESTING_FILES_H_

#include <stdlib.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace kubelet::logs::testing {

// A fresh directory under the system temp dir, named `prefix` plus a unique suffix.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "logs-test-") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes `content` to `path`, replacing the file or appending to it.
inline void WriteFile(const std::string& path, const std::string& content, bool append = false) {
  std::ofstream f(path, append ? std::ios::app : std::ios::trunc);
  f << content;
}

// The content of the file at `path`; "" when it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The decompressed content of the gzip file at `path`; "<unreadable>" when it cannot be opened.
inline std::string Gunzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) return "<unreadable>";
  std::string out;
  char buf[8192];
  int n;
  while ((n = gzread(gz, buf, sizeof(buf))) > 0) out.append(buf, n);
  gzclose(gz);
  return out;
}

}  // namespace kubelet::logs::testing

#endif  // KUBELET_KUBELET_LOGS_TESTING_FILES_H_
