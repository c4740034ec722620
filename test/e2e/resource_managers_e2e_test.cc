// Devices and dedicated CPUs on the real runtime and control plane:
//  * upstream's sample device plugin (KUBEBUILDER_ASSETS/sample-device-plugin, example.com/resource
//    with Dev-1 and Dev-2) registers with the kubelet's <root-dir>/device-plugins/kubelet.sock
//    (it always dials /var/lib/kubelet/device-plugins/kubelet.sock, so it runs in a mount
//    namespace of its own where that folder is the kubelet's): the Node shows 2; pods asking for
//    one get a device and its mount; a third is refused as upstream; the pod resources API lists
//    the assignment; a SIGKILLed and restarted kubelet keeps the allocation (its checkpoint) and
//    the plugin registers again; when the plugin stops allocatable drops to 0 and the pods keep
//    running;
//  * cpuManagerPolicy static with reservedSystemCPUs "0" and memoryManagerPolicy Static: a
//    Guaranteed cpu: "1" pod's container is pinned to an exclusive CPU (read inside the container
//    and from its cgroup) with cpuset.mems from the memory manager, a BestEffort pod is confined
//    to the rest, both back to the shared pool when the Guaranteed pod goes, and the state files
//    survive a restart.
#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cri/grpc_client.h"
#include "gtest/gtest.h"
#include "kubelet/podresources/proto/podresources.grpc.pb.h"
#include "test/e2e/api_mode_fixture.h"

namespace kubelet::e2e {
namespace {

constexpr char kResource[] = "example.com/resource";

class ResourceManagersTest : public ApiModeTest {
 protected:
  std::string ExtraConfig() override { return extra_config_; }
  void TearDown() override {
    ApiModeTest::TearDown();
    plugin_.reset();
  }

  std::string Root() const { return dir_ + "/root"; }

  // The sample plugin in a mount namespace where /var/lib/kubelet/device-plugins is the
  // kubelet's device-plugins folder (a tmpfs over /var/lib hides the machine's own).
  void StartSamplePlugin() {
    const char* assets = std::getenv("KUBEBUILDER_ASSETS");
    const std::string binary =
        absl::StrCat(assets != nullptr ? assets : "", "/sample-device-plugin");
    if (!std::filesystem::exists(binary)) {
      GTEST_SKIP() << kControlPlaneSkipMarker << "sample-device-plugin not in KUBEBUILDER_ASSETS";
    }
    const std::string dir = Root() + "/device-plugins";
    ASSERT_TRUE(WaitUntil([&] { return std::filesystem::exists(dir + "/kubelet.sock"); },
                          absl::Seconds(30)));
    const std::string script = absl::StrCat(
        "mount --make-rprivate / && mount -t tmpfs tmpfs /var/lib && "
        "mkdir -p /var/lib/kubelet/device-plugins && mount --bind ",
        dir, " /var/lib/kubelet/device-plugins && exec ", binary);
    auto p = KubeletProcess::Start("/usr/bin/unshare", {"-m", "sh", "-c", script},
                                   {{"PLUGIN_SOCK_DIR", "/var/lib/kubelet/device-plugins"}},
                                   dir_ + "/sample-device-plugin.log");
    ASSERT_TRUE(p.ok()) << p.status();
    plugin_ = std::move(*p);
  }

  // status.capacity / status.allocatable of the resource on the Node; -1 when absent.
  int64_t NodeResource(const std::string& section, const std::string& resource = kResource) {
    json n = GetNode();
    if (!n.is_object()) return -1;
    json r = n["status"].value(section, json::object());
    if (!r.contains(resource)) return -1;
    return std::stoll(r[resource].get<std::string>());
  }

  // The tests' own plugin (test_device_plugin.cc) on the kubelet's device-plugins folder.
  void StartOwnPlugin(const std::string& resource, const std::string& control,
                      const std::string& preferred) {
    const char* binary = std::getenv("KUBELET_TEST_DEVICE_PLUGIN");
    ASSERT_NE(binary, nullptr) << "KUBELET_TEST_DEVICE_PLUGIN not set";
    const std::string dir = Root() + "/device-plugins";
    ASSERT_TRUE(WaitUntil([&] { return std::filesystem::exists(dir + "/kubelet.sock"); },
                          absl::Seconds(30)));
    auto p = KubeletProcess::Start(binary, {dir, "e2e-test.sock", resource, control, preferred}, {},
                                   dir_ + "/test-device-plugin.log");
    ASSERT_TRUE(p.ok()) << p.status();
    plugin_ = std::move(*p);
  }

