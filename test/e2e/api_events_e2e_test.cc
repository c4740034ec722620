// core/v1 Events in API-server mode on the real control plane and containerd: OUR kubelet binary
// (started with --kubeconfig, the node's identity) posts its events so that `kubectl get events`
// shows them as upstream's would:
// - a pod's Pulled / Created / Started (and Killing on delete) with source kubelet/<node>,
//   reportingComponent / reportingInstance, and the container's field path;
// - the Node's Starting and NodeHas... events from registration;
// - a crash-looping container's BackOff as ONE Event whose count grows (de-duplication through
//   PATCH), not a new object per occurrence;
// - for a pod the scheduler placed, its Scheduled event beside the kubelet's.
// No timing is asserted: every wait is a generous bound on something that must happen.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"

namespace kubelet::e2e {
namespace {

class ApiEventsTest : public ApiModeTest {
 protected:
  // Frequent resyncs, so a container in back-off is looked at (and its BackOff recorded) often.
  // A cluster DNS, as clusters have: without one every sync also records MissingClusterDNS
  // (upstream's behaviour), which spends the pod's event budget (25) in a minute at this pace.
  std::string ExtraConfig() override {
    return "syncFrequency: 3s\nclusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\n";
  }

  // The Events in "default" about the object `name` (of `kind` when given).
  json Events(const std::string& name, const std::string& kind = "") {
    std::string selector = "involvedObject.name=" + name;
    if (!kind.empty()) selector += ",involvedObject.kind=" + kind;
    json list = GetJson({"get", "events", "-n", "default", "--field-selector", selector});
    return list.is_object() ? list.value("items", json::array()) : json::array();
  }
  static std::vector<json> WithReason(const json& events, const std::string& reason) {
    std::vector<json> out;
    for (const json& e : events) {
      if (e.value("reason", "") == reason) out.push_back(e);
    }
    return out;
  }
  static std::set<std::string> Reasons(const json& events) {
    std::set<std::string> out;
    for (const json& e : events) out.insert(e.value("reason", ""));
    return out;
  }
  // Waits until the events about `name` include every reason of `want`; returns the last list.
  json WaitForReasons(const std::string& name, const std::vector<std::string>& want,
                      const std::string& kind = "", absl::Duration timeout = absl::Seconds(120)) {
    json events;
    WaitUntil(
        [&] {
          events = Events(name, kind);
          std::set<std::string> got = Reasons(events);
          for (const std::string& r : want) {
            if (!got.count(r)) return false;
          }
          return true;
        },
        timeout, absl::Seconds(1));
    return events;
  }

  void CreatePod(const std::string& manifest) {
    auto r = cp_->Kubectl({"apply", "-n", "default", "-f", "-"}, manifest);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->exit_code, 0) << r->err;
  }

  // What every event the kubelet posts about a pod's container carries.
  void ExpectKubeletContainerEvent(const json& e, const std::string& pod, const std::string& uid) {
    SCOPED_TRACE(e.dump());
    EXPECT_EQ(e["source"].value("component", ""), "kubelet");
    EXPECT_EQ(e["source"].value("host", ""), node_);
    EXPECT_EQ(e.value("reportingComponent", ""), "kubelet");
    EXPECT_EQ(e.value("reportingInstance", ""), node_);
    const json& o = e["involvedObject"];
    EXPECT_EQ(o.value("kind", ""), "Pod");
    EXPECT_EQ(o.value("apiVersion", ""), "v1");
    EXPECT_EQ(o.value("namespace", ""), "default");
    EXPECT_EQ(o.value("name", ""), pod);
    EXPECT_EQ(o.value("uid", ""), uid);
    EXPECT_EQ(o.value("fieldPath", ""), "spec.containers{main}");
    EXPECT_TRUE(absl::StartsWith(e["metadata"].value("name", ""), pod + "."));
    EXPECT_GE(e.value("count", 0), 1);
    EXPECT_FALSE(e.value("firstTimestamp", "").empty());
    EXPECT_FALSE(e.value("lastTimestamp", "").empty());
  }
};

TEST_F(ApiEventsTest, PodAndNodeEvents) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();

  // The Node's events: the kubelet's start and the conditions it registered with.
  json node_events = WaitForReasons(node_,
                                    {"Starting", "NodeHasSufficientMemory", "NodeHasNoDiskPressure",
                                     "NodeHasSufficientPID", "NodeAllocatableEnforced"},
                                    "Node");
  ASSERT_EQ(Reasons(node_events).count("NodeAllocatableEnforced"), 1u)
      << node_events.dump(2) << "\n"
      << kubelet_->Log();
  for (const json& e : node_events) {
    SCOPED_TRACE(e.dump());
    EXPECT_EQ(e["metadata"].value("namespace", ""), "default");
    EXPECT_EQ(e["involvedObject"].value("uid", ""), node_);
    EXPECT_EQ(e["involvedObject"].value("namespace", ""), "");
    EXPECT_EQ(e["source"].value("component", ""), "kubelet");
    EXPECT_EQ(e["source"].value("host", ""), node_);
    EXPECT_EQ(e.value("type", ""), "Normal");
    const std::string reason = e.value("reason", "");
    if (reason == "Starting") {
      EXPECT_EQ(e.value("message", ""), "Starting kubelet.");
    } else if (reason == "NodeAllocatableEnforced") {
      EXPECT_EQ(e.value("message", ""), "Updated Node Allocatable limit across pods");
    } else if (absl::StartsWith(reason, "NodeHas") || absl::StartsWith(reason, "NodeReady") ||
               absl::StartsWith(reason, "NodeNotReady")) {
      EXPECT_EQ(e.value("message", ""), absl::StrCat("Node ", node_, " status is now: ", reason));
    }
  }

