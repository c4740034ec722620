// End-to-end: pod status as the kubelet reports it in /pods (read-only port), for the states
// upstream users see: CrashLoopBackOff, ErrImageNeverPull, Completed/Succeeded, OOMKilled, and
// readiness flipping the Ready condition.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

using nlohmann::json;

class PodStatusTest : public StaticPodTest {
 protected:
  std::string ExtraConfig() override {
    read_only_port_ = FreePort();
    return "readOnlyPort: " + std::to_string(read_only_port_) + "\n";
  }

  // The pod named PodName(base) from /pods, or null.
  json Pod(const std::string& base) {
    HttpResult r = HttpGet(read_only_port_, "/pods");
    if (r.status != 200) return json();
    json list = json::parse(r.body, nullptr, false);
    if (list.is_discarded() || !list.contains("items")) return json();
    for (const json& p : list["items"]) {
      if (p["metadata"].value("name", "") == PodName(base)) return p;
    }
    return json();
  }

  // Waits until `pred(pod)` holds for pod `base`; returns the last pod seen.
  template <typename Pred>
  json WaitForPod(const std::string& base, Pred pred, absl::Duration timeout) {
    json last;
    WaitUntil(
        [&] {
          last = Pod(base);
          return !last.is_null() && pred(last);
        },
        timeout, absl::Milliseconds(250));
    return last;
  }

