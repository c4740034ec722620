#include "kubelet/admission.h"

#include <gtest/gtest.h>

#include "api/static_pod.h"

namespace kubelet {
namespace {

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

TEST(AdmissionTest, NonCriticalPodOutOfCpuWithUpstreamMessage) {
  NodeAllocatable a{2000, 1 << 30, 110};
  api::Pod p = MakePod("p", "2500m", "", false);
  AdmitResult r = AdmitPod(p, {}, a);
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "OutOfcpu");
  EXPECT_EQ(r.message,
            "Node didn't have enough resource: cpu, requested: 2500, used: 0, capacity: 2000");
}

TEST(AdmissionTest, StaticPodThatCannotFitFailsAfterPreemptionAttempt) {
  NodeAllocatable a{2000, 1 << 30, 110};
  api::Pod running = MakePod("a", "1500m", "", true);
  api::Pod p = MakePod("b", "1000m", "", true);
  EXPECT_TRUE(api::IsCriticalPod(p));
  AdmitResult r = AdmitPod(p, {running}, a);
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "UnexpectedAdmissionError");
  EXPECT_EQ(r.message,
            "Unexpected error while attempting to recover from admission failure: preemption: "
            "error finding a set of pods to preempt: no set of running pods found to reclaim "
            "resources: [(res: cpu, q: 500), ]");
}

TEST(AdmissionTest, PodCountLimit) {
  NodeAllocatable a{2000, 1 << 30, 1};
  AdmitResult r = AdmitPod(MakePod("b", "", "", false), {MakePod("a", "", "", false)}, a);
  EXPECT_EQ(r.reason, "OutOfpods");
  r = AdmitPod(MakePod("b", "", "", true), {MakePod("a", "", "", true)}, a);
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
  AdmitResult r = AdmitPod(y, {x}, a);
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "NodePorts");
  EXPECT_EQ(r.message, "Predicate NodePorts failed");
  // Another protocol or another specific host IP does not conflict.
  y.spec.containers[0].ports[0].protocol = "UDP";
  EXPECT_TRUE(AdmitPod(y, {x}, a).admit);
  y.spec.containers[0].ports[0].protocol = "TCP";
  y.spec.containers[0].ports[0].host_ip = "127.0.0.1";
  x.spec.containers[0].ports[0].host_ip = "10.0.0.1";
  EXPECT_TRUE(AdmitPod(y, {x}, a).admit);
  x.spec.containers[0].ports[0].host_ip = "";
  EXPECT_FALSE(AdmitPod(y, {x}, a).admit);
}

}  // namespace
}  // namespace kubelet
