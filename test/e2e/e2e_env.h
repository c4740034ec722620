// Environment of the end-to-end tests: the private containerd, CNI network and registry that
// test/e2e/harness/containerd-env.sh starts as the CTest fixture "containerd".
//
// The harness writes DIR/env, one KEY=VALUE a line (no quotes, no spaces), with at least:
//   KUBELET_E2E_RUNTIME              containerd or crio
//   KUBELET_E2E_RUNTIME_SOCK         absolute path of the runtime's CRI unix socket
//   KUBELET_E2E_RUNTIME_ENDPOINT     unix://<sock>, for --container-runtime-endpoint
//   KUBELET_E2E_CONTAINERD_SOCK      containerd's socket, for ctr (containerd runs only)
//   KUBELET_E2E_REGISTRY             127.0.0.1:<port> of a plain-HTTP registry holding
//                                    e2e/busybox:1.36 and e2e/busybox:latest (empty if none)
//   KUBELET_E2E_BUSYBOX_IMAGE        docker.io/library/busybox:1.36 (imported, Cmd ["sh"])
//   KUBELET_E2E_PAUSE_IMAGE          registry.k8s.io/pause:3.9 (imported; the sandbox image)
//   KUBELET_E2E_CNI_BRIDGE, KUBELET_E2E_CNI_SUBNET, KUBELET_E2E_DIR, KUBELET_E2E_*_PID, ...
// CTest passes only KUBELET_E2E_ENV_FILE=<that file> (its contents exist only at run time).
// Binaries registered with kubelet_add_e2e_test() also link kubelet_e2e_env_autoload, which calls
// LoadE2EEnv() before main(); others call it themselves first. Tests then getenv() the variables.
//
// The same binary runs on either runtime: harness/crio-env.sh (CTest fixture "crio") writes the
// same runtime keys for CRI-O (KUBELET_E2E_RUNTIME=crio); a fixture that could not start its
// runtime writes KUBELET_E2E_SKIPPED=<reason> instead of the socket.
//
// Not thread-safe: setenv() races with any concurrent getenv(); call before starting threads.
#ifndef KUBELET_TEST_E2E_E2E_ENV_H_
#define KUBELET_TEST_E2E_E2E_ENV_H_

#include <map>
#include <string>

namespace kubelet::e2e {

// Reads the file named by $KUBELET_E2E_ENV_FILE, if that is set, and setenv()s every KEY=VALUE
// whose KEY is not already in the environment (an explicit variable wins over the file).
// Blank lines, lines starting with '#' and lines without '=' are skipped; a trailing '\r' is
// dropped. Returns true when a runtime is described afterwards, i.e. KUBELET_E2E_RUNTIME_SOCK
// is set and non-empty (whether it came from the file or the environment); tests GTEST_SKIP()
// on false. A named file that cannot be read is reported on stderr and yields false unless the
// environment already describes a runtime.
bool LoadE2EEnv();

// As LoadE2EEnv(), reading `path` (ignores $KUBELET_E2E_ENV_FILE).
bool LoadE2EEnvFile(const std::string& path);

// Text every skip for a missing runtime carries; CTest's SKIP_REGULAR_EXPRESSION of the tests
// kubelet_add_e2e_test() registers matches it, so such a run shows as skipped, never passed.
inline constexpr char kRuntimeSkipMarker[] = "runtime fixture unavailable: ";

// Why no runtime is described (KUBELET_E2E_SKIPPED from the fixture, or what is missing);
// "" when KUBELET_E2E_RUNTIME_ENDPOINT is set. Skip with
//   GTEST_SKIP() << kRuntimeSkipMarker << RuntimeUnavailableReason();
std::string RuntimeUnavailableReason();

// The runtime the env describes: $KUBELET_E2E_RUNTIME ("containerd" or "crio"), "containerd"
// when unset (containerd-env.sh predates the key).
std::string RuntimeName();

// What that runtime calls itself in CRI Version (RuntimeName: "containerd" or "cri-o"): the
// scheme of container IDs in pod statuses (`cri-o://<id>`) and of the node's runtime version.
std::string CriRuntimeName();

// The host's cgroup hierarchies, from /proc/self/mounts: on cgroup v1, controller (or
// "name=...", and "unified" for a hybrid host's cgroup2 mount, where the runtime creates
// directories under the cgroup parent too) -> mount point; on a cgroup v2-only host, "" -> the
// unified mount point.
std::map<std::string, std::string> CgroupMounts();

// Removes the cgroup `dir` and every cgroup below it, deepest first; best effort (a cgroup
// still holding a process stays).
void RemoveCgroupTree(const std::string& dir);

}  // namespace kubelet::e2e

#endif  // KUBELET_TEST_E2E_E2E_ENV_H_
