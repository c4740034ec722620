#include "kubelet/admission.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "api/static_pod.h"

namespace kubelet {
namespace {

api::PodPtr Share(const api::Pod& p) { return std::make_shared<const api::Pod>(p); }

api::Pod MakePod(const std::string& name, const std::string& cpu, const std::string& mem,
                 bool is_static) {
  api::Pod p;
  p.metadata.name = name;
  if (is_static) p.metadata.annotations["kubernetes.io/config.source"] = "file";
  api::Container c;
  c.name = "main";
  if (!cpu.empty()) c.resources.requests["cpu"] = *api::Quantity::Parse(cpu);
  if (!mem.empty()) c.resources.requests["memory"] = *api::Quantity::Parse(mem);
  p.spec.containers.push_back(c);
  return p;
}

api::Node TestNode() {
  api::Node n;
  n.metadata.name = "node-1";
  n.metadata.labels = {{"kubernetes.io/os", "linux"},
                       {"kubernetes.io/hostname", "node-1"},
                       {"disk", "ssd"},
                       {"cores", "8"}};
  return n;
}

TEST(AdmissionTest, NonCriticalPodOutOfCpuWithUpstreamMessage) {
  NodeAllocatable a{2000, 1 << 30, 110};
  api::Pod p = MakePod("p", "2500m", "", false);
  AdmitResult r = AdmitPod(p, {}, a, TestNode());
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "OutOfcpu");
  EXPECT_EQ(r.message,
            "Node didn't have enough resource: cpu, requested: 2500, used: 0, capacity: 2000");
}

// InPlacePodVerticalScaling: an admitted pod counts the larger of its spec's requests and its
// status's allocatedResources, or only the allocation while its resize is Infeasible (the
// scheduler's node info with the gate); the pod being admitted counts its spec.
TEST(AdmissionTest, InPlaceResizeCountsAdmittedPodsAllocations) {
  NodeAllocatable a{2000, 1 << 30, 110};
  api::Pod other = MakePod("other", "500m", "", false);
  api::ContainerStatus cs;
  cs.name = "main";
  cs.allocated_resources = {{"cpu", *api::Quantity::Parse("1500m")}};
  other.status.container_statuses = {cs};
  const api::Pod want = MakePod("want", "1", "", false);
  EXPECT_TRUE(AdmitPod(want, {Share(other)}, a, TestNode()).admit);
  AdmitResult r = AdmitPod(want, {Share(other)}, a, TestNode(), true);
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.message,
            "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000");
  // An infeasible resize: only what was allocated counts.
  other.spec.containers[0].resources.requests["cpu"] = *api::Quantity::Parse("3");
  other.status.container_statuses[0].allocated_resources["cpu"] = *api::Quantity::Parse("500m");
  other.status.resize = "Infeasible";
  EXPECT_TRUE(AdmitPod(want, {Share(other)}, a, TestNode(), true).admit);
  EXPECT_FALSE(AdmitPod(want, {Share(other)}, a, TestNode(), false).admit);
}

TEST(AdmissionTest, StaticPodThatCannotFitFailsAfterPreemptionAttempt) {
  NodeAllocatable a{2000, 1 << 30, 110};
  api::Pod running = MakePod("a", "1500m", "", true);
  api::Pod p = MakePod("b", "1000m", "", true);
  EXPECT_TRUE(api::IsCriticalPod(p));
  AdmitResult r = AdmitPod(p, {Share(running)}, a, TestNode());
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "UnexpectedAdmissionError");
  EXPECT_EQ(r.message,
            "Unexpected error while attempting to recover from admission failure: preemption: "
            "error finding a set of pods to preempt: no set of running pods found to reclaim "
            "resources: [(res: cpu, q: 500), ]");
}

