// Conformance behaviours on the real control plane, as a user meets them through kubectl:
//   - `kubectl debug -it <pod> --image=busybox --target=main`: the ephemeral container starts in
//     the target's process namespace, kubectl attaches and its output comes back, its status is
//     reported as upstream's (state, containerID, image, imageID, restartCount 0, ready false,
//     no `started`), `kubectl logs -c` reads it, and it is never restarted;
//   - a completed init container is ready (RestartAlways and RestartNever pods), a failed one
//     is not;
//   - `kubectl patch` shortening activeDeadlineSeconds of a running pod ends it Failed /
//     DeadlineExceeded with upstream's message, its containers killed, a Normal
//     DeadlineExceeded event, and no DisruptionTarget condition; a static pod's deadline ends it
//     the same way, and its mirror pod shows it.
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"
#include "test/e2e/e2e_env.h"

namespace kubelet::e2e {
namespace {

constexpr char kDeadlineMessage[] = "Pod was active on the node longer than the specified deadline";

class ConformanceTest : public ApiModeTest {
 protected:
  ConformanceTest() { precreate_node_ = true; }

  std::string PodSpec() const {
    return absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  }
  // Waits for the pod's status to satisfy `pred`; the last pod read is in *pod.
  bool WaitPod(const std::string& name, json* pod, const std::function<bool(const json&)>& pred,
               absl::Duration timeout = absl::Seconds(90)) {
    return WaitUntil(
        [&] {
          *pod = GetPod(name);
          return pod->is_object() && pred(*pod);
        },
        timeout, absl::Milliseconds(500));
  }
  static std::string Phase(const json& pod) {
    return pod.contains("status") ? pod["status"].value("phase", "") : "";
  }
  // The status of container `name` in status.<list>; null when absent.
  static json ContainerStatus(const json& pod, const std::string& list, const std::string& name) {
    if (!pod.contains("status")) return json();
    for (const json& cs : pod["status"].value(list, json::array())) {
      if (cs.value("name", "") == name) return cs;
    }
    return json();
  }
  // Events of the pod with `reason`.
  json Events(const std::string& pod, const std::string& reason) {
    json list = GetJson({"get", "events", "-n", "default", "--field-selector",
                         absl::StrCat("involvedObject.name=", pod, ",reason=", reason)});
    return list.is_object() ? list.value("items", json::array()) : json::array();
  }
  // kubectl given a terminal by script(1).
  absl::StatusOr<CommandResult> KubectlWithTerminal(const std::string& args) {
    const std::string cmd = absl::StrCat("stty cols 300; ", cp_->kubectl(), " --kubeconfig ",
                                         cp_->admin_kubeconfig(), " ", args);
    return RunCommand({"script", "-qec", cmd, "/dev/null"}, {}, absl::Seconds(120));
  }
};

TEST_F(ConformanceTest, KubectlDebugAttachesToAnEphemeralContainer) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  absl::Status ready = WaitNodeReady(absl::Seconds(90));
  ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();
  const std::string name = PodName("debugged");
  PodParts parts;
  parts.spec = PodSpec();
  // $0 names the main process, so that `ps` in the debugger can find it.
  ASSERT_TRUE(Apply(BusyboxPod(name,
                               "\"trap 'exit 0' TERM; while true; do sleep 1; done\", "
                               "\"conformance-main-loop\"",
                               parts))
                  .ok());
  json pod;
  ASSERT_TRUE(WaitPod(
      name, &pod, [](const json& p) { return Phase(p) == "Running"; }, absl::Seconds(120)))
      << pod.dump(2) << kubelet_->Log();

