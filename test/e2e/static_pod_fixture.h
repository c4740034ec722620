// The shared fixture of the end-to-end tests that run static pods through the kubelet binary on
// the harness's real containerd: a temp dir with a manifest folder and a KubeletConfiguration,
// a CRI client to observe what the kubelet did (by the labels it puts on sandboxes and
// containers), and clean-up of everything the test's pods left behind. Each test gets a node name
// of its own, so pods of different tests never mix.
#ifndef KUBELET_TEST_E2E_STATIC_POD_FIXTURE_H_
#define KUBELET_TEST_E2E_STATIC_POD_FIXTURE_H_

#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cri/remote/remote_runtime.h"
#include "gtest/gtest.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::e2e {

using runtime::v1::Container;
using runtime::v1::PodSandbox;

// Polls `pred` until it holds or `timeout` passes; returns its last value.
template <typename Pred>
bool WaitUntil(Pred pred, absl::Duration timeout, absl::Duration poll = absl::Milliseconds(100)) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (pred()) return true;
    absl::SleepFor(poll);
  }
  return pred();
}

class StaticPodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* endpoint = std::getenv("KUBELET_E2E_CONTAINERD_ENDPOINT");
    if (endpoint == nullptr || *endpoint == '\0') GTEST_SKIP() << "no e2e containerd";
    endpoint_ = endpoint;
    const char* reg = std::getenv("KUBELET_E2E_REGISTRY");
    registry_ = reg ? reg : "";
    dir_ = MakeTempDir("kubelet-pods-");
    manifests_ = dir_ + "/manifests";
    std::filesystem::create_directories(manifests_);
    healthz_port_ = FreePort();
    // A node name unique to this test keeps its pods apart from other tests' leftovers.
    node_ = absl::StrCat("e2e-", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (char& c : node_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto rt = cri::NewRemoteRuntimeService(endpoint_, absl::Seconds(30));
    ASSERT_TRUE(rt.ok()) << rt.status();
    cri_ = std::move(*rt);
    config_path_ = dir_ + "/kubelet.yaml";
    WriteFile(config_path_,
              "apiVersion: kubelet.config.k8s.io/v1beta1\n"
              "kind: KubeletConfiguration\n"
              "containerRuntimeEndpoint: " +
                  endpoint_ +
                  "\n"
                  "staticPodPath: " +
                  manifests_ +
                  "\n"
                  "healthzPort: " +
                  std::to_string(healthz_port_) +
                  "\n"
                  "failSwapOn: false\n"
                  "fileCheckFrequency: 20s\n" +
                  StandaloneServingConfig() + ExtraConfig());
  }

  // More KubeletConfiguration lines (YAML, ending in a newline) for a test suite.
  virtual std::string ExtraConfig() { return ""; }

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
  }

  void StartKubelet(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--config",   config_path_,  "--hostname-override",
                                     node_,        "--root-dir",  dir_ + "/root",
                                     "--cert-dir", dir_ + "/pki", "--v=2"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto p = KubeletProcess::Start(KubeletBinary(), args, {}, dir_ + "/kubelet.log");
    ASSERT_TRUE(p.ok()) << p.status();
    kubelet_ = std::move(*p);
    ASSERT_TRUE(kubelet_->WaitForLog("\"Started healthz server\"", absl::Seconds(60)))
        << kubelet_->Log();
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
      bool mine = base.empty()
                      ? name.size() > node_.size() &&
                            name.compare(name.size() - node_.size(), node_.size(), node_) == 0
                      : name == PodName(base);
      if (mine) out.push_back(s);
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
  // Containers of pod `base`, named `name` (all when empty), any state.
  std::vector<Container> Containers(const std::string& base, const std::string& name = "") {
    std::vector<Container> out;
    runtime::v1::ContainerFilter filter;
    (*filter.mutable_label_selector())["io.kubernetes.pod.name"] = PodName(base);
    auto list = cri_->ListContainers(&filter);
    if (!list.ok()) return out;
    for (const auto& c : *list) {
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

  static std::string BusyboxPod(const std::string& name, const std::string& body,
                                const std::string& extra_spec = "") {
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n" + extra_spec +
           "  terminationGracePeriodSeconds: 5\n"
           "  containers:\n"
           "  - name: main\n"
           "    image: docker.io/library/busybox:1.36\n"
           "    command: [\"sh\", \"-c\", " +
           body + "]\n";
  }
  static constexpr const char* kSleepForever =
      "\"trap 'exit 0' TERM; while true; do sleep 1; done\"";

  std::string endpoint_, registry_, dir_, manifests_, node_, config_path_;
  int healthz_port_ = 0;
  std::unique_ptr<cri::RuntimeService> cri_;
  std::unique_ptr<KubeletProcess> kubelet_;
};

}  // namespace kubelet::e2e

#endif  // KUBELET_TEST_E2E_STATIC_POD_FIXTURE_H_