TEST(AdmissionTest, PodCountLimit) {
  NodeAllocatable a{2000, 1 << 30, 1};
  AdmitResult r =
      AdmitPod(MakePod("b", "", "", false), {Share(MakePod("a", "", "", false))}, a, TestNode());
  EXPECT_EQ(r.reason, "OutOfpods");
  r = AdmitPod(MakePod("b", "", "", true), {Share(MakePod("a", "", "", true))}, a, TestNode());
  EXPECT_EQ(r.reason, "UnexpectedAdmissionError");
  EXPECT_NE(r.message.find("[(res: pods, q: 1), ]"), std::string::npos) << r.message;
}

TEST(AdmissionTest, HostPortConflicts) {
  NodeAllocatable a{2000, 1 << 30, 110};
  api::Pod x = MakePod("x", "", "", true);
  api::ContainerPort port;
  port.container_port = 80;
  port.host_port = 8080;
  x.spec.containers[0].ports.push_back(port);
  api::Pod y = x;
  y.metadata.name = "y";
  AdmitResult r = AdmitPod(y, {Share(x)}, a, TestNode());
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "NodePorts");
  EXPECT_EQ(r.message, "Predicate NodePorts failed");
  // Another protocol or another specific host IP does not conflict.
  y.spec.containers[0].ports[0].protocol = "UDP";
  EXPECT_TRUE(AdmitPod(y, {Share(x)}, a, TestNode()).admit);
  y.spec.containers[0].ports[0].protocol = "TCP";
  y.spec.containers[0].ports[0].host_ip = "127.0.0.1";
  x.spec.containers[0].ports[0].host_ip = "10.0.0.1";
  EXPECT_TRUE(AdmitPod(y, {Share(x)}, a, TestNode()).admit);
  x.spec.containers[0].ports[0].host_ip = "";
  EXPECT_FALSE(AdmitPod(y, {Share(x)}, a, TestNode()).admit);
}

TEST(AdmissionTest, NodeSelectorMustMatchNodeLabels) {
  NodeAllocatable a{4000, 1 << 30, 110};
  api::Pod p = MakePod("p", "", "", false);
  p.spec.node_selector = {{"disk", "ssd"}};
  EXPECT_TRUE(AdmitPod(p, {}, a, TestNode()).admit);
  p.spec.node_selector = {{"disk", "hdd"}};
  AdmitResult r = AdmitPod(p, {}, a, TestNode());
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "NodeAffinity");
  EXPECT_EQ(r.message, "Predicate NodeAffinity failed");
  p.spec.node_selector = {{"gpu", "yes"}};
  EXPECT_EQ(AdmitPod(p, {}, a, TestNode()).reason, "NodeAffinity");
}

api::Pod WithAffinity(const std::string& terms) {
  api::Pod p = MakePod("p", "", "", false);
  p.spec.affinity = api::RawJson{
      R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)" +
      terms + "}}}"};
  return p;
}