  // A pod bound to the node: its container's events.
  const std::string name = PodName("web");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  CreatePod(BusyboxPod(name, kSleepForever, parts));
  json events = WaitForReasons(name, {"Pulled", "Created", "Started"});
  ASSERT_EQ(WithReason(events, "Started").size(), 1u) << events.dump(2) << "\n" << kubelet_->Log();
  const std::string uid = GetPod(name)["metadata"].value("uid", "");
  ASSERT_FALSE(uid.empty());
  for (const char* reason : {"Pulled", "Created", "Started"}) {
    std::vector<json> got = WithReason(events, reason);
    ASSERT_EQ(got.size(), 1u) << reason << "\n" << events.dump(2);
    ExpectKubeletContainerEvent(got[0], name, uid);
    EXPECT_EQ(got[0].value("type", ""), "Normal");
  }
  EXPECT_EQ(WithReason(events, "Started")[0].value("message", ""), "Started container main");
  EXPECT_EQ(WithReason(events, "Created")[0].value("message", ""), "Created container main");

  // kubectl delete: Killing.
  auto del = cp_->Kubectl({"delete", "pod", name, "-n", "default", "--wait=false"});
  ASSERT_TRUE(del.ok()) << del.status();
  ASSERT_EQ(del->exit_code, 0) << del->err;
  events = WaitForReasons(name, {"Killing"});
  std::vector<json> killing = WithReason(events, "Killing");
  ASSERT_EQ(killing.size(), 1u) << events.dump(2) << "\n" << kubelet_->Log();
  ExpectKubeletContainerEvent(killing[0], name, uid);
  EXPECT_EQ(killing[0].value("message", ""), "Stopping container main");
  // Every write was accepted (no 4xx, no dropped event).
  const std::string log = kubelet_->Log();
  EXPECT_EQ(log.find("Server rejected event"), std::string::npos) << log;
  EXPECT_EQ(log.find("Unable to record event"), std::string::npos) << log;
}

TEST_F(ApiEventsTest, CrashLoopBackOffCounts) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  const std::string name = PodName("crasher");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  CreatePod(BusyboxPod(name, "\"exit 1\"", parts));

  json events;
  std::vector<json> backoff;
  bool grew = WaitUntil(
      [&] {
        events = Events(name);
        backoff = WithReason(events, "BackOff");
        // Several back-offs can fall in one second: wait until the aggregated event spans two.
        return !backoff.empty() && backoff[0].value("count", 0) >= 3 &&
               backoff[0].value("firstTimestamp", "") != backoff[0].value("lastTimestamp", "");
      },
      absl::Seconds(240), absl::Seconds(2));
  ASSERT_TRUE(grew) << events.dump(2) << "\n" << kubelet_->Log();
  // One object, its count grown through PATCHes; its first and last timestamps apart.
  ASSERT_EQ(backoff.size(), 1u) << events.dump(2);
  const std::string uid = GetPod(name)["metadata"].value("uid", "");
  ExpectKubeletContainerEvent(backoff[0], name, uid);
  EXPECT_EQ(backoff[0].value("type", ""), "Warning");
  EXPECT_TRUE(absl::StartsWith(backoff[0].value("message", ""),
                               "Back-off restarting failed container main in pod " + name))
      << backoff[0].dump();
  EXPECT_NE(backoff[0].value("firstTimestamp", ""), backoff[0].value("lastTimestamp", ""));
  // The restarts' Started events are de-duplicated the same way.
  std::vector<json> started = WithReason(events, "Started");
  ASSERT_EQ(started.size(), 1u) << events.dump(2);
  EXPECT_GE(started[0].value("count", 0), 2);
  EXPECT_TRUE(kubelet_->Log().find("Server rejected event") == std::string::npos)
      << kubelet_->Log();
}

TEST_F(ApiEventsTest, ScheduledPodEvents) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  // No nodeName: the scheduler places it, on this node only.
  const std::string name = PodName("scheduled");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeSelector:\n    kubernetes.io/hostname: ", node_,
                            "\n  automountServiceAccountToken: false\n");
  CreatePod(BusyboxPod(name, kSleepForever, parts));
  json events =
      WaitForReasons(name, {"Scheduled", "Pulled", "Created", "Started"}, "", absl::Seconds(180));
  std::vector<json> scheduled = WithReason(events, "Scheduled");
  ASSERT_EQ(scheduled.size(), 1u) << events.dump(2) << "\n" << kubelet_->Log();
  EXPECT_NE(scheduled[0].value("message", "").find(node_), std::string::npos)
      << scheduled[0].dump();
  EXPECT_NE(scheduled[0].value("reportingComponent", ""), "kubelet");
  const std::string uid = GetPod(name)["metadata"].value("uid", "");
  std::vector<json> started = WithReason(events, "Started");
  ASSERT_EQ(started.size(), 1u) << events.dump(2);
  ExpectKubeletContainerEvent(started[0], name, uid);
}

}  // namespace
}  // namespace kubelet::e2e
