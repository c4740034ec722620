// Pod security contexts end to end, on the real v1.28.7 control plane and containerd with OUR
// kubelet binary: each field is read back from inside the container (/proc/self/status, id,
// namespaces), not from what the kubelet sent.
//   * runAsUser / runAsGroup / supplementalGroups / fsGroup (an emptyDir owned by the fsGroup),
//     allowPrivilegeEscalation: false (NoNewPrivs), readOnlyRootFilesystem, capabilities drop ALL
//     + add (the bounding set), seccompProfile RuntimeDefault and Localhost (a profile under
//     <root-dir>/seccomp that denies mkdir), a safe sysctl set in the pod's network namespace;
//   * privileged (all capabilities, no seccomp), hostPID / hostIPC / hostNetwork (the host's
//     namespaces), shareProcessNamespace (a container sees its sibling's processes);
//   * refusals with upstream's reasons and messages: runAsNonRoot against a root image and a
//     runAsUser 0 (CreateContainerConfigError), an unsafe sysctl (SysctlForbidden at admission);
//     the same sysctl runs once --allowed-unsafe-sysctls names it, and an invalid
//     --allowed-unsafe-sysctls entry stops the kubelet at start-up with upstream's message.
// No timing is asserted: every wait is a generous bound.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"

namespace kubelet::e2e {
namespace {

class SecurityContextTest : public ApiModeTest {
 protected:
  std::string ExtraConfig() override { return "address: 127.0.0.1\n"; }

  void StartNode(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--kubeconfig", kubeconfig_};
    args.insert(args.end(), extra.begin(), extra.end());
    StartKubelet(args);
    absl::Status ready = WaitNodeReady(absl::Seconds(90));
    ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();
  }

  // "key=value" lines of `kubectl logs` of the container once "done=1" is among them (empty
  // when that never happened).
  std::map<std::string, std::string> Report(const std::string& pod, const std::string& container) {
    std::map<std::string, std::string> out;
    WaitUntil(
        [&] {
          auto r = cp_->Kubectl({"logs", pod, "-n", "default", "-c", container});
          if (!r.ok() || r->exit_code != 0 || !absl::StrContains(r->out, "done=1")) return false;
          for (absl::string_view line : absl::StrSplit(r->out, '\n')) {
            const size_t eq = line.find('=');
            if (eq == absl::string_view::npos) continue;
            out[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
          }
          return true;
        },
        absl::Seconds(120), absl::Seconds(1));
    return out;
  }

  // The waiting state of the named container once its reason is `reason` (null if never).
  json WaitWaiting(const std::string& pod, const std::string& container,
                   const std::string& reason) {
    json waiting;
    WaitUntil(
        [&] {
          json p = GetPod(pod);
          if (!p.is_object()) return false;
          for (const json& cs : p["status"].value("containerStatuses", json::array())) {
            if (cs.value("name", "") != container) continue;
            json w = cs["state"].value("waiting", json());
            if (w.is_object() && w.value("reason", "") == reason) {
              waiting = w;
              return true;
            }
          }
          return false;
        },
        absl::Seconds(120), absl::Seconds(1));
    return waiting;
  }

  // The pod's status once its phase is `phase` (null if never).
  json WaitPhase(const std::string& pod, const std::string& phase) {
    json status;
    WaitUntil(
        [&] {
          json p = GetPod(pod);
          if (!p.is_object() || p["status"].value("phase", "") != phase) return false;
          status = p["status"];
          return true;
        },
        absl::Seconds(120), absl::Seconds(1));
    return status;
  }

  std::string Uid(const std::string& pod) {
    json p = GetPod(pod);
    return p.is_object() ? p["metadata"].value("uid", "") : "";
  }

  // A field of this process's /proc/self/status ("" when absent).
  static std::string OwnStatus(const std::string& key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
      if (absl::StartsWith(line, key + ":")) {
        return std::string(absl::StripAsciiWhitespace(line.substr(key.size() + 1)));
      }
    }
    return "";
  }

  static uint64_t Hex(const std::string& s) {
    uint64_t v = 0;
    return absl::SimpleHexAtoi(s, &v) ? v : 0;
  }

