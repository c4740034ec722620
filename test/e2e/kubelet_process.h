// Test helpers for end-to-end tests that run the real kubelet binary: start it with arguments
// and environment, capture its output to a file, wait for log lines, signal it, reap it; plus a
// tiny blocking HTTP GET and a free-port picker. For tests only: blocking, polling, not
// thread-safe.
#ifndef KUBELET_TEST_E2E_KUBELET_PROCESS_H_
#define KUBELET_TEST_E2E_KUBELET_PROCESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubelet::e2e {

// Path of the kubelet binary under test ($KUBELET_BINARY, set by CTest).
std::string KubeletBinary();

// A fresh directory under $TMPDIR (or /tmp), removed by the caller if wanted.
std::string MakeTempDir(const std::string& prefix);

// Writes `content` to `path`; aborts the test process on failure.
void WriteFile(const std::string& path, const std::string& content);

// The content of the file at `path`; "" when it cannot be read.
std::string ReadFile(const std::string& path);

// A TCP port on 127.0.0.1 that was free a moment ago, never one this process was given before
// (so two calls never hand one port to two servers).
int FreePort();

// KubeletConfiguration lines every test kubelet needs beside the runtime endpoint: its own API
// port (FreePort(), so kubelets of different tests never collide on 10250) and the standalone
// forms of authentication and authorization (the v1beta1 defaults are webhook modes, which need
// an API server, as upstream). YAML ending in a newline.
std::string StandaloneServingConfig();
// The same on API port `port`, with anonymous requests allowed or refused (401).
std::string StandaloneServingConfig(int port, bool anonymous);

struct HttpResult {
  int status = 0;  // 0 when the connection failed
  std::string body;
};
HttpResult HttpGet(int port, const std::string& path, const std::string& host = "127.0.0.1");

class KubeletProcess {
 public:
  // Starts `binary` with `args`; stdout and stderr both go to `log_path`.
  static absl::StatusOr<std::unique_ptr<KubeletProcess>> Start(
      const std::string& binary, const std::vector<std::string>& args,
      const std::map<std::string, std::string>& extra_env, const std::string& log_path);
  ~KubeletProcess();  // SIGKILLs and reaps a process still running

  pid_t pid() const { return pid_; }
  std::string Log() const;
  // Polls the log until it contains `text` or the process exits or `timeout` passes.
  bool WaitForLog(const std::string& text, absl::Duration timeout);
  void Signal(int sig);
  // Exit code (128+signal when killed by a signal), or nullopt if still running after timeout.
  std::optional<int> Wait(absl::Duration timeout);

 private:
  KubeletProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  std::string log_path_;
  std::optional<int> exit_code_;
};

}  // namespace kubelet::e2e

#endif  // KUBELET_TEST_E2E_KUBELET_PROCESS_H_
