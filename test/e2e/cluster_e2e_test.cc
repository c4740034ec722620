// The node in a cluster, as users run it, on the real v1.28.7 control plane and containerd with
// OUR kubelet binary (--kubeconfig, the node's identity):
//   * a Deployment of 3 replicas is scheduled onto the node by the scheduler and runs;
//   * `kubectl logs` of a pod works through the API server (apiserver -> kubelet :10250);
//   * the API server stopped for 60 s and started again: running containers are never
//     restarted, the kubelet keeps serving healthz, the node turns Ready again, the Lease is
//     renewed and pod statuses that changed during the outage catch up.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"

namespace kubelet::e2e {
namespace {

class ClusterTest : public ApiModeTest {
 protected:
  std::string ExtraConfig() override { return "address: 127.0.0.1\n"; }

  // The ids of the running containers of pods whose name starts with `prefix`.
  std::set<std::string> RunningIds(const std::string& prefix) {
    std::set<std::string> ids;
    auto list = cri_->ListContainers(nullptr);
    if (!list.ok()) return ids;
    for (const Container& c : *list) {
      if (c.state() != runtime::v1::CONTAINER_RUNNING) continue;
      auto it = c.labels().find("io.kubernetes.pod.name");
      if (it != c.labels().end() && absl::StartsWith(it->second, prefix)) ids.insert(c.id());
    }
    return ids;
  }

  // The kubelet process has not exited.
  bool KubeletAlive() { return !kubelet_->Wait(absl::ZeroDuration()).has_value(); }

  // The pod's phase in the API ("" when it cannot be read).
  std::string Phase(const std::string& name) {
    json p = GetPod(name);
    return p.is_object() ? p["status"].value("phase", "") : "";
  }
};

TEST_F(ClusterTest, DeploymentOfThreeReplicasRunsOnTheNode) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  absl::Status ready = WaitNodeReady(absl::Seconds(90));
  ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();

  const std::string name = PodName("web");
  // Pinned to this node: other tests' nodes may still exist in the shared cluster.
  const std::string deployment = absl::StrCat(
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ", name,
      "\n  namespace: default\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n      app: ",
      name, "\n  template:\n    metadata:\n      labels:\n        app: ", name,
      "\n    spec:\n      automountServiceAccountToken: false\n"
      "      terminationGracePeriodSeconds: 5\n"
      "      nodeSelector:\n        kubernetes.io/hostname: ",
      node_, "\n      containers:\n      - name: main\n        image: ", BusyboxImage(),
      "\n        command: [\"sh\", \"-c\", ", kSleepForever, "]\n");
  ASSERT_TRUE(Apply(deployment).ok());

  json d;
  bool available = WaitUntil(
      [&] {
        d = GetJson({"get", "deployment", name, "-n", "default"});
        return d.is_object() && d["status"].value("availableReplicas", 0) == 3 &&
               d["status"].value("readyReplicas", 0) == 3;
      },
      absl::Seconds(180), absl::Seconds(1));
  ASSERT_TRUE(available) << d.dump(2) << "\n" << kubelet_->Log();
  EXPECT_EQ(RunningIds(name).size(), 3u);
  json pods = GetJson({"get", "pods", "-n", "default", "-l", "app=" + name});
  ASSERT_TRUE(pods.is_object());
  ASSERT_EQ(pods["items"].size(), 3u);
  for (const json& p : pods["items"]) {
    EXPECT_EQ(p["spec"].value("nodeName", ""), node_);
    EXPECT_EQ(p["status"].value("phase", ""), "Running");
    EXPECT_TRUE(ConditionTrue(p, "Ready"));
  }

  // Scaled down to one: two pods stop and disappear.
  auto scale = cp_->Kubectl({"scale", "deployment", name, "-n", "default", "--replicas=1"});
  ASSERT_TRUE(scale.ok()) << scale.status();
  ASSERT_EQ(scale->exit_code, 0) << scale->err;
  EXPECT_TRUE(WaitUntil([&] { return RunningIds(name).size() == 1; }, absl::Seconds(90)))
      << kubelet_->Log();
  EXPECT_TRUE(WaitUntil(
      [&] {
        json left = GetJson({"get", "pods", "-n", "default", "-l", "app=" + name});
        return left.is_object() && left["items"].size() == 1;
      },
      absl::Seconds(90), absl::Seconds(1)));
  (void)cp_->Kubectl({"delete", "deployment", name, "-n", "default", "--wait=false"});
}

TEST_F(ClusterTest, KubectlLogsThroughTheApiServer) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  const std::string name = PodName("talker");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  ASSERT_TRUE(Apply(BusyboxPod(name,
                               "\"echo first line; echo second line; trap 'exit 0' TERM; "
                               "while true; do sleep 1; done\"",
                               parts))
                  .ok());
  CommandResult logs;
  bool got = WaitUntil(
      [&] {
        auto r = cp_->Kubectl({"logs", name, "-n", "default"});
        if (!r.ok()) return false;
        logs = *r;
        return r->exit_code == 0 && absl::StrContains(r->out, "second line");
      },
      absl::Seconds(120), absl::Seconds(1));
  ASSERT_TRUE(got) << logs.out << logs.err << "\n" << kubelet_->Log();
  EXPECT_EQ(logs.out, "first line\nsecond line\n");
  auto tail = cp_->Kubectl({"logs", name, "-n", "default", "--tail=1"});
  ASSERT_TRUE(tail.ok()) << tail.status();
  EXPECT_EQ(tail->out, "second line\n") << tail->err;
  auto container = cp_->Kubectl({"logs", name, "-n", "default", "-c", "main", "--timestamps"});
  ASSERT_TRUE(container.ok()) << container.status();
  EXPECT_TRUE(absl::StrContains(container->out, "Z first line")) << container->out;
}