  std::string DevicePod(const std::string& base, const std::string& resource = kResource,
                        int count = 1) {
    PodParts parts;
    parts.spec = absl::StrCat("  nodeName: ", node_, "\n");
    parts.container =
        absl::StrCat("    resources:\n      limits:\n        ", resource, ": ", count, "\n");
    return BusyboxPod(PodName(base), kSleepForever, parts);
  }
  bool PodFailed(const std::string& base) {
    json p = GetPod(PodName(base));
    return p.is_object() && p["status"].value("phase", "") == "Failed";
  }
  std::string CpuPod(const std::string& base, bool guaranteed) {
    PodParts parts;
    parts.spec = absl::StrCat("  nodeName: ", node_, "\n");
    if (guaranteed) {
      parts.container =
          "    resources:\n      limits:\n        cpu: \"1\"\n        memory: 64Mi\n"
          "      requests:\n        cpu: \"1\"\n        memory: 64Mi\n";
    }
    return BusyboxPod(PodName(base), kSleepForever, parts);
  }
  bool PodRunning(const std::string& base) {
    json p = GetPod(PodName(base));
    return p.is_object() && p["status"].value("phase", "") == "Running";
  }
  std::string RunningContainer(const std::string& base) {
    std::vector<Container> c = Running(base, "main");
    return c.empty() ? "" : c[0].id();
  }

  // The pod resources API's List, through a real gRPC client.
  std::optional<v1::ListPodResourcesResponse> ListPodResources() {
    auto stub = v1::PodResourcesLister::NewStub(
        cri::DialUnixSocket(Root() + "/pod-resources/kubelet.sock"));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListPodResourcesResponse resp;
    if (!stub->List(&ctx, v1::ListPodResourcesRequest(), &resp).ok()) return std::nullopt;
    return resp;
  }
  // The device ids the pod resources API lists for a pod's container "main".
  std::vector<std::string> ListedDevices(const std::string& pod,
                                         const std::string& resource = kResource) {
    std::vector<std::string> out;
    std::optional<v1::ListPodResourcesResponse> l = ListPodResources();
    if (!l.has_value()) return out;
    for (const v1::PodResources& p : l->pod_resources()) {
      if (p.name() != pod) continue;
      for (const v1::ContainerResources& c : p.containers()) {
        for (const v1::ContainerDevices& d : c.devices()) {
          if (d.resource_name() != resource) continue;
          out.insert(out.end(), d.device_ids().begin(), d.device_ids().end());
        }
      }
    }
    return out;
  }

  // The CPUs a container may run on, as the kernel reports them inside it.
  std::string CpusInside(const std::string& id) {
    std::optional<std::string> out = Exec(id, {"grep", "Cpus_allowed_list", "/proc/1/status"});
    if (!out.has_value()) return "";
    std::vector<std::string> parts = absl::StrSplit(*out, ':');
    return parts.size() < 2 ? "" : std::string(absl::StripAsciiWhitespace(parts[1]));
  }
  // cpuset.cpus of the container's cgroup (cgroup v1 cpuset hierarchy or v2), found by its id.
  static std::string CpusetOfCgroup(const std::string& id) {
    for (const char* root : {"/sys/fs/cgroup/cpuset/kubepods", "/sys/fs/cgroup/kubepods"}) {
      std::error_code ec;
      for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_directory(ec)) continue;
        // containerd: <id>; CRI-O: crio-<id> (its conmon's crio-conmon-<id> is not the
        // container's).
        const std::string name = it->path().filename().string();
        if (name != id && name != "crio-" + id && name != "crio-" + id + ".scope") continue;
        std::ifstream in(it->path() / "cpuset.cpus");
        std::string s;
        std::getline(in, s);
        return s;
      }
    }
    return "";
  }
  // The runtime's spec of the container: linux.resources.cpu (cpus / mems), from the verbose
  // CRI status.
  json RuntimeCpu(const std::string& id) {
    auto st = cri_->ContainerStatus(id, true);
    if (!st.ok()) return json();
    auto it = st->info().find("info");
    if (it == st->info().end()) return json();
    json info = json::parse(it->second, nullptr, false);
    if (!info.is_object()) return json();
    return info["runtimeSpec"]["linux"]["resources"].value("cpu", json::object());
  }
  json StateFile(const std::string& name) {
    std::ifstream in(Root() + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str(), nullptr, false);
  }

  std::string KubeletLogTail(size_t n = 6000) {
    const std::string log = kubelet_->Log();
    return log.substr(log.size() > n ? log.size() - n : 0);
  }

  std::string extra_config_;
  std::unique_ptr<KubeletProcess> plugin_;
};