  // A shell fragment printing key=value lines about the calling process.
  static constexpr const char* kReportScript =
      "echo id=$(id); "
      "echo uid=$(id -u); echo gid=$(id -g); echo groups=$(id -G); "
      "grep -E '^(NoNewPrivs|Seccomp|CapBnd|CapEff):' /proc/self/status | tr -d ' \\t' | "
      "sed 's/:/=/'; ";
};

constexpr uint64_t kCapSysAdmin = 1ull << 21;
constexpr uint64_t kCapNetBindService = 1ull << 10;

TEST_F(SecurityContextTest, FieldsReachTheContainer) {
  // A Localhost seccomp profile under <root-dir>/seccomp that refuses mkdir.
  const std::string profiles = dir_ + "/root/seccomp/profiles";
  std::filesystem::create_directories(profiles);
  {
    std::ofstream(profiles + "/no-mkdir.json")
        << R"({"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir","mkdirat"],)"
        << R"("action":"SCMP_ACT_ERRNO"}]})";
  }
  StartNode();
  const std::string pod = PodName("secctx");
  const std::string manifest = absl::StrCat(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", pod,
      "\nspec:\n"
      "  nodeName: ",
      node_,
      "\n  automountServiceAccountToken: false\n"
      "  terminationGracePeriodSeconds: 2\n"
      "  securityContext:\n"
      "    runAsUser: 1000\n    runAsGroup: 3000\n    supplementalGroups: [4000]\n"
      "    fsGroup: 2000\n"
      "    seccompProfile:\n      type: RuntimeDefault\n"
      "    sysctls:\n    - name: net.ipv4.ip_unprivileged_port_start\n      value: \"100\"\n"
      "  volumes:\n  - name: data\n    emptyDir: {}\n"
      "  containers:\n"
      "  - name: main\n    image: ",
      BusyboxImage(), "\n    command: [\"sh\", \"-c\", \"", kReportScript,
      "echo port_start=$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start); "
      "touch /rootfs-probe 2>/dev/null && echo rootfs=writable || echo rootfs=readonly; "
      "echo data_gid=$(stat -c %g /data); touch /data/f && echo file_gid=$(stat -c %g /data/f); "
      "echo done=1; trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
      "    volumeMounts:\n    - name: data\n      mountPath: /data\n"
      "    securityContext:\n"
      "      allowPrivilegeEscalation: false\n      readOnlyRootFilesystem: true\n"
      "      capabilities:\n        drop: [\"ALL\"]\n        add: [\"NET_BIND_SERVICE\"]\n"
      "  - name: localhost-seccomp\n    image: ",
      BusyboxImage(), "\n    command: [\"sh\", \"-c\", \"", kReportScript,
      "mkdir /tmp/x 2>/dev/null && echo mkdir=allowed || echo mkdir=denied; "
      "echo done=1; trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
      "    securityContext:\n"
      "      runAsUser: 0\n"
      "      seccompProfile:\n        type: Localhost\n"
      "        localhostProfile: profiles/no-mkdir.json\n");
  ASSERT_TRUE(Apply(manifest).ok());

  std::map<std::string, std::string> main = Report(pod, "main");
  ASSERT_EQ(main["done"], "1") << kubelet_->Log();
  EXPECT_EQ(main["uid"], "1000") << main["id"];
  EXPECT_EQ(main["gid"], "3000") << main["id"];
  std::vector<std::string> groups = absl::StrSplit(main["groups"], ' ', absl::SkipEmpty());
  EXPECT_NE(std::find(groups.begin(), groups.end(), "2000"), groups.end()) << main["id"];
  EXPECT_NE(std::find(groups.begin(), groups.end(), "4000"), groups.end()) << main["id"];
  EXPECT_EQ(main["NoNewPrivs"], "1");
  EXPECT_EQ(main["Seccomp"], "2");  // a filter: the runtime's default profile
  EXPECT_EQ(Hex(main["CapBnd"]), kCapNetBindService) << main["CapBnd"];
  EXPECT_EQ(main["port_start"], "100");
  EXPECT_EQ(main["rootfs"], "readonly");
  EXPECT_EQ(main["data_gid"], "2000");
  EXPECT_EQ(main["file_gid"], "2000");  // the fsGroup directory's set-group-ID bit

  std::map<std::string, std::string> local = Report(pod, "localhost-seccomp");
  ASSERT_EQ(local["done"], "1") << kubelet_->Log();
  EXPECT_EQ(local["uid"], "0");
  EXPECT_EQ(local["gid"], "3000");  // the pod's runAsGroup still applies
  EXPECT_EQ(local["Seccomp"], "2");
  EXPECT_EQ(local["mkdir"], "denied");
  EXPECT_EQ(local["NoNewPrivs"], "0");
  // The runtime's default capabilities: no CAP_SYS_ADMIN.
  EXPECT_EQ(Hex(local["CapBnd"]) & kCapSysAdmin, 0u) << local["CapBnd"];
}

TEST_F(SecurityContextTest, PrivilegedAndHostNamespaces) {
  StartNode();
  auto ns_link = [](const std::string& kind) {
    std::error_code ec;
    return std::filesystem::read_symlink("/proc/self/ns/" + kind, ec).string();
  };
  const std::string ns_script =
      "echo pidns=$(readlink /proc/self/ns/pid); echo ipcns=$(readlink /proc/self/ns/ipc); "
      "echo netns=$(readlink /proc/self/ns/net); ";

  const std::string host = PodName("hostns");
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", host,
                                 "\nspec:\n  nodeName: ", node_,
                                 "\n  automountServiceAccountToken: false\n"
                                 "  terminationGracePeriodSeconds: 2\n"
                                 "  hostPID: true\n  hostIPC: true\n  hostNetwork: true\n"
                                 "  containers:\n  - name: main\n    image: ",
                                 BusyboxImage(), "\n    command: [\"sh\", \"-c\", \"",
                                 kReportScript, ns_script,
                                 "echo done=1; trap 'exit 0' TERM; "
                                 "while true; do sleep 1; done\"]\n"
                                 "    securityContext:\n      privileged: true\n"))
                  .ok());
  const std::string shared = PodName("sharedpid");
  ASSERT_TRUE(
      Apply(absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", shared,
                         "\nspec:\n  nodeName: ", node_,
                         "\n  automountServiceAccountToken: false\n"
                         "  terminationGracePeriodSeconds: 2\n"
                         "  shareProcessNamespace: true\n"
                         "  containers:\n  - name: sibling\n    image: ",
                         BusyboxImage(),
                         "\n    command: [\"sh\", \"-c\", \"exec sleep 86400\"]\n"
                         "  - name: main\n    image: ",
                         BusyboxImage(), "\n    command: [\"sh\", \"-c\", \"", ns_script,
                         "for i in $(seq 60); do ps -o args | grep -q '[s]leep 86400' && break; "
                         "sleep 1; done; "
                         "echo sees_sibling=$(ps -o args | grep -c '[s]leep 86400'); "
                         "echo procs=$(ps -o pid,args | tr '\\n' ';'); "
                         "echo done=1; trap 'exit 0' TERM; "
                         "while true; do sleep 1; done\"]\n"))
          .ok());

  std::map<std::string, std::string> h = Report(host, "main");
  ASSERT_EQ(h["done"], "1") << kubelet_->Log();
  EXPECT_EQ(h["pidns"], ns_link("pid"));
  EXPECT_EQ(h["ipcns"], ns_link("ipc"));
  EXPECT_EQ(h["netns"], ns_link("net"));
  EXPECT_EQ(h["Seccomp"], "0");  // privileged: unconfined
  EXPECT_NE(Hex(h["CapBnd"]) & kCapSysAdmin, 0u) << h["CapBnd"];
  EXPECT_NE(Hex(h["CapEff"]) & kCapSysAdmin, 0u) << h["CapEff"];

  std::map<std::string, std::string> s = Report(shared, "main");
  ASSERT_EQ(s["done"], "1") << kubelet_->Log();
  EXPECT_EQ(s["sees_sibling"], "1") << s["procs"];
  EXPECT_NE(s["pidns"], ns_link("pid"));
  EXPECT_NE(s["ipcns"], ns_link("ipc"));
  EXPECT_NE(s["netns"], ns_link("net"));
}

