// The real Kubernetes control plane of the API-server-mode e2e tests: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler v1.28.7 on loopback, started by
// test/e2e/harness/controlplane-env.sh as the CTest fixture "controlplane".
//
// The harness writes DIR/env (KEY=VALUE lines; the full list is at the top of the script);
// CTest passes its path as KUBELET_CP_ENV_FILE to binaries registered with
// kubelet_add_apiserver_e2e_test(). Without the binaries (KUBEBUILDER_ASSETS unset, or
// something missing) the file says KUBELET_CP_SKIPPED=<reason> instead, and tests skip:
//
//   absl::StatusOr<ControlPlane> cp = ControlPlane::FromEnv();
//   KUBELET_CP_SKIP_OR_FAIL(cp);  // GTEST_SKIP()s with the reason, or FAILs on a real error
//   CommandResult r = *cp->Kubectl({"get", "nodes", "-o", "json"});
//
// With KUBELET_CP_REQUIRED=1 in the environment an unavailable control plane is an error, never
// a skip. The cluster is shared by every test of a CTest run: use unique node names and
// namespaces, and delete what you create.
//
// For tests only: blocking, polling; Kubectl() and NodeKubeconfig() may run concurrently.
#ifndef KUBELET_TEST_E2E_CONTROLPLANE_H_
#define KUBELET_TEST_E2E_CONTROLPLANE_H_

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace kubelet::e2e {

// Text every skip for a missing control plane carries; CTest's SKIP_REGULAR_EXPRESSION of
// kubelet_add_apiserver_e2e_test() matches it, so such a test shows as skipped, not passed.
inline constexpr std::string_view kControlPlaneSkipMarker = "control plane fixture unavailable: ";

// What a finished command left.
struct CommandResult {
  int exit_code = -1;  // 128+signal when killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv[0] (looked up in PATH) with argv, `stdin_data` on its stdin, collecting stdout and
// stderr. DeadlineExceeded (the process is killed) when it runs longer than `timeout`;
// Internal when it cannot be started. A non-zero exit is a result, not an error. Sets SIGPIPE to
// SIG_IGN in the calling process (a child that exits without reading its stdin must not kill it).
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         std::string_view stdin_data = {},
                                         absl::Duration timeout = absl::Seconds(60));

// Parses a harness env file: KEY=VALUE a line; blank lines, '#' comments and lines without
// '=' skipped; a value wrapped in single quotes is unwrapped. NotFound when unreadable.
absl::StatusOr<std::map<std::string, std::string>> ParseEnvFile(const std::string& path);

// Polls `poll` every `interval` until it returns OK or `timeout` passes. Returns OK, or
// DeadlineExceeded carrying the last poll's error message.
absl::Status WaitFor(const std::function<absl::Status()>& poll, absl::Duration timeout,
                     absl::Duration interval = absl::Milliseconds(250));

class ControlPlane {
 public:
  // Loads the file named by $KUBELET_CP_ENV_FILE. Unavailable (with the reason) when that
  // variable is unset or the fixture skipped, unless $KUBELET_CP_REQUIRED is 1, which turns
  // it into FailedPrecondition. Other errors: the file is unreadable (NotFound) or lacks a
  // required key (DataLoss). Starts kube-apiserver again when it is not running (an earlier
  // test stopped it and could not start it, or it died): Internal when that fails.
  static absl::StatusOr<ControlPlane> FromEnv();
  // As FromEnv(), from `env_file`.
  static absl::StatusOr<ControlPlane> Load(const std::string& env_file);

  // A value from the env file ("" when absent), e.g. Get("KUBELET_CP_SCHEDULER_PORT").
  std::string Get(const std::string& key) const;

  const std::string& server() const { return server_; }  // https://127.0.0.1:<port>
  const std::string& ca_file() const { return ca_file_; }
  const std::string& admin_kubeconfig() const { return admin_kubeconfig_; }
  const std::string& kubectl() const { return kubectl_; }
  const std::string& dir() const { return dir_; }

  // `kubectl --kubeconfig <admin> args...` with the fixture's v1.28.7 kubectl.
  absl::StatusOr<CommandResult> Kubectl(const std::vector<std::string>& args,
                                        std::string_view stdin_data = {},
                                        absl::Duration timeout = absl::Seconds(60)) const;
  // `kubectl <args> -o json` as admin, parsed; null when kubectl failed or printed no JSON.
  nlohmann::json KubectlJson(const std::vector<std::string>& args,
                             absl::Duration timeout = absl::Seconds(60)) const;
  // The same as the identity in `kubeconfig` (e.g. a node's, from NodeKubeconfig()).
  absl::StatusOr<CommandResult> KubectlAs(const std::string& kubeconfig,
                                          const std::vector<std::string>& args,
                                          std::string_view stdin_data = {},
                                          absl::Duration timeout = absl::Seconds(60)) const;

  // Mints the identity of node `node_name` (client cert O=system:nodes,
  // CN=system:node:<node_name>, signed by the cluster CA) and returns the path of a kubeconfig
  // using it. Beside it in the same directory: client.crt/.key and serving.crt/.key (a kubelet
  // serving cert for the name, localhost and 127.0.0.1, signed by the cluster CA).
  absl::StatusOr<std::string> NodeKubeconfig(const std::string& node_name) const;

  // An API server outage: stops kube-apiserver (etcd, the controller manager and the scheduler
  // keep running) / starts it again on the same port with the same flags and waits until it is
  // ready. The cluster is shared: only tests that run alone (every e2e test runs serially) may
  // use them, and must start it again whatever happens.
  absl::Status StopApiServer() const;
  absl::Status StartApiServer() const;
  // StartApiServer() unless Release()d first: what a test holds between StopApiServer() and its
  // own StartApiServer(), so the shared cluster gets its API server back whatever happens.
  class ApiServerRestart {
   public:
    explicit ApiServerRestart(const ControlPlane& cp) : cp_(cp) {}
    ~ApiServerRestart() {
      if (released_) return;
      if (absl::Status s = cp_.StartApiServer(); !s.ok()) {
        std::fprintf(stderr, "the API server did not start again: %s\n",
                     std::string(s.message()).c_str());
      }
    }
    ApiServerRestart(const ApiServerRestart&) = delete;
    ApiServerRestart& operator=(const ApiServerRestart&) = delete;
    void Release() { released_ = true; }

   private:
    const ControlPlane& cp_;
    bool released_ = false;
  };

  // A bootstrap token (kubeadm's way) whose group, system:bootstrappers, may create node client
  // CSRs and have them approved by the controller manager: the token's Secret in kube-system and
  // the ClusterRoleBindings <binding>-create and <binding>-approve. DeleteBootstrapToken removes
  // them (without waiting); BootstrapKubeconfig is a kubeconfig carrying the token.
  struct BootstrapToken {
    std::string id, secret, binding;
  };
  absl::StatusOr<BootstrapToken> CreateBootstrapToken(const std::string& binding) const;
  void DeleteBootstrapToken(const BootstrapToken& token) const;
  std::string BootstrapKubeconfig(const BootstrapToken& token, const std::string& server) const;

  // Until namespace `ns` has its "default" ServiceAccount (the controller manager makes it; pods
  // are refused until then, and it is slower while the controller manager recovers from an API
  // server outage), polling every second. DeadlineExceeded after `timeout`.
  absl::Status WaitForDefaultServiceAccount(const std::string& ns, absl::Duration timeout) const;

 private:
  explicit ControlPlane(std::map<std::string, std::string> env);

  std::map<std::string, std::string> env_;
  std::string server_, ca_file_, admin_kubeconfig_, kubectl_, dir_, script_;
};

}  // namespace kubelet::e2e

// In a gtest test body or SetUp(): given an absl::StatusOr<ControlPlane>, skips the test when
// the control plane is Unavailable (printing kControlPlaneSkipMarker and the reason) and fails
// it on any other error. Returns from the enclosing function in both cases.
#define KUBELET_CP_SKIP_OR_FAIL(statusor)                                                         \
  do {                                                                                            \
    if (!(statusor).ok()) {                                                                       \
      if (absl::IsUnavailable((statusor).status())) {                                             \
        GTEST_SKIP() << ::kubelet::e2e::kControlPlaneSkipMarker << (statusor).status().message(); \
      }                                                                                           \
      FAIL() << (statusor).status();                                                              \
    }                                                                                             \
  } while (0)

#endif  // KUBELET_TEST_E2E_CONTROLPLANE_H_