TEST_F(ResourceManagersTest, SampleDevicePlugin) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok());
  StartSamplePlugin();
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(WaitUntil([&] { return NodeResource("allocatable") == 2; }, absl::Seconds(60)))
      << GetNode()["status"].dump() << "\nplugin log:\n"
      << plugin_->Log() << "\nkubelet log:\n"
      << KubeletLogTail();
  EXPECT_EQ(NodeResource("capacity"), 2);
  EXPECT_TRUE(
      kubelet_->WaitForLog("\"Got registration request from device plugin with resource\" "
                           "resourceName=\"example.com/resource\"",
                           absl::Seconds(5)));

  // Two pods get a device each, with the plugin's mount.
  ASSERT_TRUE(Apply(DevicePod("dev-a")).ok());
  ASSERT_TRUE(Apply(DevicePod("dev-b")).ok());
  ASSERT_TRUE(
      WaitUntil([&] { return PodRunning("dev-a") && PodRunning("dev-b"); }, absl::Seconds(90)))
      << GetPod(PodName("dev-a")).dump() << "\n"
      << GetPod(PodName("dev-b")).dump();
  const std::string a = RunningContainer("dev-a");
  ASSERT_FALSE(a.empty());
  std::optional<std::string> mounted = Exec(a, {"sh", "-c", "ls -d /tmp/Dev-*"});
  ASSERT_TRUE(mounted.has_value());
  const std::string dev_a(absl::StripAsciiWhitespace(*mounted));
  EXPECT_TRUE(dev_a == "/tmp/Dev-1" || dev_a == "/tmp/Dev-2") << dev_a;
  std::optional<std::string> mounted_b =
      Exec(RunningContainer("dev-b"), {"sh", "-c", "ls -d /tmp/Dev-*"});
  ASSERT_TRUE(mounted_b.has_value());
  EXPECT_NE(std::string(absl::StripAsciiWhitespace(*mounted_b)), dev_a);

  // A third: refused at admission, as upstream.
  ASSERT_TRUE(Apply(DevicePod("dev-c")).ok());
  ASSERT_TRUE(WaitUntil(
      [&] {
        json p = GetPod(PodName("dev-c"));
        return p.is_object() && p["status"].value("phase", "") == "Failed";
      },
      absl::Seconds(60)))
      << GetPod(PodName("dev-c")).dump();
  json c = GetPod(PodName("dev-c"));
  EXPECT_EQ(c["status"].value("reason", ""), "UnexpectedAdmissionError");
  EXPECT_EQ(c["status"].value("message", ""),
            "Pod was rejected: Allocate failed due to requested number of devices unavailable for "
            "example.com/resource. Requested: 1, Available: 0, which is unexpected");

  // The pod resources API lists the assignment.
  std::vector<std::string> listed = ListedDevices(PodName("dev-a"));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ("/tmp/" + listed[0], dev_a);

  // SIGKILL and restart: the checkpoint keeps both allocations (listed before the plugin is
  // back), the pods' containers are untouched; the plugin (which, as upstream's sample, registers
  // once per start) is restarted the way its DaemonSet would be and registers again; a new pod
  // is still refused.
  ASSERT_TRUE(std::filesystem::exists(Root() + "/device-plugins/kubelet_internal_checkpoint"));
  kubelet_->Signal(SIGKILL);
  kubelet_->Wait(absl::Seconds(20));
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(
      WaitUntil([&] { return ListedDevices(PodName("dev-a")) == listed; }, absl::Seconds(30)));
  EXPECT_EQ(RunningContainer("dev-a"), a);
  plugin_->Signal(SIGTERM);
  plugin_->Wait(absl::Seconds(20));
  const size_t log_mark = kubelet_->Log().size();
  StartSamplePlugin();
  ASSERT_TRUE(WaitUntil(
      [&] {
        return kubelet_->Log().find("Got registration request from device plugin", log_mark) !=
               std::string::npos;
      },
      absl::Seconds(60)))
      << plugin_->Log();
  ASSERT_TRUE(WaitUntil([&] { return NodeResource("allocatable") == 2; }, absl::Seconds(60)));
  EXPECT_EQ(RunningContainer("dev-a"), a);
  EXPECT_EQ(ListedDevices(PodName("dev-a")), listed);
  ASSERT_TRUE(Apply(DevicePod("dev-d")).ok());
  ASSERT_TRUE(WaitUntil(
      [&] {
        json p = GetPod(PodName("dev-d"));
        return p.is_object() && p["status"].value("phase", "") == "Failed";
      },
      absl::Seconds(60)))
      << GetPod(PodName("dev-d")).dump() << "\nkubelet log tail:\n"
      << KubeletLogTail();
  EXPECT_EQ(GetPod(PodName("dev-d"))["status"].value("reason", ""), "UnexpectedAdmissionError");

  // The plugin stops: nothing allocatable, the running pods keep running.
  plugin_->Signal(SIGTERM);
  plugin_->Wait(absl::Seconds(20));
  ASSERT_TRUE(WaitUntil([&] { return NodeResource("allocatable") == 0; }, absl::Seconds(60)))
      << GetNode()["status"].dump();
  EXPECT_EQ(NodeResource("capacity"), 2);
  EXPECT_EQ(RunningContainer("dev-a"), a);
  EXPECT_TRUE(PodRunning("dev-a"));
  EXPECT_TRUE(PodRunning("dev-b"));
}