TEST(AdmissionTest, RequiredNodeAffinityOperatorsAndTerms) {
  api::Node n = TestNode();
  auto match = [&](const std::string& terms) {
    return MatchesRequiredNodeAffinity(WithAffinity(terms), n);
  };
  EXPECT_TRUE(
      match(R"([{"matchExpressions":[{"key":"disk","operator":"In","values":["ssd","nvme"]}]}])"));
  EXPECT_FALSE(
      match(R"([{"matchExpressions":[{"key":"disk","operator":"In","values":["hdd"]}]}])"));
  EXPECT_TRUE(
      match(R"([{"matchExpressions":[{"key":"disk","operator":"NotIn","values":["hdd"]}]}])"));
  EXPECT_TRUE(match(R"([{"matchExpressions":[{"key":"gpu","operator":"NotIn","values":["x"]}]}])"));
  EXPECT_TRUE(match(R"([{"matchExpressions":[{"key":"disk","operator":"Exists"}]}])"));
  EXPECT_FALSE(match(R"([{"matchExpressions":[{"key":"disk","operator":"DoesNotExist"}]}])"));
  EXPECT_TRUE(match(R"([{"matchExpressions":[{"key":"cores","operator":"Gt","values":["4"]}]}])"));
  EXPECT_FALSE(match(R"([{"matchExpressions":[{"key":"cores","operator":"Lt","values":["4"]}]}])"));
  EXPECT_FALSE(match(R"([{"matchExpressions":[{"key":"disk","operator":"Gt","values":["4"]}]}])"));
  // Terms are ORed, requirements within a term ANDed; an empty term matches nothing.
  EXPECT_TRUE(match(R"([{"matchExpressions":[{"key":"disk","operator":"In","values":["hdd"]}]},
                        {"matchExpressions":[{"key":"disk","operator":"In","values":["ssd"]}]}])"));
  EXPECT_FALSE(match(R"([{"matchExpressions":[{"key":"disk","operator":"In","values":["ssd"]},
                                               {"key":"gpu","operator":"Exists"}]}])"));
  EXPECT_FALSE(match(R"([{}])"));
  EXPECT_FALSE(match(R"([])"));
  // matchFields: metadata.name only.
  EXPECT_TRUE(
      match(R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-1"]}]}])"));
  EXPECT_FALSE(
      match(R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-2"]}]}])"));
  EXPECT_FALSE(
      match(R"([{"matchFields":[{"key":"metadata.uid","operator":"In","values":["node-1"]}]}])"));
  // Only preferred affinity, or garbage where an object belongs.
  api::Pod preferred = MakePod("p", "", "", false);
  preferred.spec.affinity = api::RawJson{
      R"({"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[]},"podAffinity":{}})"};
  EXPECT_TRUE(MatchesRequiredNodeAffinity(preferred, n));
  api::Pod garbage = MakePod("p", "", "", false);
  garbage.spec.affinity =
      api::RawJson{R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":7}})"};
  EXPECT_FALSE(MatchesRequiredNodeAffinity(garbage, n));
  // A key or operator that is not a string (which Go would not decode) threw a type error out of
  // admission; such a requirement is invalid and matches nothing, whatever its operator.
  EXPECT_FALSE(match(R"([{"matchExpressions":[{"key":1,"operator":"DoesNotExist"}]}])"));
  EXPECT_FALSE(
      match(R"([{"matchExpressions":[{"key":"disk","operator":["In"],"values":["ssd"]}]}])"));
  EXPECT_FALSE(match(R"([{"matchFields":[{"key":{},"operator":"NotIn","values":["x"]}]}])"));
  EXPECT_FALSE(match(R"([{"matchFields":[{"key":"metadata.name","operator":2,"values":["x"]}]}])"));
  // A null member decodes as Go's empty string.
  EXPECT_TRUE(
      match(R"([{"matchExpressions":[{"key":"gpu","operator":"DoesNotExist","values":null},)"
            R"({"key":null,"operator":"DoesNotExist"}]}])"));
}

TEST(AdmissionTest, UntoleratedNoExecuteTaintRejectsApiPodsOnly) {
  NodeAllocatable a{4000, 1 << 30, 110};
  api::Node n = TestNode();
  n.spec.taints = {{.key = "dedicated", .value = "db", .effect = "NoExecute"},
                   {.key = "soft", .value = "", .effect = "NoSchedule"}};
  api::Pod p = MakePod("p", "", "", false);
  AdmitResult r = AdmitPod(p, {}, a, n);
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "TaintToleration");
  EXPECT_EQ(r.message, "Predicate TaintToleration failed");
  // NoSchedule is not the kubelet's business; tolerating the NoExecute one is enough.
  p.spec.tolerations = {{.key = "dedicated", .operator_ = "Equal", .value = "db"}};
  EXPECT_TRUE(AdmitPod(p, {}, a, n).admit);
  p.spec.tolerations = {{.key = "dedicated", .operator_ = "Equal", .value = "web"}};
  EXPECT_FALSE(AdmitPod(p, {}, a, n).admit);
  p.spec.tolerations = {{.operator_ = "Exists"}};
  EXPECT_TRUE(AdmitPod(p, {}, a, n).admit);
  p.spec.tolerations = {{.key = "dedicated", .operator_ = "Exists", .effect = "NoSchedule"}};
  EXPECT_FALSE(AdmitPod(p, {}, a, n).admit);
  // Static pods are not checked against taints.
  EXPECT_TRUE(AdmitPod(MakePod("s", "", "", true), {}, a, n).admit);
}