TEST_F(ClusterTest, ApiServerOutageOfSixtySeconds) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  // One pod that runs on, one that finishes during the outage (its status must catch up).
  const std::string steady = PodName("steady");
  const std::string finisher = PodName("finisher");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  ASSERT_TRUE(Apply(BusyboxPod(steady, kSleepForever, parts)).ok());
  PodParts once = parts;
  once.spec += "  restartPolicy: Never\n";
  ASSERT_TRUE(Apply(BusyboxPod(finisher, "\"sleep 25; exit 0\"", once)).ok());
  ASSERT_TRUE(WaitUntil([&] { return Phase(steady) == "Running" && Phase(finisher) == "Running"; },
                        absl::Seconds(120), absl::Milliseconds(500)))
      << kubelet_->Log();
  const std::set<std::string> before = RunningIds(steady);
  ASSERT_EQ(before.size(), 1u);

  ASSERT_TRUE(cp_->StopApiServer().ok());
  const absl::Time stopped = absl::Now();
  // Whatever happens below, the shared cluster gets its API server back.
  ControlPlane::ApiServerRestart restart(*cp_);
  // 60 s without an API server: the kubelet stays healthy and runs its pods on.
  while (absl::Now() - stopped < absl::Seconds(60)) {
    absl::SleepFor(absl::Seconds(5));
    ASSERT_TRUE(KubeletAlive()) << kubelet_->Log();
    HttpResult healthz = HttpGet(healthz_port_, "/healthz");
    EXPECT_EQ(healthz.body, "ok") << healthz.status;
  }
  EXPECT_EQ(RunningIds(steady), before);
  EXPECT_TRUE(RunningIds(finisher).empty());  // it finished meanwhile

  absl::Status started = cp_->StartApiServer();
  restart.Release();
  ASSERT_TRUE(started.ok()) << started;
  const absl::Time back = absl::Now();

  // The node is Ready with a heartbeat after the outage, the Lease renewed after it.
  json node;
  EXPECT_TRUE(WaitUntil(
      [&] {
        node = GetNode();
        json r = Condition(node, "Ready");
        absl::Time hb;
        std::string err;
        return r.value("status", "") == "True" &&
               absl::ParseTime(absl::RFC3339_full, r.value("lastHeartbeatTime", ""), &hb, &err) &&
               hb >= absl::FromUnixSeconds(absl::ToUnixSeconds(back));
      },
      absl::Seconds(90), absl::Seconds(1)))
      << node.dump(2) << "\n"
      << kubelet_->Log();
  json lease;
  EXPECT_TRUE(WaitUntil(
      [&] {
        lease = GetLease();
        absl::Time renew;
        std::string err;
        return lease.is_object() &&
               absl::ParseTime(absl::RFC3339_full, lease["spec"].value("renewTime", ""), &renew,
                               &err) &&
               renew >= absl::FromUnixSeconds(absl::ToUnixSeconds(back)) - absl::Seconds(1);
      },
      absl::Seconds(60), absl::Seconds(1)))
      << lease.dump(2);
  // Statuses caught up: the finished pod is Succeeded in the API.
  json fin;
  EXPECT_TRUE(WaitUntil(
      [&] {
        fin = GetPod(finisher);
        return fin.is_object() && fin["status"].value("phase", "") == "Succeeded";
      },
      absl::Seconds(60), absl::Seconds(1)))
      << fin.dump(2) << "\n"
      << kubelet_->Log();
  // No running container was restarted.
  EXPECT_EQ(RunningIds(steady), before);
  json st = GetPod(steady);
  ASSERT_TRUE(st.is_object());
  EXPECT_EQ(st["status"].value("phase", ""), "Running");
  EXPECT_EQ(st["status"]["containerStatuses"][0].value("restartCount", -1), 0);
  ASSERT_TRUE(KubeletAlive());
}

}  // namespace
}  // namespace kubelet::e2e
