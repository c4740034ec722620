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

}  // namespace
}  // namespace kubelet