TEST(AdmissionTest, OperatingSystemChecksComeFirst) {
  NodeAllocatable a{1000, 1 << 30, 110};
  api::Pod p = MakePod("p", "5", "", false);  // also short of CPU
  p.metadata.labels["kubernetes.io/os"] = "windows";
  AdmitResult r = AdmitPod(p, {}, a, TestNode());
  EXPECT_EQ(r.reason, "PodOSSelectorNodeLabelDoesNotMatch");
  EXPECT_EQ(r.message,
            "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label");
  p.metadata.labels.clear();
  p.spec.os = api::PodOS{.name = "windows"};
  r = AdmitPod(p, {}, a, TestNode());
  EXPECT_EQ(r.reason, "PodOSNotSupported");
  EXPECT_EQ(r.message, "Failed to admit pod as the OS field doesn't match node OS");
}

TEST(AdmissionTest, ResourcesBeforePredicatesAndEphemeralStorage) {
  NodeAllocatable a{1000, 1 << 30, 110, 1 << 20};
  api::Pod p = MakePod("p", "2", "", false);
  p.spec.node_selector = {{"disk", "hdd"}};
  EXPECT_EQ(AdmitPod(p, {}, a, TestNode()).reason, "OutOfcpu");
  api::Pod s = MakePod("s", "", "", false);
  s.spec.containers[0].resources.requests["ephemeral-storage"] = *api::Quantity::Parse("2Mi");
  AdmitResult r = AdmitPod(s, {}, a, TestNode());
  EXPECT_EQ(r.reason, "OutOfephemeral-storage");
  EXPECT_EQ(r.message,
            "Node didn't have enough resource: ephemeral-storage, requested: 2097152, used: 0, "
            "capacity: 1048576");
}

TEST(AdmissionTest, CriticalPodFailingAPredicateIsNotPreempting) {
  NodeAllocatable a{1000, 1 << 30, 110};
  api::Pod p = MakePod("p", "2", "", true);
  p.spec.node_selector = {{"disk", "hdd"}};
  AdmitResult r = AdmitPod(p, {}, a, TestNode());
  EXPECT_EQ(r.reason, "NodeAffinity");
}

api::Pod SysctlPod(std::vector<std::pair<std::string, std::string>> sysctls) {
  api::Pod p = MakePod("s", "", "", false);
  p.spec.security_context.emplace();
  for (auto& [n, v] : sysctls) p.spec.security_context->sysctls.push_back({n, v});
  return p;
}

TEST(SysctlAllowlistTest, SafeSysctlsAdmittedUnsafeRejectedWithUpstreamMessage) {
  absl::StatusOr<SysctlAllowlist> w = SysctlAllowlist::Create("6.1.0-13-amd64", {});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(w->Admit(MakePod("none", "", "", false)).admit);
  EXPECT_TRUE(w->Admit(SysctlPod({{"net.ipv4.ip_local_port_range", "1024 65000"},
                                  {"kernel.shm_rmid_forced", "1"},
                                  {"net/ipv4/tcp_keepalive_time", "600"}}))
                  .admit);
  AdmitResult r =
      w->Admit(SysctlPod({{"kernel.shm_rmid_forced", "1"}, {"net.core.somaxconn", "1024"}}));
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "SysctlForbidden");
  EXPECT_EQ(r.message, "forbidden sysctl: \"net.core.somaxconn\" not allowlisted");
  // A slash-separated name is reported dotted.
  r = w->Admit(SysctlPod({{"kernel/msgmax", "1"}}));
  EXPECT_EQ(r.message, "forbidden sysctl: \"kernel.msgmax\" not allowlisted");
}