TEST_F(ResourceManagersTest, OwnPluginNumaHealthRestart) {
  constexpr char kOwn[] = "example.com/e2edev";
  extra_config_ = "topologyManagerPolicy: single-numa-node\n";
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok());
  // Two devices on NUMA node 0, one on node 1 (which this machine does not have).
  const std::string control = dir_ + "/devices.txt";
  WriteFile(control, "e2edev-a Healthy 0\ne2edev-b Healthy 0\ne2edev-far Healthy 1\n");
  StartOwnPlugin(kOwn, control, "e2edev-b");
  ASSERT_TRUE(WaitUntil([&] { return NodeResource("allocatable", kOwn) == 3; }, absl::Seconds(60)))
      << plugin_->Log() << "\n"
      << KubeletLogTail();

  // The plugin's preferred device, with its Allocate answer in the container: the env, the
  // device node and the mount.
  ASSERT_TRUE(Apply(DevicePod("pref", kOwn, 1)).ok());
  ASSERT_TRUE(WaitUntil([&] { return PodRunning("pref"); }, absl::Seconds(90)))
      << GetPod(PodName("pref")).dump() << "\n"
      << KubeletLogTail();
  const std::string pref = RunningContainer("pref");
  std::optional<std::string> env = Exec(pref, {"sh", "-c", "echo $FAKE_DEVICES"});
  ASSERT_TRUE(env.has_value());
  EXPECT_EQ(absl::StripAsciiWhitespace(*env), "e2edev-b");
  EXPECT_TRUE(Exec(pref, {"test", "-c", "/dev/fake-e2edev-b"}).has_value());
  EXPECT_TRUE(Exec(pref, {"test", "-d", "/dev/e2edev-b"}).has_value());
  EXPECT_EQ(Status(pref).annotations().at("example.com/devices"), "e2edev-b");

  // Two more: only one is left on node 0 and single-numa-node refuses to span nodes.
  ASSERT_TRUE(Apply(DevicePod("two", kOwn, 2)).ok());
  ASSERT_TRUE(WaitUntil([&] { return PodFailed("two"); }, absl::Seconds(60)))
      << GetPod(PodName("two")).dump();
  json two = GetPod(PodName("two"));
  EXPECT_EQ(two["status"].value("reason", ""), "TopologyAffinityError");
  EXPECT_EQ(two["status"].value("message", ""),
            "Pod was rejected: Resources cannot be allocated with Topology locality");

  // A device turns unhealthy: out of allocatable, still in capacity.
  WriteFile(control, "e2edev-a Unhealthy 0\ne2edev-b Healthy 0\ne2edev-far Healthy 1\n");
  ASSERT_TRUE(WaitUntil([&] { return NodeResource("allocatable", kOwn) == 2; }, absl::Seconds(60)))
      << GetNode()["status"].dump();
  EXPECT_EQ(NodeResource("capacity", kOwn), 3);

  // The kubelet restarts: it removes the plugin's socket, the plugin registers again by itself,
  // the running pod keeps its device.
  kubelet_->Signal(SIGKILL);
  kubelet_->Wait(absl::Seconds(20));
  const size_t mark = plugin_->Log().size();
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitUntil(
      [&] {
        return plugin_->Log().find("register example.com/e2edev: ok", mark) != std::string::npos;
      },
      absl::Seconds(60)))
      << plugin_->Log();
  ASSERT_TRUE(WaitUntil([&] { return NodeResource("allocatable", kOwn) == 2; }, absl::Seconds(60)));
  EXPECT_EQ(RunningContainer("pref"), pref);
  EXPECT_EQ(ListedDevices(PodName("pref"), kOwn), std::vector<std::string>{"e2edev-b"});
}

