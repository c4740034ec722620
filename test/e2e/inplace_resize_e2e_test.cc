// In-place pod resize (InPlacePodVerticalScaling, alpha in v1.28) on the real control plane: the
// API server runs with the gate (controlplane-env.sh), our kubelet with featureGates
// InPlacePodVerticalScaling=true. A running pod's CPU and memory changed with `kubectl patch`
// reach the container's cgroup (cpu.cfs_quota_us / memory.limit_in_bytes as the container sees
// them; cpu.max / memory.max on cgroup v2) without a restart, the pod's status shows the new
// allocatedResources and resources and its resize status is cleared; a resize beyond the node
// is Infeasible and changes nothing; a RestartContainer resizePolicy restarts only that
// container.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"
#include "test/e2e/e2e_env.h"

namespace kubelet::e2e {
namespace {

class InPlaceResizeTest : public ApiModeTest {
 protected:
  InPlaceResizeTest() { precreate_node_ = true; }
  // The gate, and a short resync: a resize shows in the status at the pod's next sync.
  std::string ExtraConfig() override {
    return "featureGates:\n  InPlacePodVerticalScaling: true\nsyncFrequency: 10s\n";
  }

  // A container's limits as it sees them: the CFS quota (-1: none) and the memory limit.
  std::optional<int64_t> CgroupValue(const std::string& container_id, const std::string& v1_file,
                                     const std::string& v2_file) {
    auto out = Exec(container_id, {"sh", "-c",
                                   absl::StrCat("cat /sys/fs/cgroup/", v1_file,
                                                " 2>/dev/null || cat /sys/fs/cgroup/", v2_file)});
    if (!out) return std::nullopt;
    std::string v(absl::StripAsciiWhitespace(*out));
    // cgroup v2: "max 100000" / "20000 100000" / "max".
    v = v.substr(0, v.find(' '));
    if (v == "max") return -1;
    int64_t n = 0;
    if (!absl::SimpleAtoi(v, &n)) return std::nullopt;
    return n;
  }
  std::optional<int64_t> CpuQuota(const std::string& id) {
    return CgroupValue(id, "cpu/cpu.cfs_quota_us", "cpu.max");
  }
  std::optional<int64_t> MemoryLimit(const std::string& id) {
    return CgroupValue(id, "memory/memory.limit_in_bytes", "memory.max");
  }

  absl::Status Patch(const std::string& name, const std::string& patch) {
    auto r = cp_->Kubectl({"patch", "pod", name, "-n", "default", "-p", patch});
    if (!r.ok()) return r.status();
    if (r->exit_code != 0) return absl::InternalError(r->err);
    return absl::OkStatus();
  }

  static std::string ResourcesPatch(const std::string& container, const std::string& cpu,
                                    const std::string& memory) {
    const std::string res = absl::StrCat(R"({"cpu":")", cpu, R"(","memory":")", memory, R"("})");
    return absl::StrCat(R"({"name":")", container, R"(","resources":{"requests":)", res,
                        R"(,"limits":)", res, "}}");
  }

  static nlohmann::json ContainerStatus(const nlohmann::json& pod, const std::string& name) {
    if (!pod.is_object()) return nlohmann::json();
    for (const auto& cs : pod["status"].value("containerStatuses", nlohmann::json::array())) {
      if (cs.value("name", "") == name) return cs;
    }
    return nlohmann::json();
  }

  static std::string Resource(const nlohmann::json& cs, const char* field, const char* kind,
                              const char* resource) {
    try {
      if (std::string(field) == "allocatedResources") {
        return cs.at("allocatedResources").at(resource).get<std::string>();
      }
      return cs.at("resources").at(kind).at(resource).get<std::string>();
    } catch (const std::exception&) {
      return "";
    }
  }