  static json Condition(const json& pod, const std::string& type) {
    for (const json& c : pod["status"].value("conditions", json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return json();
  }
  static json MainStatus(const json& pod) {
    const json& list = pod["status"].value("containerStatuses", json::array());
    return list.empty() ? json() : list[0];
  }

  int read_only_port_ = 0;
};

TEST_F(PodStatusTest, RunningPodHasUpstreamStatusFields) {
  StartKubelet();
  WriteManifest("run.yaml", BusyboxPod("run", kSleepForever));
  json pod = WaitForPod(
      "run", [](const json& p) { return p["status"].value("phase", "") == "Running"; },
      absl::Seconds(90));
  ASSERT_FALSE(pod.is_null()) << kubelet_->Log();
  ASSERT_EQ(pod["status"].value("phase", ""), "Running") << pod.dump(2);
  const json& st = pod["status"];
  EXPECT_EQ(st.value("qosClass", ""), "BestEffort");
  EXPECT_FALSE(st.value("podIP", "").empty()) << st.dump(2);
  EXPECT_FALSE(st.value("startTime", "").empty());
  for (const char* type : {"Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
    EXPECT_EQ(Condition(pod, type).value("status", ""), "True") << type << "\n" << st.dump(2);
  }
  // Alpha in v1.28, off by default: no PodReadyToStartContainers condition, no hostIPs.
  EXPECT_TRUE(Condition(pod, "PodReadyToStartContainers").is_null()) << st.dump(2);
  EXPECT_FALSE(st.contains("hostIPs")) << st.dump(2);
  json main = MainStatus(pod);
  EXPECT_EQ(main.value("ready", false), true);
  EXPECT_EQ(main.value("started", false), true);
  EXPECT_EQ(main.value("restartCount", -1), 0);
  EXPECT_TRUE(main.value("containerID", "").starts_with(CriRuntimeName() + "://")) << main.dump();
  EXPECT_FALSE(main.value("imageID", "").empty());
  EXPECT_FALSE(main["state"]["running"].value("startedAt", "").empty()) << main.dump();
}

TEST_F(PodStatusTest, CrashLoopBackOffWithLastState) {
  StartKubelet();
  WriteManifest("crash.yaml", BusyboxPod("crash", "\"echo boom; exit 3\""));
  json pod = WaitForPod(
      "crash",
      [](const json& p) {
        json m = MainStatus(p);
        return !m.is_null() && m["state"].contains("waiting") &&
               m["state"]["waiting"].value("reason", "") == "CrashLoopBackOff";
      },
      absl::Seconds(90));
  ASSERT_FALSE(pod.is_null()) << kubelet_->Log();
  json main = MainStatus(pod);
  ASSERT_EQ(main["state"]["waiting"].value("reason", ""), "CrashLoopBackOff") << pod.dump(2);
  EXPECT_NE(main["state"]["waiting"].value("message", "").find("back-off"), std::string::npos);
  EXPECT_GE(main.value("restartCount", 0), 1);
  EXPECT_EQ(main["lastState"]["terminated"].value("exitCode", 0), 3) << main.dump(2);
  EXPECT_EQ(main["lastState"]["terminated"].value("reason", ""), "Error");
  EXPECT_EQ(pod["status"].value("phase", ""), "Running");
  EXPECT_EQ(Condition(pod, "Ready").value("reason", ""), "ContainersNotReady");
}

TEST_F(PodStatusTest, ErrImageNeverPull) {
  StartKubelet();
  WriteManifest("never.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: never\nspec:\n"
                "  containers:\n"
                "  - name: main\n    image: example.invalid/absent:1\n"
                "    imagePullPolicy: Never\n");
  json pod = WaitForPod(
      "never",
      [](const json& p) {
        json m = MainStatus(p);
        return !m.is_null() && m["state"].contains("waiting") &&
               m["state"]["waiting"].value("reason", "") == "ErrImageNeverPull";
      },
      absl::Seconds(60));
  ASSERT_FALSE(pod.is_null()) << kubelet_->Log();
  json waiting = MainStatus(pod)["state"]["waiting"];
  EXPECT_EQ(waiting.value("reason", ""), "ErrImageNeverPull") << pod.dump(2);
  EXPECT_EQ(waiting.value("message", ""),
            "Container image \"example.invalid/absent:1\" is not present with pull policy of "
            "Never");
  EXPECT_EQ(pod["status"].value("phase", ""), "Pending");
}

TEST_F(PodStatusTest, CompletedPodSucceeds) {
  StartKubelet();
  WriteManifest("done.yaml", BusyboxPod("done", "\"echo done\"", "  restartPolicy: Never\n"));
  json pod = WaitForPod(
      "done", [](const json& p) { return p["status"].value("phase", "") == "Succeeded"; },
      absl::Seconds(90));
  ASSERT_EQ(pod["status"].value("phase", ""), "Succeeded") << pod.dump(2) << kubelet_->Log();
  json term = MainStatus(pod)["state"]["terminated"];
  EXPECT_EQ(term.value("reason", ""), "Completed") << pod.dump(2);
  EXPECT_EQ(term.value("exitCode", -1), 0);
  EXPECT_FALSE(term.value("finishedAt", "").empty());
  EXPECT_EQ(Condition(pod, "Ready").value("reason", ""), "PodCompleted");
}

// The container's own limit must be what kills it: CRI-O puts each container's monitor (conmon,
// ~4 MiB) into the pod cgroup, so with a pod limit equal to the container's the pod cgroup runs
// out first and its OOM killer may hit the monitor or runc's init instead. The init container's
// larger limit raises the pod cgroup's (max of init and the sum of app containers, as upstream).
TEST_F(PodStatusTest, OOMKilledIsReported) {
  StartKubelet();
  WriteManifest("oom.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: oom\nspec:\n"
                "  restartPolicy: Never\n"
                "  initContainers:\n"
                "  - name: headroom\n    image: docker.io/library/busybox:1.36\n"
                "    command: [\"true\"]\n"
                "    resources:\n      limits:\n        memory: 64Mi\n"
                "  containers:\n"
                "  - name: main\n    image: docker.io/library/busybox:1.36\n"
                "    command: [\"sh\", \"-c\", \"tail /dev/zero\"]\n"
                "    resources:\n      limits:\n        memory: 20Mi\n");
  json pod = WaitForPod(
      "oom", [](const json& p) { return p["status"].value("phase", "") == "Failed"; },
      absl::Seconds(120));
  ASSERT_EQ(pod["status"].value("phase", ""), "Failed") << pod.dump(2) << kubelet_->Log();
  json term = MainStatus(pod)["state"]["terminated"];
  EXPECT_EQ(term.value("reason", ""), "OOMKilled") << pod.dump(2);
  EXPECT_EQ(term.value("exitCode", 0), 137);
  EXPECT_EQ(pod["status"].value("qosClass", ""), "Burstable");
}

TEST_F(PodStatusTest, PodThatCannotFitIsRejectedWithReason) {
  StartKubelet();
  // Static pods are critical: a pod asking for more CPU than the node has is not admitted, after
  // the preemption attempt finds nothing to preempt (upstream UnexpectedAdmissionError).
  WriteManifest("huge.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: huge\nspec:\n"
                "  containers:\n"
                "  - name: main\n    image: docker.io/library/busybox:1.36\n"
                "    resources:\n      requests:\n        cpu: \"1000\"\n");
  WriteManifest("small.yaml", BusyboxPod("small", kSleepForever));
  json pod = WaitForPod(
      "huge", [](const json& p) { return p["status"].value("phase", "") == "Failed"; },
      absl::Seconds(60));
  ASSERT_EQ(pod["status"].value("phase", ""), "Failed") << pod.dump(2) << kubelet_->Log();
  EXPECT_EQ(pod["status"].value("reason", ""), "UnexpectedAdmissionError");
  EXPECT_NE(pod["status"].value("message", "").find("(res: cpu, q: "), std::string::npos)
      << pod.dump(2);
  EXPECT_NE(kubelet_->Log().find("\"Pod admission denied\""), std::string::npos);
  // Nothing of it was created, and the other pod runs.
  EXPECT_TRUE(Sandboxes("huge").empty());
  json small = WaitForPod(
      "small", [](const json& p) { return p["status"].value("phase", "") == "Running"; },
      absl::Seconds(60));
  EXPECT_EQ(small["status"].value("phase", ""), "Running");
}

TEST_F(PodStatusTest, ReadinessProbeFlipsReady) {
  StartKubelet();
  // Ready while /tmp/ready exists: created after a moment, removed later.
  WriteManifest("ready.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ready\nspec:\n"
                "  terminationGracePeriodSeconds: 2\n"
                "  containers:\n"
                "  - name: main\n    image: docker.io/library/busybox:1.36\n"
                "    command: [\"sh\", \"-c\", \"sleep 3; touch /tmp/ready; sleep 8; "
                "rm /tmp/ready; sleep 3600\"]\n"
                "    readinessProbe:\n"
                "      exec:\n        command: [\"cat\", \"/tmp/ready\"]\n"
                "      periodSeconds: 1\n      failureThreshold: 1\n");
  auto ready_is = [&](const std::string& want) {
    return [want](const json& p) {
      return p["status"].value("phase", "") == "Running" &&
             Condition(p, "Ready").value("status", "") == want;
    };
  };
  json pod = WaitForPod("ready", ready_is("False"), absl::Seconds(60));
  ASSERT_EQ(Condition(pod, "Ready").value("status", ""), "False") << pod.dump(2);
  EXPECT_EQ(Condition(pod, "Ready").value("message", ""), "containers with unready status: [main]");
  pod = WaitForPod("ready", ready_is("True"), absl::Seconds(60));
  ASSERT_EQ(Condition(pod, "Ready").value("status", ""), "True") << pod.dump(2) << kubelet_->Log();
  EXPECT_TRUE(MainStatus(pod).value("ready", false));
  pod = WaitForPod("ready", ready_is("False"), absl::Seconds(60));
  ASSERT_EQ(Condition(pod, "Ready").value("status", ""), "False") << pod.dump(2);
  EXPECT_FALSE(MainStatus(pod).value("ready", true));
  // Not ready is not a restart.
  EXPECT_EQ(MainStatus(pod).value("restartCount", -1), 0);
}

}  // namespace
}  // namespace kubelet::e2e