TEST_F(SecurityContextTest, RefusalsWithUpstreamReasons) {
  StartNode();
  // runAsNonRoot against busybox, whose image runs as root.
  const std::string nonroot = PodName("nonroot");
  ASSERT_TRUE(Apply(BusyboxPod(nonroot, kSleepForever,
                               PodParts{.spec = absl::StrCat("  nodeName: ", node_,
                                                             "\n  automountServiceAccountToken: "
                                                             "false\n  securityContext:\n"
                                                             "    runAsNonRoot: true\n")}))
                  .ok());
  json w = WaitWaiting(nonroot, "main", "CreateContainerConfigError");
  ASSERT_TRUE(w.is_object()) << GetPod(nonroot).dump() << "\n" << kubelet_->Log();
  EXPECT_EQ(w.value("message", ""),
            absl::StrCat("container has runAsNonRoot and image will run as root (pod: \"", nonroot,
                         "_default(", Uid(nonroot), ")\", container: main)"));

  // runAsNonRoot with runAsUser 0.
  const std::string uid0 = PodName("uidzero");
  ASSERT_TRUE(Apply(BusyboxPod(uid0, kSleepForever,
                               PodParts{.spec = absl::StrCat("  nodeName: ", node_,
                                                             "\n  automountServiceAccountToken: "
                                                             "false\n  securityContext:\n"
                                                             "    runAsNonRoot: true\n"
                                                             "    runAsUser: 0\n")}))
                  .ok());
  w = WaitWaiting(uid0, "main", "CreateContainerConfigError");
  ASSERT_TRUE(w.is_object()) << GetPod(uid0).dump();
  EXPECT_EQ(w.value("message", ""),
            absl::StrCat("container's runAsUser breaks non-root policy (pod: \"", uid0, "_default(",
                         Uid(uid0), ")\", container: main)"));

  // The same pod with a non-root user runs.
  const std::string ok = PodName("nonroot-ok");
  ASSERT_TRUE(Apply(BusyboxPod(ok, kSleepForever,
                               PodParts{.spec = absl::StrCat("  nodeName: ", node_,
                                                             "\n  automountServiceAccountToken: "
                                                             "false\n  securityContext:\n"
                                                             "    runAsNonRoot: true\n"
                                                             "    runAsUser: 1000\n")}))
                  .ok());
  EXPECT_TRUE(WaitPhase(ok, "Running").is_object()) << GetPod(ok).dump();

  // An unsafe sysctl is refused at admission: the pod fails without a sandbox.
  const std::string unsafe = PodName("unsafe-sysctl");
  ASSERT_TRUE(Apply(BusyboxPod(unsafe, kSleepForever,
                               PodParts{.spec = absl::StrCat("  nodeName: ", node_,
                                                             "\n  automountServiceAccountToken: "
                                                             "false\n  securityContext:\n"
                                                             "    sysctls:\n"
                                                             "    - name: net.core.somaxconn\n"
                                                             "      value: \"1024\"\n")}))
                  .ok());
  json st = WaitPhase(unsafe, "Failed");
  ASSERT_TRUE(st.is_object()) << GetPod(unsafe).dump() << "\n" << kubelet_->Log();
  EXPECT_EQ(st.value("reason", ""), "SysctlForbidden");
  EXPECT_EQ(st.value("message", ""),
            "Pod was rejected: forbidden sysctl: \"net.core.somaxconn\" not allowlisted");
  json events = GetJson({"get", "events", "-n", "default", "--field-selector",
                         "involvedObject.name=" + unsafe + ",reason=SysctlForbidden"});
  ASSERT_TRUE(events.is_object());
  EXPECT_FALSE(events.value("items", json::array()).empty());
}

