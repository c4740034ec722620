// Macro benchmark: a pod with N CSI persistent volumes, our kubelet against the upstream v1.28.7
// kubelet on the same containerd, control plane and driver (csi-driver-host-path with its
// node-driver-registrar and external-provisioner, from KUBEBUILDER_ASSETS), in the same run, and
// against the driver's own floor. For each N:
//
//   floor(N)     NodeStageVolume + NodePublishVolume of N provisioned volumes, called one after
//                the other straight on the driver's socket (what any kubelet must wait for).
//   <kubelet>(N) a pod with N bound claims (spec.nodeName set) created with `kubectl create` ->
//                the API server reports it Running (what a user waits for); the median of
//                `reps` pods, each with fresh claims, deleted (and waited for) in between.
//
// The CSIDriver has attachRequired: false, so no attacher is involved: the time is the
// kubelet's (claim lookups, the wait for the mounts, the container start). The two kubelets
// run one after the other, each with a driver of its own on its root dir, never together.
// Figures are printed, never asserted.
//
// Usage: csi_volumes_bench <our-kubelet> <upstream-kubelet> [N ...]   (default: 1 10)
// Env: KUBELET_E2E_* (the containerd harness), KUBELET_CP_ENV_FILE (the control plane) and
// KUBEBUILDER_ASSETS (hostpathplugin, csi-node-driver-registrar, csi-provisioner).
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/api_bench_util.h"
#include "bench/bench_util.h"
#include "kubelet/csi/csi_client.h"
#include "nlohmann/json.hpp"
#include "test/e2e/controlplane.h"
#include "test/e2e/kubelet_process.h"

namespace {

using kubelet::e2e::ControlPlane;
using kubelet::e2e::KubeletProcess;
using json = nlohmann::json;
using namespace kubelet::bench;  // NOLINT

constexpr char kDriver[] = "hostpath.csi.k8s.io";
constexpr char kClass[] = "bench-csi";
constexpr int kReps = 3;

std::string Assets() {
  const char* a = std::getenv("KUBEBUILDER_ASSETS");
  return a != nullptr ? a : "";
}

bool Apply(const ControlPlane& cp, const std::string& manifest) {
  auto r = cp.Kubectl({"apply", "-f", "-"}, manifest);
  return r.ok() && r->exit_code == 0;
}

// The driver's node plugin, its registrar and the provisioner, on a kubelet's root dir.
struct Driver {
  std::string socket;
  std::unique_ptr<KubeletProcess> plugin, registrar, provisioner;
  ~Driver() {
    for (auto* p : {&provisioner, &registrar, &plugin}) {
      if (*p) {
        (*p)->Signal(SIGTERM);
        (*p)->Wait(absl::Seconds(20));
      }
    }
  }
};

absl::StatusOr<std::unique_ptr<Driver>> StartDriver(const ControlPlane& cp, const std::string& node,
                                                    const std::string& root,
                                                    const std::string& dir) {
  auto d = std::make_unique<Driver>();
  std::filesystem::create_directories(root + "/plugins/csi-hostpath");
  std::filesystem::create_directories(dir + "/csi-state");
  d->socket = root + "/plugins/csi-hostpath/csi.sock";
  auto p = KubeletProcess::Start(
      Assets() + "/hostpathplugin",
      {"--endpoint=unix://" + d->socket, "--nodeid=" + node, absl::StrCat("--drivername=", kDriver),
       "--statedir=" + dir + "/csi-state"},
      {}, dir + "/hostpathplugin.log");
  if (!p.ok()) return p.status();
  d->plugin = std::move(*p);
  for (absl::Time t = absl::Now(); !std::filesystem::exists(d->socket);) {
    if (absl::Now() - t > absl::Seconds(30)) return absl::DeadlineExceededError("no driver socket");
    absl::SleepFor(absl::Milliseconds(50));
  }
  auto r = KubeletProcess::Start(
      Assets() + "/csi-node-driver-registrar",
      {"--csi-address=" + d->socket, "--kubelet-registration-path=" + d->socket,
       "--plugin-registration-path=" + root + "/plugins_registry"},
      {}, dir + "/registrar.log");
  if (!r.ok()) return r.status();
  d->registrar = std::move(*r);
  auto v =
      KubeletProcess::Start(Assets() + "/csi-provisioner",
                            {"--csi-address=" + d->socket, "--kubeconfig=" + cp.admin_kubeconfig(),
                             "--feature-gates=Topology=true", "--extra-create-metadata"},
                            {}, dir + "/provisioner.log");
  if (!v.ok()) return v.status();
  d->provisioner = std::move(*v);
  // Registered: the CSINode lists the driver.
  for (absl::Time t = absl::Now();;) {
    json c = cp.KubectlJson({"get", "csinode", node});
    if (c.is_object() && c["spec"].value("drivers", json::array()).is_array() &&
        !c["spec"].value("drivers", json::array()).empty()) {
      break;
    }
    if (absl::Now() - t > absl::Seconds(60)) return absl::DeadlineExceededError("not registered");
    absl::SleepFor(absl::Milliseconds(200));
  }
  return d;
}

// Creates claims `names` (Immediate class) and waits until all are bound; their PV names.
absl::StatusOr<std::vector<std::string>> BoundClaims(const ControlPlane& cp,
                                                     const std::vector<std::string>& names) {
  json items = json::array();
  for (const std::string& n : names) {
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "PersistentVolumeClaim"},
                     {"metadata", {{"name", n}, {"namespace", "default"}}},
                     {"spec",
                      {{"accessModes", {"ReadWriteOnce"}},
                       {"storageClassName", kClass},
                       {"resources", {{"requests", {{"storage", "1Mi"}}}}}}}});
  }
  if (!Apply(cp, json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump())) {
    return absl::InternalError("creating the claims failed");
  }
  for (absl::Time t = absl::Now();;) {
    std::vector<std::string> pvs;
    for (const std::string& n : names) {
      json c = cp.KubectlJson({"get", "pvc", n});
      if (!c.is_object() || c["status"].value("phase", "") != "Bound") break;
      pvs.push_back(c["spec"].value("volumeName", ""));
    }
    if (pvs.size() == names.size()) return pvs;
    if (absl::Now() - t > absl::Minutes(2)) return absl::DeadlineExceededError("claims unbound");
    absl::SleepFor(absl::Milliseconds(200));
  }
}