  // Starts the kubelet and a Guaranteed pod `base` (cpu 200m, memory 64Mi); returns its running
  // container's id, "" on failure.
  std::string StartPod(const std::string& base, const std::string& container_lines = "") {
    StartKubelet({"--kubeconfig", kubeconfig_});
    PodParts parts;
    parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
    parts.container = absl::StrCat(
        "    resources:\n"
        "      requests: {cpu: 200m, memory: 64Mi}\n"
        "      limits: {cpu: 200m, memory: 64Mi}\n",
        container_lines);
    absl::Status st = Apply(BusyboxPod(PodName(base), kSleepForever, parts));
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok()) return "";
    const bool running =
        WaitUntil([&] { return !Running(base, "main").empty(); }, absl::Seconds(120));
    EXPECT_TRUE(running) << kubelet_->Log();
    if (!running) return "";
    return Running(base, "main")[0].id();
  }
};

TEST_F(InPlaceResizeTest, CpuAndMemoryResizedWithoutRestart) {
  const std::string id = StartPod("resize");
  ASSERT_FALSE(id.empty());
  const std::string name = PodName("resize");
  EXPECT_EQ(CpuQuota(id), 20000);
  EXPECT_EQ(MemoryLimit(id), 64 << 20);
  // The status reports what was allocated and what the container got.
  nlohmann::json pod;
  ASSERT_TRUE(WaitUntil(
      [&] {
        pod = GetPod(name);
        nlohmann::json cs = ContainerStatus(pod, "main");
        return Resource(cs, "allocatedResources", "", "cpu") == "200m" &&
               Resource(cs, "resources", "limits", "cpu") == "200m";
      },
      absl::Seconds(60), absl::Milliseconds(500)))
      << pod.dump(2) << "\n"
      << kubelet_->Log();
  // The API server defaulted the resize policy.
  EXPECT_EQ(pod["spec"]["containers"][0]["resizePolicy"][0].value("restartPolicy", ""),
            "NotRequired")
      << pod["spec"].dump(2);

  ASSERT_TRUE(Patch(name, absl::StrCat(R"({"spec":{"containers":[)",
                                       ResourcesPatch("main", "400m", "128Mi"), "]}}"))
                  .ok());
  // The container's cgroup follows without a restart.
  ASSERT_TRUE(WaitUntil([&] { return CpuQuota(id) == 40000 && MemoryLimit(id) == 128 << 20; },
                        absl::Seconds(120), absl::Seconds(1)))
      << "quota " << CpuQuota(id).value_or(-2) << " memory " << MemoryLimit(id).value_or(-2) << "\n"
      << kubelet_->Log();
  ASSERT_EQ(Running("resize", "main").size(), 1u);
  EXPECT_EQ(Running("resize", "main")[0].id(), id);
  // The status: the new allocation and resources, the resize done.
  ASSERT_TRUE(WaitUntil(
      [&] {
        pod = GetPod(name);
        nlohmann::json cs = ContainerStatus(pod, "main");
        return !pod["status"].contains("resize") &&
               Resource(cs, "allocatedResources", "", "cpu") == "400m" &&
               Resource(cs, "allocatedResources", "", "memory") == "128Mi" &&
               Resource(cs, "resources", "limits", "cpu") == "400m" &&
               Resource(cs, "resources", "limits", "memory") == "128Mi" &&
               Resource(cs, "resources", "requests", "cpu") == "400m";
      },
      absl::Seconds(120), absl::Seconds(1)))
      << pod.dump(2) << "\n"
      << kubelet_->Log();
  EXPECT_EQ(ContainerStatus(pod, "main").value("restartCount", -1), 0);
  EXPECT_EQ(ContainerStatus(pod, "main").value("containerID", ""), CriRuntimeName() + "://" + id);

  // Shrinking works the same way.
  ASSERT_TRUE(Patch(name, absl::StrCat(R"({"spec":{"containers":[)",
                                       ResourcesPatch("main", "100m", "96Mi"), "]}}"))
                  .ok());
  EXPECT_TRUE(WaitUntil([&] { return CpuQuota(id) == 10000 && MemoryLimit(id) == 96 << 20; },
                        absl::Seconds(120), absl::Seconds(1)))
      << kubelet_->Log();
  EXPECT_EQ(Running("resize", "main")[0].id(), id);
}

TEST_F(InPlaceResizeTest, ResizeBeyondTheNodeIsInfeasible) {
  const std::string id = StartPod("huge");
  ASSERT_FALSE(id.empty());
  const std::string name = PodName("huge");
  ASSERT_TRUE(Patch(name, absl::StrCat(R"({"spec":{"containers":[)",
                                       ResourcesPatch("main", "1000", "64Mi"), "]}}"))
                  .ok());
  nlohmann::json pod;
  ASSERT_TRUE(WaitUntil(
      [&] {
        pod = GetPod(name);
        return pod.is_object() && pod["status"].value("resize", "") == "Infeasible";
      },
      absl::Seconds(120), absl::Seconds(1)))
      << pod.dump(2) << "\n"
      << kubelet_->Log();
  // Nothing changed: same container, same limits, same allocation.
  EXPECT_EQ(CpuQuota(id), 20000);
  ASSERT_EQ(Running("huge", "main").size(), 1u);
  EXPECT_EQ(Running("huge", "main")[0].id(), id);
  nlohmann::json cs = ContainerStatus(pod, "main");
  EXPECT_EQ(Resource(cs, "allocatedResources", "", "cpu"), "200m") << cs.dump(2);
  EXPECT_EQ(cs.value("restartCount", -1), 0);
}

TEST_F(InPlaceResizeTest, RestartContainerPolicyRestartsOnlyThatContainer) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  const std::string name = PodName("policy");
  const std::string resources =
      "    resources:\n"
      "      requests: {cpu: 100m, memory: 64Mi}\n"
      "      limits: {cpu: 100m, memory: 64Mi}\n";
  auto container = [&](const std::string& c, const std::string& memory_policy) {
    return absl::StrCat("  - name: ", c, "\n    image: ", BusyboxImage(),
                        "\n    command: [\"sh\", \"-c\", ", kSleepForever, "]\n", resources,
                        "    resizePolicy:\n"
                        "    - {resourceName: cpu, restartPolicy: NotRequired}\n"
                        "    - {resourceName: memory, restartPolicy: ",
                        memory_policy, "}\n");
  };
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", name,
                                 "\nspec:\n  nodeName: ", node_,
                                 "\n  automountServiceAccountToken: false\n"
                                 "  terminationGracePeriodSeconds: 5\n  containers:\n",
                                 container("restart", "RestartContainer"),
                                 container("stay", "NotRequired")))
                  .ok());
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Running("policy", "restart").size() == 1 && Running("policy", "stay").size() == 1;
      },
      absl::Seconds(120)))
      << kubelet_->Log();
  const std::string restart_id = Running("policy", "restart")[0].id();
  const std::string stay_id = Running("policy", "stay")[0].id();
  // The kubelet reported both running with their resources before the resize.
  ASSERT_TRUE(WaitUntil(
      [&] {
        nlohmann::json pod = GetPod(name);
        return Resource(ContainerStatus(pod, "restart"), "resources", "limits", "memory") ==
                   "64Mi" &&
               Resource(ContainerStatus(pod, "stay"), "resources", "limits", "memory") == "64Mi";
      },
      absl::Seconds(60), absl::Milliseconds(500)))
      << kubelet_->Log();

  ASSERT_TRUE(Patch(name, absl::StrCat(R"({"spec":{"containers":[)",
                                       ResourcesPatch("restart", "100m", "128Mi"), ",",
                                       ResourcesPatch("stay", "100m", "128Mi"), "]}}"))
                  .ok());
  // "restart" runs again as a new container with the new limit; "stay" kept running.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = Running("policy", "restart");
        return r.size() == 1 && r[0].id() != restart_id && MemoryLimit(r[0].id()) == 128 << 20 &&
               MemoryLimit(stay_id) == 128 << 20;
      },
      absl::Seconds(120), absl::Seconds(1)))
      << kubelet_->Log();
  ASSERT_EQ(Running("policy", "stay").size(), 1u);
  EXPECT_EQ(Running("policy", "stay")[0].id(), stay_id);
  nlohmann::json pod;
  ASSERT_TRUE(WaitUntil(
      [&] {
        pod = GetPod(name);
        return ContainerStatus(pod, "restart").value("restartCount", -1) == 1 &&
               ContainerStatus(pod, "stay").value("restartCount", -1) == 0 &&
               !pod["status"].contains("resize");
      },
      absl::Seconds(120), absl::Seconds(1)))
      << pod.dump(2) << "\n"
      << kubelet_->Log();
}

}  // namespace
}  // namespace kubelet::e2e
