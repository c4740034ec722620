#include "kubelet/kubelet.h"

#include "cri/testing/fake_runtime.h"
#include "gtest/gtest.h"
#include "kubelet/container/testing/fake_container_runtime.h"

namespace kubelet {
namespace {

runtime::v1::StatusResponse MakeStatus(bool runtime_ready, bool network_ready) {
  runtime::v1::StatusResponse resp;
  auto* rc = resp.mutable_status()->add_conditions();
  rc->set_type("RuntimeReady");
  rc->set_status(runtime_ready);
  auto* nc = resp.mutable_status()->add_conditions();
  nc->set_type("NetworkReady");
  nc->set_status(network_ready);
  nc->set_reason("NetworkPluginNotReady");
  return resp;
}

template <typename Pred>
bool WaitFor(Pred pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return false;
}

TEST(Kubelet, TracksRuntimeConditions) {
  cri::FakeRuntime fake;
  fake.SetRuntimeStatus(MakeStatus(true, false));
  container::FakeContainerRuntime runtime;
  RealClock clock;
  Kubelet k(KubeletOptions{.node_name = "n1",
                           .root_dir = ::testing::TempDir() + "/kubelet-root",
                           .runtime_status_period = absl::Milliseconds(10)},
            fake, runtime, clock);
  ASSERT_TRUE(k.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return k.RuntimeReady(); }));
  EXPECT_FALSE(k.NetworkReady());
  fake.SetRuntimeStatus(MakeStatus(true, true));
  EXPECT_TRUE(WaitFor([&] { return k.NetworkReady(); }));
  fake.SetPersistentError("Status", absl::UnavailableError("runtime down"));
  EXPECT_TRUE(WaitFor([&] { return !k.RuntimeReady(); }));
  k.Stop();
  EXPECT_GE(fake.CallCount("Status"), 3);
}

}  // namespace
}  // namespace kubelet