void DeleteClaims(const ControlPlane& cp, const std::vector<std::string>& names) {
  std::vector<std::string> args = {"delete", "pvc", "--wait=true", "--timeout=120s"};
  args.insert(args.end(), names.begin(), names.end());
  (void)cp.Kubectl(args, {}, absl::Minutes(3));
}

std::string PodWithClaims(const std::string& name, const std::string& node,
                          const std::vector<std::string>& claims) {
  json volumes = json::array(), mounts = json::array();
  for (size_t i = 0; i < claims.size(); ++i) {
    const std::string v = absl::StrCat("v", i);
    volumes.push_back({{"name", v}, {"persistentVolumeClaim", {{"claimName", claims[i]}}}});
    mounts.push_back({{"name", v}, {"mountPath", absl::StrCat("/data", i)}});
  }
  return json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec",
               {{"nodeName", node},
                {"automountServiceAccountToken", false},
                {"terminationGracePeriodSeconds", 1},
                {"volumes", volumes},
                {"containers",
                 {{{"name", "main"},
                   {"image", "docker.io/library/busybox:1.36"},
                   {"command", {"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"}},
                   {"volumeMounts", mounts}}}}}}}
      .dump();
}

std::string Phase(const ControlPlane& cp, const std::string& pod) {
  auto r = cp.Kubectl({"get", "pod", pod, "-o", "jsonpath={.status.phase}"});
  return r.ok() && r->exit_code == 0 ? r->out : "";
}