TEST(SysctlAllowlistTest, UnsafeNamesAndPatternsAllowedWhenConfigured) {
  absl::StatusOr<SysctlAllowlist> w =
      SysctlAllowlist::Create("6.1.0", {"net.core.somaxconn", "kernel.msg*", "fs/mqueue/*"});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(w->Admit(SysctlPod({{"net.core.somaxconn", "1024"}})).admit);
  EXPECT_TRUE(w->Admit(SysctlPod({{"kernel.msgmax", "8192"}, {"kernel/msgmnb", "1"}})).admit);
  EXPECT_TRUE(w->Admit(SysctlPod({{"fs.mqueue.msg_max", "20"}})).admit);
  EXPECT_FALSE(w->Admit(SysctlPod({{"kernel.sem", "1 2 3 4"}})).admit);
}

TEST(SysctlAllowlistTest, HostNamespacesForbidTheirSysctls) {
  absl::StatusOr<SysctlAllowlist> w = SysctlAllowlist::Create("6.1.0", {"kernel.shm*"});
  ASSERT_TRUE(w.ok());
  api::Pod p = SysctlPod({{"net.ipv4.tcp_syncookies", "1"}});
  p.spec.host_network = true;
  AdmitResult r = w->Admit(p);
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "SysctlForbidden");
  EXPECT_EQ(r.message,
            "forbidden sysctl: \"net.ipv4.tcp_syncookies\" not allowed with host net enabled");
  p = SysctlPod({{"kernel.shmmax", "1"}});
  p.spec.host_ipc = true;
  EXPECT_EQ(w->Admit(p).message,
            "forbidden sysctl: \"kernel.shmmax\" not allowed with host ipc enabled");
  p.spec.host_ipc = false;
  EXPECT_TRUE(w->Admit(p).admit);
}

TEST(SysctlAllowlistTest, BadPatternsFailWithUpstreamMessages) {
  absl::StatusOr<SysctlAllowlist> w = SysctlAllowlist::Create("6.1.0", {"vm.swappiness"});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), "the sysctl \"vm.swappiness\" are not known to be namespaced");
  w = SysctlAllowlist::Create("6.1.0", {"vm.*"});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), "the sysctls \"vm.*\" are not known to be namespaced");
  w = SysctlAllowlist::Create("6.1.0", {"Net.core"});
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(absl::StartsWith(
      w.status().message(), "sysctl \"Net.core\" must have at most 253 characters and match regex"))
      << w.status();
  EXPECT_FALSE(SysctlAllowlist::Create("6.1.0", {"net.*.x"}).ok());
}

TEST(SysctlAllowlistTest, SafeSetFollowsTheKernelVersion) {
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  std::vector<std::string> old = SysctlAllowlist::SafeSysctls("3.10.0-1160.el7.x86_64");
  EXPECT_TRUE(has(old, "net.ipv4.tcp_syncookies"));
  EXPECT_FALSE(has(old, "net.ipv4.ip_local_reserved_ports"));
  EXPECT_FALSE(has(old, "net.ipv4.tcp_keepalive_time"));
  std::vector<std::string> mid = SysctlAllowlist::SafeSysctls("4.4.0");
  EXPECT_TRUE(has(mid, "net.ipv4.ip_local_reserved_ports"));
  EXPECT_FALSE(has(mid, "net.ipv4.tcp_keepalive_time"));
  std::vector<std::string> now = SysctlAllowlist::SafeSysctls("6.1.0-13-amd64");
  EXPECT_EQ(now.size(), 7u);
  EXPECT_EQ(SysctlAllowlist::SafeSysctls("unknown").size(), 5u);
  // The default-constructed list holds the whole safe set.
  EXPECT_TRUE(SysctlAllowlist().Admit(SysctlPod({{"net.ipv4.tcp_keepalive_time", "60"}})).admit);
}

}  // namespace
}  // namespace kubelet