TEST_F(ResourceManagersTest, StaticCpuAndMemoryManagers) {
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (cpus < 2) GTEST_SKIP() << "needs 2 CPUs";
  extra_config_ =
      "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n"
      "memoryManagerPolicy: Static\nevictionHard:\n  memory.available: 100Mi\n"
      "reservedMemory:\n- numaNode: 0\n  limits:\n    memory: 100Mi\n";
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  const std::string all = absl::StrCat("0-", cpus - 1);

  ASSERT_TRUE(Apply(CpuPod("be", false)).ok());
  ASSERT_TRUE(WaitUntil([&] { return PodRunning("be"); }, absl::Seconds(90)));
  const std::string be = RunningContainer("be");
  EXPECT_EQ(CpusInside(be), all);

  ASSERT_TRUE(Apply(CpuPod("g", true)).ok());
  ASSERT_TRUE(WaitUntil([&] { return PodRunning("g"); }, absl::Seconds(90)))
      << GetPod(PodName("g")).dump();
  const std::string g = RunningContainer("g");
  const std::string uid = GetPod(PodName("g"))["metadata"].value("uid", "");
  json state = StateFile("cpu_manager_state");
  ASSERT_TRUE(state.is_object());
  EXPECT_EQ(state.value("policyName", ""), "static");
  const std::string exclusive = state["entries"][uid].value("main", "");
  if (cpus == 2) {
    EXPECT_EQ(exclusive, "1");
    EXPECT_EQ(state.value("defaultCpuSet", ""), "0");
  }
  ASSERT_FALSE(exclusive.empty()) << state.dump();
  EXPECT_EQ(CpusInside(g), exclusive);
  EXPECT_EQ(CpusetOfCgroup(g), exclusive);
  // The memory manager's NUMA node went to the runtime as cpuset.mems.
  EXPECT_EQ(RuntimeCpu(g).value("mems", ""), "0") << RuntimeCpu(g).dump();
  json mem = StateFile("memory_manager_state");
  EXPECT_EQ(mem.value("policyName", ""), "Static");
  EXPECT_EQ(mem["entries"][uid]["main"][0].value("type", ""), "memory") << mem.dump();

  // The BestEffort pod leaves the exclusive CPU.
  const std::string shared = state.value("defaultCpuSet", "");
  ASSERT_TRUE(WaitUntil([&] { return CpusInside(be) == shared; }, absl::Seconds(30)))
      << CpusInside(be) << " vs " << shared;
  EXPECT_EQ(CpusetOfCgroup(be), shared);

  // A restart keeps the state and the pinning.
  kubelet_->Signal(SIGKILL);
  kubelet_->Wait(absl::Seconds(20));
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok());
  EXPECT_EQ(StateFile("cpu_manager_state")["entries"][uid].value("main", ""), exclusive);
  EXPECT_EQ(RunningContainer("g"), g);
  EXPECT_EQ(CpusInside(g), exclusive);

  // The Guaranteed pod goes: its CPU returns to the shared pool.
  ASSERT_TRUE(cp_->Kubectl({"delete", "pod", PodName("g"), "--wait=false"}).ok());
  ASSERT_TRUE(WaitUntil([&] { return CpusInside(be) == all; }, absl::Seconds(60)))
      << CpusInside(be);
  EXPECT_EQ(CpusetOfCgroup(be), all);
  ASSERT_TRUE(WaitUntil(
      [&] {
        json s = StateFile("cpu_manager_state");
        return s.is_object() && s.value("defaultCpuSet", "") == all && !s.contains("entries");
      },
      absl::Seconds(30)))
      << StateFile("cpu_manager_state").dump();
}

TEST_F(ResourceManagersTest, APolicyChangeOnANodeWithStateRefusesToStart) {
  extra_config_ = "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n";
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok());
  StopKubelet();
  extra_config_ = "";
  WriteConfig();
  auto p = KubeletProcess::Start(KubeletBinary(), KubeletArgs({"--kubeconfig", kubeconfig_}), {},
                                 dir_ + "/kubelet-none.log");
  ASSERT_TRUE(p.ok());
  std::optional<int> rc = (*p)->Wait(absl::Seconds(60));
  ASSERT_TRUE(rc.has_value()) << (*p)->Log();
  EXPECT_NE(*rc, 0);
  EXPECT_NE((*p)->Log().find("could not restore state from checkpoint: configured policy "
                             "\\\"none\\\" differs from state checkpoint policy \\\"static\\\""),
            std::string::npos)
      << (*p)->Log();
}

}  // namespace
}  // namespace kubelet::e2e