  // The API server reaches the node by name (an /etc/hosts line), which may take a moment.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = cp_->Kubectl({"logs", name, "-n", "default"});
        return r.ok() && r->exit_code == 0;
      },
      absl::Seconds(60), absl::Seconds(2)));
  // kubectl waits for the ephemeral container's status to show it running, then attaches (a
  // wide terminal: busybox ps cuts its lines to the width).
  auto debug = KubectlWithTerminal(
      absl::StrCat("debug -it ", name, " -n default --image=", BusyboxImage(),
                   " --target=main -c debugger -- sh -c 'sleep 2; echo debug-hello; ps'"));
  ASSERT_TRUE(debug.ok()) << debug.status();
  EXPECT_TRUE(absl::StrContains(debug->out, "debug-hello"))
      << debug->out << debug->err << kubelet_->Log();
  // The target's process namespace: its main loop is visible.
  EXPECT_TRUE(absl::StrContains(debug->out, "conformance-main-loop")) << debug->out;
  // Attached, not read back from the logs.
  EXPECT_FALSE(absl::StrContains(debug->out, "falling back to logs")) << debug->out;

  ASSERT_TRUE(WaitPod(name, &pod, [](const json& p) {
    json cs = ContainerStatus(p, "ephemeralContainerStatuses", "debugger");
    return cs.is_object() && cs["state"].contains("terminated");
  })) << pod.dump(2);
  json cs = ContainerStatus(pod, "ephemeralContainerStatuses", "debugger");
  EXPECT_EQ(cs["state"]["terminated"].value("reason", ""), "Completed") << cs.dump(2);
  EXPECT_EQ(cs["state"]["terminated"].value("exitCode", -1), 0);
  EXPECT_TRUE(absl::StartsWith(cs.value("containerID", ""), CriRuntimeName() + "://"))
      << cs.dump(2);
  EXPECT_FALSE(cs.value("image", "").empty());
  EXPECT_FALSE(cs.value("imageID", "").empty()) << cs.dump(2);
  EXPECT_EQ(cs.value("restartCount", -1), 0);
  EXPECT_FALSE(cs.value("ready", true));
  EXPECT_FALSE(cs.contains("started")) << cs.dump(2);
  // The pod itself is unaffected.
  EXPECT_EQ(Phase(pod), "Running");
  EXPECT_TRUE(ConditionTrue(pod, "Ready"));

  // Its logs.
  auto logs = cp_->Kubectl({"logs", name, "-n", "default", "-c", "debugger"});
  ASSERT_TRUE(logs.ok()) << logs.status();
  EXPECT_TRUE(absl::StrContains(logs->out, "debug-hello")) << logs->out << logs->err;

  // Never restarted, although the pod's policy is Always.
  absl::SleepFor(absl::Seconds(12));
  pod = GetPod(name);
  cs = ContainerStatus(pod, "ephemeralContainerStatuses", "debugger");
  EXPECT_TRUE(cs["state"].contains("terminated")) << cs.dump(2);
  EXPECT_EQ(cs.value("restartCount", -1), 0);
  EXPECT_EQ(Containers("debugged", "debugger").size(), 1u);
}

TEST_F(ConformanceTest, CompletedInitContainersAreReady) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  auto pod_with_inits = [&](const std::string& name, const std::string& policy,
                            const std::string& second_init) {
    return absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", name, "\nspec:\n",
                        PodSpec(), "  restartPolicy: ", policy,
                        "\n  terminationGracePeriodSeconds: 2\n  initContainers:\n"
                        "  - name: init-ok\n    image: ",
                        BusyboxImage(),
                        "\n    command: [\"true\"]\n  - name: second\n    image: ", BusyboxImage(),
                        "\n    command: [\"sh\", \"-c\", \"", second_init,
                        "\"]\n  containers:\n  - name: main\n    image: ", BusyboxImage(),
                        "\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; sleep 3600\"]\n");
  };
  const std::string always = PodName("init-always");
  const std::string never = PodName("init-never");
  const std::string failing = PodName("init-failing");
  ASSERT_TRUE(Apply(pod_with_inits(always, "Always", "exit 0")).ok());
  ASSERT_TRUE(Apply(pod_with_inits(never, "Never", "exit 0")).ok());
  ASSERT_TRUE(Apply(pod_with_inits(failing, "Never", "exit 3")).ok());

  for (const std::string& name : {always, never}) {
    json pod;
    ASSERT_TRUE(WaitPod(
        name, &pod,
        [](const json& p) { return Phase(p) == "Running" && ConditionTrue(p, "Ready"); },
        absl::Seconds(120)))
        << name << "\n"
        << pod.dump(2) << kubelet_->Log();
    for (const char* init : {"init-ok", "second"}) {
      json cs = ContainerStatus(pod, "initContainerStatuses", init);
      ASSERT_TRUE(cs.is_object()) << pod.dump(2);
      EXPECT_EQ(cs["state"]["terminated"].value("reason", ""), "Completed") << cs.dump(2);
      EXPECT_TRUE(cs.value("ready", false)) << name << " " << cs.dump(2);
      EXPECT_EQ(cs.value("started", true), false) << cs.dump(2);
    }
    EXPECT_TRUE(ConditionTrue(pod, "Initialized"));
  }
  json pod;
  ASSERT_TRUE(WaitPod(
      failing, &pod, [](const json& p) { return Phase(p) == "Failed"; }, absl::Seconds(120)))
      << pod.dump(2);
  EXPECT_TRUE(ContainerStatus(pod, "initContainerStatuses", "init-ok").value("ready", false));
  json second = ContainerStatus(pod, "initContainerStatuses", "second");
  EXPECT_EQ(second["state"]["terminated"].value("exitCode", 0), 3) << second.dump(2);
  EXPECT_FALSE(second.value("ready", true)) << second.dump(2);
  json initialized = Condition(pod, "Initialized");
  EXPECT_EQ(initialized.value("status", ""), "False");
  EXPECT_EQ(initialized.value("message", ""), "containers with incomplete status: [second]");
}

