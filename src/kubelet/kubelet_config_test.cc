#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kubelet/kubelet.h"

namespace kubelet {
namespace {

api::Pod SysctlPod(const std::string& name, const std::string& value) {
  api::Pod p;
  p.metadata.name = "s";
  p.metadata.namespace_ = "default";
  p.spec.security_context.emplace();
  p.spec.security_context->sysctls.push_back({name, value});
  return p;
}

TEST(KubeletOptionsFromConfig, MapsPodSourcesAndLoopPeriods) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.static_pod_path = "/etc/kubernetes/manifests";
  c.file_check_frequency = absl::Seconds(7);
  c.static_pod_url = "http://example.com/pods";
  c.static_pod_url_header = {{"X-Token", {"a", "b"}}};
  c.http_check_frequency = absl::Seconds(9);
  c.sync_frequency = absl::Seconds(30);
  absl::StatusOr<KubeletOptions> ko = KubeletOptionsFromConfig(c, "6.1.0");
  ASSERT_TRUE(ko.ok()) << ko.status();
  EXPECT_EQ(ko->static_pod_path, "/etc/kubernetes/manifests");
  EXPECT_EQ(ko->file_check_frequency, absl::Seconds(7));
  EXPECT_EQ(ko->static_pod_url, "http://example.com/pods");
  EXPECT_EQ(ko->static_pod_url_header.at("X-Token"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ko->http_check_frequency, absl::Seconds(9));
  EXPECT_EQ(ko->sync_frequency, absl::Seconds(30));
  // Left to the wiring.
  EXPECT_TRUE(ko->node_name.empty());
  EXPECT_EQ(ko->recorder, nullptr);
}

TEST(KubeletOptionsFromConfig, AllocatableIsTheMachineLessBothReservations) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  c.max_pods = 42;
  c.system_reserved = {{"cpu", "250m"}, {"memory", "1Mi"}};
  c.kube_reserved = {{"cpu", "1"}, {"memory", "2Mi"}, {"ephemeral-storage", "1Gi"}};
  absl::StatusOr<KubeletOptions> ko = KubeletOptionsFromConfig(c, "6.1.0");
  ASSERT_TRUE(ko.ok()) << ko.status();
  const NodeAllocatable machine = MachineAllocatable(0, 0, 0);
  EXPECT_EQ(ko->allocatable.pods, 42);
  EXPECT_EQ(ko->allocatable.milli_cpu, machine.milli_cpu - 1250);
  EXPECT_EQ(ko->allocatable.memory_bytes, machine.memory_bytes - 3 * 1024 * 1024);
}

TEST(KubeletOptionsFromConfig, UnsafeSysctlsAddToTheSafeSet) {
  config::KubeletConfiguration c = config::DefaultKubeletConfiguration();
  absl::StatusOr<KubeletOptions> ko = KubeletOptionsFromConfig(c, "6.1.0");
  ASSERT_TRUE(ko.ok()) << ko.status();
  EXPECT_TRUE(ko->sysctls.Admit(SysctlPod("kernel.shm_rmid_forced", "1")).admit);
  EXPECT_FALSE(ko->sysctls.Admit(SysctlPod("kernel.msgmax", "1")).admit);

  c.allowed_unsafe_sysctls = {"kernel.msg*"};
  ko = KubeletOptionsFromConfig(c, "6.1.0");
  ASSERT_TRUE(ko.ok()) << ko.status();
  EXPECT_TRUE(ko->sysctls.Admit(SysctlPod("kernel.msgmax", "1")).admit);

  c.allowed_unsafe_sysctls = {"vm.swappiness"};
  ko = KubeletOptionsFromConfig(c, "6.1.0");
  ASSERT_FALSE(ko.ok());
  EXPECT_EQ(ko.status().message(), "the sysctl \"vm.swappiness\" are not known to be namespaced");
}

}  // namespace
}  // namespace kubelet
