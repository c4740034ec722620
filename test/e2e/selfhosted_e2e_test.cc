// The control plane as static pods of our kubelet (self-hosted, as kubeadm and OpenShift run a
// control-plane node), on the harness's real runtime (containerd, or CRI-O for `_crio`).
//
// controlplane-env.sh static-pods makes a private control plane's PKI, kubeconfigs and node
// identity and writes four static pod manifests: Debian's etcd and the v1.28.7 kube-apiserver,
// kube-controller-manager and kube-scheduler, each the host's binary mounted by hostPath into the
// harness's busybox image, on the host network, on ports of their own (so they never meet the
// shared "controlplane" fixture of other suites). The kubelet starts with OpenShift's
// `hyperkube kubelet` command line (--kubeconfig to that API server, which does not exist yet,
// --container-runtime=remote, --node-labels, --register-with-taints, --node-ip, ...), then:
//
//   1. healthz answers and the static pods start without waiting for the API server; node
//      registration and the API pod source retry quietly until the static kube-apiserver
//      answers /readyz;
//   2. the Node registers with its labels, the taint and --node-ip as InternalIP; every static
//      pod gets a mirror pod with its real status (the apiserver's readiness probe included);
//   3. a pod created through the API server is scheduled by the static scheduler and runs;
//   4. the kubelet SIGKILLed and restarted restarts no container;
//   5. a changed kube-apiserver manifest (an upgrade: one more flag) replaces that pod, the API
//      server comes back, its mirror pod shows the new flag, every other container runs on;
//   6. a deleted mirror pod is recreated.
//
// UpstreamReadyz then runs the upstream v1.28.7 kubelet (KUBEBUILDER_ASSETS/kubelet) on a fresh
// control plane of the same kind and prints how long after each kubelet's start the static
// apiserver answered /readyz, ours against upstream's (printed, never asserted).
//
// Needs the runtime fixture and KUBEBUILDER_ASSETS (else it skips; with KUBELET_CP_REQUIRED=1
// it fails). No timing is asserted: every wait is a generous bound.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/controlplane.h"
#include "test/e2e/http_client.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kComponents = {"etcd", "kube-apiserver", "kube-controller-manager",
                                              "kube-scheduler"};

// Seconds from each kubelet's start until the static apiserver answered /readyz (-1: not
// measured).
double g_ours_readyz_s = -1;

// The first non-loopback IPv4 address of an interface that is up: what --node-ip names (the
// upstream kubelet refuses a loopback one).
std::string HostIPv4() {
  struct ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string out;
  for (struct ifaddrs* i = list; i != nullptr && out.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char buf[INET_ADDRSTRLEN];
    auto* sin = reinterpret_cast<struct sockaddr_in*>(i->ifa_addr);
    if (inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf) != nullptr) out = buf;
  }
  freeifaddrs(list);
  return out;
}