TEST_F(ConformanceTest, ShorterActiveDeadlineEndsARunningPod) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  const std::string name = PodName("deadline");
  PodParts parts;
  parts.spec = absl::StrCat(PodSpec(), "  activeDeadlineSeconds: 3600\n");
  parts.termination_grace_seconds = 30;
  ASSERT_TRUE(Apply(BusyboxPod(name, kSleepForever, parts)).ok());
  json pod;
  ASSERT_TRUE(WaitPod(
      name, &pod, [](const json& p) { return Phase(p) == "Running"; }, absl::Seconds(120)))
      << pod.dump(2) << kubelet_->Log();
  absl::SleepFor(absl::Seconds(3));
  ASSERT_EQ(Phase(GetPod(name)), "Running");

  // activeDeadlineSeconds may only be lowered on a running pod.
  auto patched = cp_->Kubectl(
      {"patch", "pod", name, "-n", "default", "-p", R"({"spec":{"activeDeadlineSeconds":2}})"});
  ASSERT_TRUE(patched.ok()) << patched.status();
  ASSERT_EQ(patched->exit_code, 0) << patched->err;
  ASSERT_TRUE(WaitPod(name, &pod, [](const json& p) { return Phase(p) == "Failed"; }))
      << pod.dump(2) << kubelet_->Log();
  EXPECT_EQ(pod["status"].value("reason", ""), "DeadlineExceeded");
  EXPECT_EQ(pod["status"].value("message", ""), kDeadlineMessage);
  EXPECT_TRUE(Condition(pod, "DisruptionTarget").is_null()) << pod.dump(2);
  EXPECT_EQ(Condition(pod, "Ready").value("reason", ""), "PodFailed");
  // Its container is killed.
  EXPECT_TRUE(WaitUntil([&] { return Running("deadline").empty(); }, absl::Seconds(60)));
  ASSERT_TRUE(WaitPod(name, &pod, [](const json& p) {
    json cs = ContainerStatus(p, "containerStatuses", "main");
    return cs.is_object() && cs["state"].contains("terminated");
  })) << pod.dump(2);
  json events = Events(name, "DeadlineExceeded");
  ASSERT_FALSE(events.empty()) << GetJson({"get", "events", "-n", "default"}).dump(2);
  EXPECT_EQ(events[0].value("type", ""), "Normal");
  EXPECT_EQ(events[0].value("message", ""), kDeadlineMessage);
  EXPECT_EQ(events[0]["source"].value("component", ""), "kubelet");
}

TEST_F(ConformanceTest, StaticPodPastItsDeadlineFails) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  PodParts parts;
  parts.spec = "  activeDeadlineSeconds: 5\n";
  WriteManifest("deadline.yaml", BusyboxPod("static-deadline", kSleepForever, parts));
  const std::string mirror = absl::StrCat("static-deadline-", node_);
  json pod;
  ASSERT_TRUE(WaitPod(
      mirror, &pod, [](const json& p) { return Phase(p) == "Failed"; }, absl::Seconds(120)))
      << pod.dump(2) << kubelet_->Log();
  EXPECT_EQ(pod["status"].value("reason", ""), "DeadlineExceeded");
  EXPECT_EQ(pod["status"].value("message", ""), kDeadlineMessage);
  EXPECT_TRUE(WaitUntil([&] { return Running("static-deadline").empty(); }, absl::Seconds(60)));
}

}  // namespace
}  // namespace kubelet::e2e