TEST_F(SecurityContextTest, AllowedUnsafeSysctls) {
  // An entry that is not known to be namespaced stops the kubelet with upstream's message.
  WriteConfig();
  auto bad = RunCommand(
      [&] {
        std::vector<std::string> argv = {KubeletBinary()};
        for (const std::string& a :
             KubeletArgs({"--kubeconfig", kubeconfig_, "--allowed-unsafe-sysctls=vm.swappiness"})) {
          argv.push_back(a);
        }
        return argv;
      }(),
      {}, absl::Seconds(60));
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_NE(bad->exit_code, 0);
  EXPECT_TRUE(absl::StrContains(bad->out + bad->err,
                                "the sysctl \\\"vm.swappiness\\\" are not known to be namespaced"))
      << bad->out << bad->err;

  StartNode({"--allowed-unsafe-sysctls=net.core.somaxconn,kernel.msg*"});
  const std::string pod = PodName("allowed-sysctl");
  ASSERT_TRUE(Apply(BusyboxPod(pod,
                               "\"echo somaxconn=$(cat /proc/sys/net/core/somaxconn); "
                               "echo msgmax=$(cat /proc/sys/kernel/msgmax); echo done=1; "
                               "trap 'exit 0' TERM; while true; do sleep 1; done\"",
                               PodParts{.spec = absl::StrCat("  nodeName: ", node_,
                                                             "\n  automountServiceAccountToken: "
                                                             "false\n  securityContext:\n"
                                                             "    sysctls:\n"
                                                             "    - name: net.core.somaxconn\n"
                                                             "      value: \"1234\"\n"
                                                             "    - name: kernel.msgmax\n"
                                                             "      value: \"12345\"\n")}))
                  .ok());
  std::map<std::string, std::string> r = Report(pod, "main");
  ASSERT_EQ(r["done"], "1") << GetPod(pod).dump() << "\n" << kubelet_->Log();
  EXPECT_EQ(r["somaxconn"], "1234");
  EXPECT_EQ(r["msgmax"], "12345");
}

}  // namespace
}  // namespace kubelet::e2e