class SelfHostedTest : public StaticPodTest {
 protected:
  void SetUp() override {
    StaticPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    script_ =
        std::string(std::getenv("KUBELET_E2E_HARNESS") ? std::getenv("KUBELET_E2E_HARNESS") : "") +
        "/controlplane-env.sh";
    cp_dir_ = dir_ + "/cp";
    auto r =
        RunCommand({"bash", script_, "static-pods", cp_dir_, manifests_, node_, BusyboxImage()}, {},
                   absl::Seconds(120));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->exit_code, 0) << r->err;
    absl::StatusOr<ControlPlane> cp = ControlPlane::Load(cp_dir_ + "/env");
    KUBELET_CP_SKIP_OR_FAIL(cp);
    cp_ = std::move(*cp);
    kubeconfig_ = std::string(absl::StripAsciiWhitespace(r->out));
    // A cgroupRoot of its own: another kubelet on this host (below the default root) would take
    // the control plane's pod cgroups for orphans and kill them, and this one theirs.
    cgroup_root_ =
        absl::StrCat("/e2e-selfhosted-", ::getpid(), "-", absl::ToUnixMicros(absl::Now()) % 100000);
    for (const auto& [c, dir] : CgroupMounts()) {
      std::filesystem::create_directories(dir + cgroup_root_);
    }
    node_ip_ = HostIPv4();
    ASSERT_FALSE(node_ip_.empty()) << "no non-loopback IPv4 address for --node-ip";
    verbosity_ = 2;
  }

  void TearDown() override {
    if (cp_ && ApiReady()) {
      (void)cp_->Kubectl({"delete", "pod", "-n", "default", PodName("web"), "--grace-period=1",
                          "--wait=true", "--timeout=60s"},
                         {}, absl::Seconds(70));
    }
    StaticPodTest::TearDown();  // the manifests go, the kubelet stops the pods, then stops
    if (!cp_dir_.empty()) {
      (void)RunCommand({"bash", script_, "down", cp_dir_}, {}, absl::Seconds(120));
    }
    if (!cgroup_root_.empty()) {
      for (const auto& [c, dir] : CgroupMounts()) RemoveCgroupTree(dir + cgroup_root_);
    }
    // The upstream kubelet bind-mounts its --root-dir onto itself and leaves the mount behind.
    if (!dir_.empty()) {
      for (int i = 0; i < 4 && ::umount2((dir_ + "/root").c_str(), MNT_DETACH) == 0; ++i) {
      }
    }
  }

  std::string ExtraConfig() override {
    // As OpenShift's kubelet.conf, where it applies here.
    return absl::StrCat("cgroupDriver: cgroupfs\ncgroupRoot: ", cgroup_root_,
                        "\nmaxPods: 250\nrotateCertificates: true\nserializeImagePulls: false\n");
  }

  // OpenShift's kubelet unit line (paths and addresses of this test); `upstream`: without what
  // the upstream v1.28 kubelet refuses (--container-runtime was removed in v1.27; a
  // node-role.kubernetes.io label in --node-labels is fatal there).
  std::vector<std::string> UnitFlags(bool upstream) const {
    std::vector<std::string> f = {"--kubeconfig=" + kubeconfig_};
    if (!upstream) f.push_back("--container-runtime=remote");
    f.push_back("--container-runtime-endpoint=" + endpoint_);
    f.push_back(upstream ? "--node-labels=node.openshift.io/os_id=rhcos"
                         : "--node-labels=node-role.kubernetes.io/master,node.openshift.io/"
                           "os_id=rhcos");
    f.insert(f.end(), {"--register-with-taints=node-role.kubernetes.io/master=:NoSchedule",
                       "--node-ip=" + node_ip_, "--minimum-container-ttl-duration=6m0s",
                       "--cloud-provider=", "--system-reserved=cpu=500m,memory=1Gi"});
    return f;
  }

  // The static apiserver answers /readyz with "ok" (anonymous, its CA checked).
  bool ApiReady() {
    HttpAnswer a = HttpRequest(cp_->server() + "/readyz",
                               HttpOptions{.ca_file = cp_->ca_file(), .timeout = absl::Seconds(2)});
    return a.code == 200 && a.body == "ok";
  }
  // Seconds from `t0` until ApiReady(); -1 when not within `timeout`.
  double WaitApiReady(absl::Time t0, absl::Duration timeout) {
    if (!WaitUntil([&] { return ApiReady(); }, timeout, absl::Milliseconds(100))) return -1;
    return absl::ToDoubleSeconds(absl::Now() - t0);
  }

  json GetJson(const std::vector<std::string>& args) {
    return cp_->KubectlJson(args, absl::Seconds(20));
  }
  json MirrorPod(const std::string& component) {
    json j = GetJson({"get", "pod", "-n", "kube-system", PodName(component)});
    return j.is_object() ? j : json();
  }
  // The pod's first container is running with CRI id `id` and, if `ready`, ready.
  static bool StatusShows(const json& pod, const std::string& id, bool ready) {
    if (!pod.is_object()) return false;
    for (const json& cs : pod["status"].value("containerStatuses", json::array())) {
      if (!cs.contains("state") || !cs["state"].contains("running")) return false;
      if (!absl::EndsWith(cs.value("containerID", ""), "://" + id)) return false;
      if (ready && !cs.value("ready", false)) return false;
      return true;
    }
    return false;
  }

  // The running container of each static pod (and of the API pod "web"): pod base -> id.
  std::map<std::string, std::string> RunningIds() {
    std::map<std::string, std::string> out;
    std::vector<std::string> bases = kComponents;
    bases.push_back("web");
    for (const std::string& b : bases) {
      auto running = Running(b);
      if (running.size() == 1) out[b] = running[0].id();
    }
    return out;
  }
  // Every container of this node's pods, any state.
  std::set<std::string> AllContainerIds() {
    std::set<std::string> out;
    for (const auto& c : Containers("")) out.insert(c.id());
    return out;
  }

  // Lines of the kubelet's log about the unreachable API server.
  int RefusedLines() {
    int n = 0;
    for (absl::string_view line : absl::StrSplit(kubelet_->Log(), '\n')) {
      if (absl::StrContains(line, "connection refused") ||
          absl::StrContains(line, "Couldn't connect")) {
        ++n;
      }
    }
    return n;
  }

  std::string script_, cp_dir_, kubeconfig_, node_ip_, cgroup_root_;
  std::optional<ControlPlane> cp_;
};

