#include "kubelet/kubelet.h"

#include "cri/testing/fake_runtime.h"
#include "gtest/gtest.h"
#include "kubelet/container/testing/fake_container_runtime.h"
#include "kubelet/testing/kubelet_test_util.h"

namespace kubelet {
namespace {

using testing::Eventually;
using testing::RuntimeStatus;

TEST(Kubelet, TracksRuntimeConditions) {
  cri::FakeRuntime fake;
  fake.SetRuntimeStatus(RuntimeStatus(true, false));
  container::FakeContainerRuntime runtime;
  RealClock clock;
  Kubelet k(KubeletOptions{.node_name = "n1",
                           .root_dir = ::testing::TempDir() + "/kubelet-root",
                           .runtime_status_period = absl::Milliseconds(10)},
            fake, runtime, clock);
  ASSERT_TRUE(k.Start().ok());
  ASSERT_TRUE(Eventually([&] { return k.RuntimeReady(); }));
  EXPECT_FALSE(k.NetworkReady());
  fake.SetRuntimeStatus(RuntimeStatus(true, true));
  EXPECT_TRUE(Eventually([&] { return k.NetworkReady(); }));
  fake.SetPersistentError("Status", absl::UnavailableError("runtime down"));
  EXPECT_TRUE(Eventually([&] { return !k.RuntimeReady(); }));
  k.Stop();
  EXPECT_GE(fake.CallCount("Status"), 3);
}

// An orphan (a pod the runtime runs that no source wants) is stopped once: after its kill the
// PLEG holds the state read after it, and housekeeping does not stop it again from the relist
// that still listed it running (a second Killing event).
TEST(Kubelet, OrphanIsStoppedOnce) {
  cri::FakeRuntime fake;
  container::FakeContainerRuntime runtime;
  const container::Pod orphan =
      testing::RuntimePod("orphan-uid", "gone", "c1", container::State::kRunning);
  runtime.SetPods({orphan});
  // What the runtime answers for the pod once it is stopped.
  runtime.SetStatus(orphan.id, testing::RuntimePodStatus(orphan, container::State::kExited));
  RealClock clock;
  // One relist, at start-up: every housekeeping round after the kill sees that listing.
  Kubelet k(KubeletOptions{.node_name = "n1",
                           .root_dir = ::testing::TempDir() + "/kubelet-orphan-root",
                           .housekeeping_period = absl::Milliseconds(10),
                           .pleg_relist_period = absl::Hours(1)},
            fake, runtime, clock);
  ASSERT_TRUE(k.Start().ok());
  auto kills = [&runtime] {
    int n = 0;
    for (const std::string& call : runtime.Calls()) n += call == "KillPod:orphan-uid";
    return n;
  };
  ASSERT_TRUE(Eventually([&] { return kills() >= 1; }));
  // Twenty housekeeping periods and more.
  absl::SleepFor(absl::Milliseconds(300));
  k.Stop();
  EXPECT_EQ(kills(), 1);
}

}  // namespace
}  // namespace kubelet