// One kubelet: the median time from creating a pod with n bound claims to Running; and, when
// `floor` is set, the driver's own stage + publish time of n volumes on this kubelet's driver.
absl::Duration RunKubelet(const std::string& bin, const std::string& kind, int n,
                          const ControlPlane& cp, kubelet::cri::RuntimeService& rt,
                          const std::string& endpoint, const std::string& base,
                          absl::Duration* floor) {
  // Short paths: the registration socket below the kubelet's root dir must fit a unix socket
  // address (108 bytes).
  const std::string dir = absl::StrCat(base, "/", kind.substr(0, 1), n);
  std::filesystem::create_directories(dir);
  absl::StatusOr<ApiKubelet> started =
      StartApiKubelet(bin, absl::StrCat("bcsi-", kind.substr(0, 2), "-", n), cp, endpoint, dir);
  if (!started.ok()) {
    std::fprintf(stderr, "%s: %s\n", kind.c_str(), std::string(started.status().message()).c_str());
    return absl::InfiniteDuration();
  }
  ApiKubelet& k = *started;
  std::vector<absl::Duration> times;
  {
    absl::StatusOr<std::unique_ptr<Driver>> driver = StartDriver(cp, k.node, k.root_dir, dir);
    if (!driver.ok()) {
      std::fprintf(stderr, "%s: driver: %s\n", kind.c_str(),
                   std::string(driver.status().message()).c_str());
    } else {
      for (int rep = 0; rep < kReps; ++rep) {
        std::vector<std::string> claims;
        for (int i = 0; i < n; ++i) claims.push_back(absl::StrCat("c", rep, "-", i, "-", k.node));
        if (!BoundClaims(cp, claims).ok()) break;
        const std::string pod = absl::StrCat("p", rep, "-", k.node);
        const absl::Time t0 = absl::Now();
        auto created = cp.Kubectl({"create", "-f", "-"}, PodWithClaims(pod, k.node, claims));
        if (!created.ok() || created->exit_code != 0) break;
        while (Phase(cp, pod) != "Running" && absl::Now() - t0 < absl::Minutes(5)) {
          absl::SleepFor(absl::Milliseconds(20));
        }
        times.push_back(absl::Now() - t0);
        (void)cp.Kubectl({"delete", "pod", pod, "--wait=true", "--timeout=120s"}, {},
                         absl::Minutes(3));
        DeleteClaims(cp, claims);
      }
      if (floor != nullptr) {
        std::vector<std::string> claims;
        for (int i = 0; i < n; ++i) claims.push_back(absl::StrCat("f-", i, "-", k.node));
        absl::StatusOr<std::vector<std::string>> pvs = BoundClaims(cp, claims);
        std::unique_ptr<kubelet::csi::CsiClient> client = kubelet::csi::NewGrpcCsiClient();
        std::vector<absl::Duration> floors;
        std::vector<std::string> handles;
        for (const std::string& pv : pvs.ok() ? *pvs : std::vector<std::string>{}) {
          handles.push_back(
              cp.KubectlJson({"get", "pv", pv})["spec"]["csi"].value("volumeHandle", ""));
        }
        for (int rep = 0; pvs.ok() && rep < kReps; ++rep) {
          absl::Duration total;
          for (size_t i = 0; i < handles.size(); ++i) {
            const std::string vdir = absl::StrCat(dir, "/floor/", rep, "-", i);
            std::filesystem::create_directories(vdir + "/globalmount");
            const absl::Time t0 = absl::Now();
            kubelet::csi::StageRequest s;
            s.volume_id = handles[i];
            s.staging_target_path = vdir + "/globalmount";
            (void)client->NodeStageVolume((*driver)->socket, s, absl::Minutes(1));
            kubelet::csi::PublishRequest p;
            p.volume_id = handles[i];
            p.staging_target_path = s.staging_target_path;
            p.target_path = vdir + "/mount";
            absl::Status st = client->NodePublishVolume((*driver)->socket, p, absl::Minutes(1));
            total += absl::Now() - t0;
            if (!st.ok()) std::fprintf(stderr, "floor publish: %s\n", st.ToString().c_str());
            (void)client->NodeUnpublishVolume((*driver)->socket, handles[i], p.target_path,
                                              absl::Minutes(1));
            (void)client->NodeUnstageVolume((*driver)->socket, handles[i], s.staging_target_path,
                                            absl::Minutes(1));
          }
          floors.push_back(total);
        }
        std::sort(floors.begin(), floors.end());
        if (!floors.empty()) *floor = floors[floors.size() / 2];
        DeleteClaims(cp, claims);
      }
    }
  }
  StopApiKubelet(k, cp, rt);
  if (times.size() < static_cast<size_t>(kReps)) return absl::InfiniteDuration();
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<KubeletPairArgs> args = ParseKubeletPairArgs(argc, argv, {1, 10});
  if (!args) return 2;
  const std::string &ours = args->ours, &upstream = args->upstream;
  const std::vector<int>& sizes = args->sizes;
  for (const char* bin : {"hostpathplugin", "csi-node-driver-registrar", "csi-provisioner"}) {
    if (!std::filesystem::exists(Assets() + "/" + bin)) {
      std::fprintf(stderr, "%s is not in KUBEBUILDER_ASSETS (%s)\n", bin, Assets().c_str());
      return 2;
    }
  }
  int exit_code = 0;
  absl::StatusOr<ApiBenchEnv> env = LoadApiBenchEnv("kcsib-", &exit_code);
  if (!env.ok()) return exit_code;
  const ControlPlane& cp = *env->cp;
  if (!Apply(cp, absl::StrCat("apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n"
                              "  name: ",
                              kDriver,
                              "\nspec:\n  attachRequired: false\n  podInfoOnMount: true\n"
                              "  volumeLifecycleModes: [Persistent, Ephemeral]\n"
                              "  fsGroupPolicy: File\n---\n"
                              "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n"
                              "  name: ",
                              kClass, "\nprovisioner: ", kDriver,
                              "\nreclaimPolicy: Delete\nvolumeBindingMode: Immediate\n"))) {
    std::fprintf(stderr, "creating the CSIDriver and StorageClass failed\n");
    return 1;
  }
  std::printf("%-7s %-9s %-12s %-9s %-9s %-10s\n", "claims", "floor_ms", "upstream_ms", "ours_ms",
              "ours/up", "ours/floor");
  for (int n : sizes) {
    absl::Duration floor = absl::InfiniteDuration();
    const absl::Duration up =
        RunKubelet(upstream, "upstream", n, cp, *env->rt, env->endpoint, env->dir, nullptr);
    const absl::Duration us =
        RunKubelet(ours, "ours", n, cp, *env->rt, env->endpoint, env->dir, &floor);
    auto ms = [](absl::Duration d) {
      return d == absl::InfiniteDuration() ? -1.0 : absl::ToDoubleMilliseconds(d);
    };
    std::printf("%-7d %-9.0f %-12.0f %-9.0f %-9.2f %-10.2f\n", n, ms(floor), ms(up), ms(us),
                ms(up) > 0 ? ms(us) / ms(up) : -1, ms(floor) > 0 ? ms(us) / ms(floor) : -1);
    std::fflush(stdout);
  }
  (void)cp.Kubectl({"delete", "storageclass", kClass, "--wait=false"});
  (void)cp.Kubectl({"delete", "csidriver", kDriver, "--wait=false"});
  return 0;
}