TEST_F(SelfHostedTest, ControlPlaneAsStaticPods) {
  // 1. The kubelet starts against an API server that does not exist yet.
  ASSERT_FALSE(ApiReady());
  const absl::Time t0 = absl::Now();
  StartKubelet(UnitFlags(false));
  const double healthz_s = absl::ToDoubleSeconds(absl::Now() - t0);
  ASSERT_EQ(HttpGet(healthz_port_, "/healthz").body, "ok");
  // Static pods start without the API server: etcd runs before the apiserver answers.
  ASSERT_TRUE(WaitUntil([&] { return !Running("etcd").empty(); }, absl::Seconds(120)))
      << kubelet_->Log();
  const double etcd_s = absl::ToDoubleSeconds(absl::Now() - t0);
  const double readyz_s = WaitApiReady(t0, absl::Seconds(240));
  ASSERT_GE(readyz_s, 0) << "the static kube-apiserver never answered /readyz\n" << kubelet_->Log();
  g_ours_readyz_s = readyz_s;
  const int refused = RefusedLines();
  std::printf(
      "[selfhosted %s] ours: healthz %.2fs, etcd running %.2fs, apiserver /readyz %.2fs after "
      "the kubelet's start; %d log lines about the unreachable API server meanwhile\n",
      RuntimeName().c_str(), healthz_s, etcd_s, readyz_s, refused);
  // Quiet retries: back-off, not a line per attempt per 100 ms.
  EXPECT_LE(refused, 20 + static_cast<int>(readyz_s) * 2) << kubelet_->Log();

  // 2. The Node registers: labels, taint, InternalIP.
  json node;
  ASSERT_TRUE(WaitUntil(
      [&] {
        node = GetJson({"get", "node", node_});
        return node.is_object();
      },
      absl::Seconds(120), absl::Seconds(1)))
      << kubelet_->Log();
  const json labels = node["metadata"].value("labels", json::object());
  EXPECT_EQ(labels.value("node.openshift.io/os_id", ""), "rhcos") << labels.dump();
  EXPECT_EQ(labels.value("kubernetes.io/hostname", ""), node_) << labels.dump();
  bool tainted = false;
  for (const json& t : node["spec"].value("taints", json::array())) {
    tainted |= t.value("key", "") == "node-role.kubernetes.io/master" &&
               t.value("effect", "") == "NoSchedule";
  }
  EXPECT_TRUE(tainted) << node["spec"].dump();
  bool internal_ip = false;
  for (const json& a : node["status"].value("addresses", json::array())) {
    internal_ip |= a.value("type", "") == "InternalIP" && a.value("address", "") == node_ip_;
  }
  EXPECT_TRUE(internal_ip) << node["status"].value("addresses", json::array()).dump();

  // Every static pod runs and has a mirror pod with its real status.
  std::map<std::string, std::string> ids;
  ASSERT_TRUE(WaitUntil(
      [&] {
        ids = RunningIds();
        for (const std::string& c : kComponents)
          if (!ids.count(c)) return false;
        return true;
      },
      absl::Seconds(120), absl::Seconds(1)))
      << kubelet_->Log();
  for (const std::string& c : kComponents) {
    json mirror;
    EXPECT_TRUE(WaitUntil(
        [&] {
          mirror = MirrorPod(c);
          // The controller manager may have crashed once while the API server was not up yet.
          return StatusShows(mirror, RunningIds()[c], c == "kube-apiserver") &&
                 mirror["status"].value("phase", "") == "Running";
        },
        absl::Seconds(120), absl::Seconds(1)))
        << c << ": " << mirror.dump();
    if (mirror.is_object()) {
      EXPECT_TRUE(mirror["metadata"]["annotations"].contains("kubernetes.io/config.mirror")) << c;
    }
  }
  const double mirrors_s = absl::ToDoubleSeconds(absl::Now() - t0);
  std::printf("[selfhosted %s] Node registered, 4 mirror pods with status %.2fs after start\n",
              RuntimeName().c_str(), mirrors_s);

  // 3. An API pod scheduled by the static scheduler runs beside the control plane.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return GetJson({"get", "sa", "default", "-n", "default"}).is_object();
      },
      absl::Seconds(120), absl::Seconds(1)));
  const std::string web = absl::StrCat(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", PodName("web"),
      "\n  namespace: default\nspec:\n  automountServiceAccountToken: false\n"
      "  terminationGracePeriodSeconds: 2\n"
      "  nodeSelector:\n    kubernetes.io/hostname: ",
      node_,
      "\n  tolerations:\n  - key: node-role.kubernetes.io/master\n    operator: Exists\n"
      "    effect: NoSchedule\n  containers:\n  - name: main\n    image: ",
      BusyboxImage(), "\n    command: [\"sh\", \"-c\", ", kSleepForever,
      "]\n    resources:\n      requests:\n        cpu: 10m\n");
  {
    auto r = cp_->Kubectl({"apply", "-f", "-"}, web);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->exit_code, 0) << r->err;
  }
  json web_pod;
  ASSERT_TRUE(WaitUntil(
      [&] {
        web_pod = GetJson({"get", "pod", "-n", "default", PodName("web")});
        return web_pod.is_object() && web_pod["status"].value("phase", "") == "Running";
      },
      absl::Seconds(120), absl::Seconds(1)))
      << web_pod.dump() << "\n"
      << kubelet_->Log();
  EXPECT_EQ(web_pod["spec"].value("nodeName", ""), node_);

  // 4. SIGKILL and restart: no control-plane container (nor the API pod's) is restarted.
  ids = RunningIds();
  ASSERT_EQ(ids.size(), 5u);
  const std::set<std::string> all_before = AllContainerIds();
  kubelet_->Signal(SIGKILL);
  ASSERT_TRUE(kubelet_->Wait(absl::Seconds(30)).has_value());
  kubelet_.reset();
  const absl::Time t_restart = absl::Now();
  StartKubelet(UnitFlags(false));
  // The restarted kubelet reports the apiserver Ready again through its mirror pod (its probe
  // starts unready), and the node stays Ready.
  EXPECT_TRUE(WaitUntil(
      [&] {
        json m = MirrorPod("kube-apiserver");
        return StatusShows(m, ids["kube-apiserver"], true);
      },
      absl::Seconds(120), absl::Seconds(1)))
      << kubelet_->Log();
  absl::SleepFor(absl::Seconds(15));  // a few sync rounds
  EXPECT_EQ(RunningIds(), ids);
  EXPECT_EQ(AllContainerIds(), all_before);
  std::printf("[selfhosted %s] SIGKILLed kubelet back, nothing restarted (checked %.1fs after)\n",
              RuntimeName().c_str(), absl::ToDoubleSeconds(absl::Now() - t_restart));

  // 5. An upgrade: one more apiserver flag. The pod is replaced, the API server comes back and
  // its mirror pod shows the flag; nothing else is touched.
  const std::string manifest = ReadFile(manifests_ + "/kube-apiserver.yaml");
  const std::string anchor = "    - \"--profiling=false\"\n";
  ASSERT_TRUE(absl::StrContains(manifest, anchor)) << manifest;
  const absl::Time t_upgrade = absl::Now();
  WriteManifest(
      "kube-apiserver.yaml",
      absl::StrReplaceAll(manifest, {{anchor, anchor + "    - \"--event-ttl=2h0m0s\"\n"}}));
  std::string new_api;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = Running("kube-apiserver");
        if (r.size() != 1 || r[0].id() == ids["kube-apiserver"]) return false;
        new_api = r[0].id();
        return true;
      },
      absl::Seconds(120), absl::Seconds(1)))
      << kubelet_->Log();
  EXPECT_GE(WaitApiReady(t_upgrade, absl::Seconds(180)), 0) << kubelet_->Log();
  json mirror;
  EXPECT_TRUE(WaitUntil(
      [&] {
        mirror = MirrorPod("kube-apiserver");
        if (!StatusShows(mirror, new_api, true)) return false;
        const json& cmd = mirror["spec"]["containers"][0]["command"];
        return std::find(cmd.begin(), cmd.end(), json("--event-ttl=2h0m0s")) != cmd.end();
      },
      absl::Seconds(120), absl::Seconds(1)))
      << mirror.dump() << "\n"
      << kubelet_->Log();
  // The new version started only once the old one had stopped, as upstream's pod workers hold
  // it: never two API servers at once (nor two etcds on one data dir).
  const auto old_status = Status(ids["kube-apiserver"]);
  const auto new_status = Status(new_api);
  EXPECT_NE(old_status.finished_at(), 0) << "the old apiserver container still runs";
  EXPECT_LE(old_status.finished_at(), new_status.started_at())
      << "the new apiserver started "
      << (old_status.finished_at() - new_status.started_at()) / 1000000
      << " ms before the old one had stopped";
  std::printf(
      "[selfhosted %s] apiserver upgraded: back and mirror pod updated %.2fs after the "
      "manifest changed\n",
      RuntimeName().c_str(), absl::ToDoubleSeconds(absl::Now() - t_upgrade));
  std::map<std::string, std::string> after = RunningIds();
  for (const std::string& b : {"etcd", "kube-controller-manager", "kube-scheduler", "web"}) {
    EXPECT_EQ(after[b], ids[b]) << b << " was restarted by the apiserver's upgrade";
  }

  // 6. A deleted mirror pod is recreated (the static pod itself is untouched).
  json sched = MirrorPod("kube-scheduler");
  ASSERT_TRUE(sched.is_object());
  const std::string old_uid = sched["metadata"].value("uid", "");
  {
    auto r = cp_->Kubectl(
        {"delete", "pod", "-n", "kube-system", PodName("kube-scheduler"), "--wait=false"});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->exit_code, 0) << r->err;
  }
  EXPECT_TRUE(WaitUntil(
      [&] {
        sched = MirrorPod("kube-scheduler");
        return sched.is_object() && sched["metadata"].value("uid", "") != old_uid &&
               StatusShows(sched, ids["kube-scheduler"], false);
      },
      absl::Seconds(120), absl::Seconds(1)))
      << sched.dump() << "\n"
      << kubelet_->Log();
  EXPECT_EQ(RunningIds()["kube-scheduler"], ids["kube-scheduler"]);
}

