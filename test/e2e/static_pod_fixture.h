// The shared fixture of the end-to-end tests that run static pods through the kubelet binary on
// the harness's real runtime (containerd, or CRI-O for the `_crio` variants; RuntimeName()): a temp
// dir with a manifest folder and a KubeletConfiguration, a CRI client to observe what the kubelet
// did (by the labels it puts on sandboxes and containers), and clean-up of everything the test's
// pods left behind. Each test gets a node name of its own, so pods of different tests never mix.
//
// Every kubelet a test starts serves its API on a port of its own with the standalone forms of
// authentication and authorization (StandaloneServingConfig()) and keeps its state (--root-dir)
// and certificates (--cert-dir) under the test's dir.
//
// A suite adapts the kubelet through the knobs below (set them in the suite's constructor or in
// a test before StartKubelet()) and the ExtraConfig() hook; StartKubelet() writes the
// configuration anew on every start, so a test can change them between two starts.
//
// TearDown() removes every manifest, lets the kubelet stop the pods, stops the kubelet and
// removes whatever is left through CRI. It keeps the test's dir (the kubelet's log) for
// inspection; a suite that wants it gone removes it after StaticPodTest::TearDown().
//
// For tests only: blocking, polling, not thread-safe.
#ifndef KUBELET_TEST_E2E_STATIC_POD_FIXTURE_H_
#define KUBELET_TEST_E2E_STATIC_POD_FIXTURE_H_

#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/testing/eventually.h"
#include "cri/remote/remote_runtime.h"
#include "gtest/gtest.h"
#include "test/e2e/e2e_env.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::e2e {

using runtime::v1::Container;
using runtime::v1::PodSandbox;

// The shared Eventually with a poll suited to process-level checks (a kubectl or HTTP call per
// poll): whether `pred` held before `timeout` passed.
template <typename Pred>
bool WaitUntil(Pred pred, absl::Duration timeout, absl::Duration poll = absl::Milliseconds(100)) {
  return kubelet::testing::Eventually(pred, timeout, poll);
}

class StaticPodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* endpoint = std::getenv("KUBELET_E2E_RUNTIME_ENDPOINT");
    if (endpoint == nullptr || *endpoint == '\0') {
      GTEST_SKIP() << kRuntimeSkipMarker << RuntimeUnavailableReason();
    }
    endpoint_ = endpoint;
    const char* reg = std::getenv("KUBELET_E2E_REGISTRY");
    registry_ = reg ? reg : "";
    dir_ = MakeTempDir("kubelet-pods-");
    manifests_ = dir_ + "/manifests";
    std::filesystem::create_directories(manifests_);
    // Both ports stay the same across restarts of the test's kubelet.
    healthz_port_ = FreePort();
    api_port_ = FreePort();
    // A node name unique to this test keeps its pods apart from other tests' leftovers.
    node_ = absl::StrCat("e2e-", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (char& c : node_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto rt = cri::NewRemoteRuntimeService(endpoint_, absl::Seconds(30));
    ASSERT_TRUE(rt.ok()) << rt.status();
    cri_ = std::move(*rt);
    config_path_ = dir_ + "/kubelet.yaml";
  }

  // More KubeletConfiguration lines (YAML, ending in a newline) for a test suite; called by
  // every StartKubelet(). Keys the fixture writes itself (see WriteConfig()) must not repeat:
  // the kubelet rejects duplicate keys.
  virtual std::string ExtraConfig() { return ""; }
  // The kubelet API's port, authentication and authorization lines (default: anonymous as
  // anonymous_auth_, no webhook, AlwaysAllow); a suite testing other modes replaces them.
  virtual std::string ServingConfig() {
    return StandaloneServingConfig(api_port_, anonymous_auth_);
  }

  void TearDown() override {
    if (cri_ == nullptr) return;
    // Remove every manifest and let the kubelet stop the pods, then stop the kubelet.
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(manifests_, ec)) {
      std::filesystem::remove(e.path(), ec);
    }
    if (kubelet_) {
      WaitUntil([&] { return ReadySandboxes("").empty(); }, absl::Seconds(60));
      kubelet_->Signal(SIGTERM);
      kubelet_->Wait(absl::Seconds(30));
    }
    // Whatever is left (a failed test) is removed through CRI.
    for (const PodSandbox& s : Sandboxes("")) {
      (void)cri_->StopPodSandbox(s.id());
      (void)cri_->RemovePodSandbox(s.id());
    }
    UnmountAllUnder(dir_);
  }

  // Lazily unmounts every mount below `dir` (deepest first): the volumes of pods a stopped
  // kubelet never tore down, so that no test leaves mounts on the machine.
  static void UnmountAllUnder(const std::string& dir) {
    if (dir.empty()) return;
    std::vector<std::string> mounts = MountPointsUnder(dir);
    for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) {
      (void)::umount2(it->c_str(), MNT_DETACH);
    }
  }
  // The mount points below `dir`, in mount order (/proc/self/mountinfo).
  static std::vector<std::string> MountPointsUnder(const std::string& dir) {
    std::vector<std::string> out;
    std::ifstream in("/proc/self/mountinfo");
    for (std::string line; std::getline(in, line);) {
      std::istringstream f(line);
      std::string id, parent, dev, root, point;
      f >> id >> parent >> dev >> root >> point;
      if (point.rfind(dir + "/", 0) == 0) out.push_back(point);
    }
    return out;
  }

  // Writes the kubelet's configuration to config_path_: the runtime endpoint, the manifest
  // folder, the healthz port, the knobs below, ServingConfig() and ExtraConfig().
  void WriteConfig() {
    WriteFile(
        config_path_,
        absl::StrCat("apiVersion: kubelet.config.k8s.io/v1beta1\n"
                     "kind: KubeletConfiguration\n"
                     "containerRuntimeEndpoint: ",
                     endpoint_, "\nstaticPodPath: ", manifests_, "\nhealthzPort: ", healthz_port_,
                     "\nfailSwapOn: false\nfileCheckFrequency: ", file_check_frequency_, "\n",
                     ServingConfig(), ExtraConfig()));
  }

  // The command line of the test's kubelet, followed by `extra`.
  std::vector<std::string> KubeletArgs(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"--config",   config_path_,  "--hostname-override",
                                     node_,        "--root-dir",  dir_ + "/root",
                                     "--cert-dir", dir_ + "/pki", absl::StrCat("--v=", verbosity_)};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // Writes the configuration, starts the kubelet (output in dir_/kubelet.log, truncated) and
  // waits until it serves healthz.
  void StartKubelet(std::vector<std::string> extra = {}) {
    WriteConfig();
    auto p = KubeletProcess::Start(KubeletBinary(), KubeletArgs(extra), kubelet_env_,
                                   dir_ + "/kubelet.log");
    ASSERT_TRUE(p.ok()) << p.status();
    kubelet_ = std::move(*p);
    ASSERT_TRUE(kubelet_->WaitForLog("\"Started healthz server\"", absl::Seconds(60)))
        << kubelet_->Log();
  }

  // SIGTERMs the kubelet and expects it to exit within 30s; its pods keep running.
  void StopKubelet() {
    kubelet_->Signal(SIGTERM);
    ASSERT_TRUE(kubelet_->Wait(absl::Seconds(30)).has_value()) << kubelet_->Log();
    kubelet_.reset();
  }

  std::string PodName(const std::string& base) const { return base + "-" + node_; }

  void WriteManifest(const std::string& file, const std::string& yaml) {
    // Write then rename, as editors and config management do, so the kubelet never reads a
    // half-written file.
    std::string tmp = dir_ + "/." + file + ".tmp";
    WriteFile(tmp, yaml);
    std::filesystem::rename(tmp, manifests_ + "/" + file);
  }

  // Sandboxes of this test's node (pod name suffix), optionally of one pod.
  std::vector<PodSandbox> Sandboxes(const std::string& base) {
    std::vector<PodSandbox> out;
    auto list = cri_->ListPodSandbox(nullptr);
    if (!list.ok()) return out;
    for (const auto& s : *list) {
      const std::string& name = s.metadata().name();
      if (base.empty() ? OnThisNode(name) : name == PodName(base)) out.push_back(s);
    }
    return out;
  }
  std::vector<PodSandbox> ReadySandboxes(const std::string& base) {
    std::vector<PodSandbox> out;
    for (const auto& s : Sandboxes(base)) {
      if (s.state() == runtime::v1::SANDBOX_READY) out.push_back(s);
    }
    return out;
  }
  // Containers of pod `base` (of every pod of this test's node when empty), named `name` (all
  // when empty), any state.
  std::vector<Container> Containers(const std::string& base, const std::string& name = "") {
    std::vector<Container> out;
    runtime::v1::ContainerFilter filter;
    if (!base.empty()) (*filter.mutable_label_selector())[kPodNameLabel] = PodName(base);
    auto list = cri_->ListContainers(base.empty() ? nullptr : &filter);
    if (!list.ok()) return out;
    for (const auto& c : *list) {
      if (base.empty()) {
        auto it = c.labels().find(kPodNameLabel);
        if (it == c.labels().end() || !OnThisNode(it->second)) continue;
      }
      if (name.empty() || c.metadata().name() == name) out.push_back(c);
    }
    return out;
  }
  std::vector<Container> Running(const std::string& base, const std::string& name = "") {
    std::vector<Container> out;
    for (const auto& c : Containers(base, name)) {
      if (c.state() == runtime::v1::CONTAINER_RUNNING) out.push_back(c);
    }
    return out;
  }
  runtime::v1::ContainerStatus Status(const std::string& id) {
    auto st = cri_->ContainerStatus(id, false);
    return st.ok() ? st->status() : runtime::v1::ContainerStatus();
  }
  // The UID of pod `base` (from its first sandbox), or "".
  std::string PodUID(const std::string& base) {
    auto sb = Sandboxes(base);
    return sb.empty() ? "" : sb[0].metadata().uid();
  }
  // stdout of `cmd` in container `id`; nullopt when the exec failed or exited non-zero.
  std::optional<std::string> Exec(const std::string& id, const std::vector<std::string>& cmd,
                                  absl::Duration timeout = absl::Seconds(20)) {
    auto r = cri_->ExecSync(id, cmd, timeout);
    if (!r.ok() || r->exit_code() != 0) return std::nullopt;
    return r->stdout();
  }

  // The busybox image the harness imported ($KUBELET_E2E_BUSYBOX_IMAGE).
  static std::string BusyboxImage() {
    const char* image = std::getenv("KUBELET_E2E_BUSYBOX_IMAGE");
    return image != nullptr && *image != '\0' ? image : "docker.io/library/busybox:1.36";
  }
  // Optional parts of a BusyboxPod manifest.
  struct PodParts {
    std::string spec;       // pod spec lines, indented by two spaces
    std::string container;  // lines of container "main" (probes, resources...), by four
    int termination_grace_seconds = 5;
  };
  // A pod `name` with one busybox container "main" running `sh -c body` (`body` is a quoted
  // YAML string).
  static std::string BusyboxPod(const std::string& name, const std::string& body,
                                const PodParts& parts) {
    return absl::StrCat(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", name, "\nspec:\n", parts.spec,
        "  terminationGracePeriodSeconds: ", parts.termination_grace_seconds,
        "\n"
        "  containers:\n"
        "  - name: main\n"
        "    image: ",
        BusyboxImage(), "\n    command: [\"sh\", \"-c\", ", body, "]\n", parts.container);
  }
  static std::string BusyboxPod(const std::string& name, const std::string& body,
                                const std::string& extra_spec = "") {
    return BusyboxPod(name, body, PodParts{.spec = extra_spec});
  }
  static constexpr const char* kSleepForever =
      "\"trap 'exit 0' TERM; while true; do sleep 1; done\"";

  // Knobs of the kubelet StartKubelet() runs.
  int verbosity_ = 2;                               // --v
  std::map<std::string, std::string> kubelet_env_;  // added to the kubelet's environment
  std::string file_check_frequency_ = "20s";        // fileCheckFrequency
  bool anonymous_auth_ = true;                      // authentication.anonymous.enabled

  std::string endpoint_, registry_, dir_, manifests_, node_, config_path_;
  int healthz_port_ = 0;
  int api_port_ = 0;  // the kubelet API's secure port ("port")
  std::unique_ptr<cri::RuntimeService> cri_;
  std::unique_ptr<KubeletProcess> kubelet_;

 private:
  static constexpr const char* kPodNameLabel = "io.kubernetes.pod.name";

  // Whether `pod_name` belongs to this test's node.
  bool OnThisNode(const std::string& pod_name) const {
    return pod_name.size() > node_.size() + 1 && pod_name.ends_with("-" + node_);
  }
};

}  // namespace kubelet::e2e

#endif  // KUBELET_TEST_E2E_STATIC_POD_FIXTURE_H_