// The same start with the upstream kubelet, for the /readyz figure of both (printed only).
TEST_F(SelfHostedTest, UpstreamReadyz) {
  const char* assets = std::getenv("KUBEBUILDER_ASSETS");
  std::string upstream = cp_->Get("KUBELET_CP_ASSETS") + "/kubelet";
  if (assets != nullptr && *assets != '\0') upstream = std::string(assets) + "/kubelet";
  if (!std::filesystem::exists(upstream)) GTEST_SKIP() << "no upstream kubelet at " << upstream;
  WriteConfig();
  std::vector<std::string> args = KubeletArgs(UnitFlags(true));
  const absl::Time t0 = absl::Now();
  auto p = KubeletProcess::Start(upstream, args, {}, dir_ + "/kubelet.log");
  ASSERT_TRUE(p.ok()) << p.status();
  kubelet_ = std::move(*p);
  const double readyz_s = WaitApiReady(t0, absl::Seconds(240));
  EXPECT_GE(readyz_s, 0) << kubelet_->Log();
  std::printf(
      "[selfhosted %s] static apiserver /readyz after the kubelet's start: ours %.2fs, "
      "upstream %.2fs\n",
      RuntimeName().c_str(), g_ours_readyz_s, readyz_s);
}

}  // namespace
}  // namespace kubelet::e2e
