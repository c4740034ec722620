#include "kubelet/podresources/server.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <filesystem>

#include "cri/grpc_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/podresources/proto/podresources.grpc.pb.h"

namespace kubelet::podresources {
namespace {

using ::testing::ElementsAre;

TEST(TokenBucketTest, BurstThenRate) {
  absl::Time now = absl::FromUnixSeconds(1000);
  TokenBucket b(100, 10, [&] { return now; });
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(b.Allow()) << i;
  EXPECT_FALSE(b.Allow());
  now += absl::Milliseconds(10);  // one token at 100/s
  EXPECT_TRUE(b.Allow());
  EXPECT_FALSE(b.Allow());
  now += absl::Seconds(10);  // never more than the burst
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(b.Allow());
  EXPECT_FALSE(b.Allow());
}

class PodResourcesServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/podres-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    auto pod = std::make_shared<api::Pod>();
    pod->metadata.name = "gpu";
    pod->metadata.namespace_ = "ml";
    pod->metadata.uid = "u1";
    pod->spec.containers.resize(2);
    pod->spec.containers[0].name = "train";
    pod->spec.containers[1].name = "log";
    pod->spec.init_containers.resize(1);
    pod->spec.init_containers[0].name = "setup";
    pods_.push_back(pod);
    providers_.pods = [this] { return pods_; };
    providers_.devices = [](const std::string& uid, const std::string& c) {
      std::vector<DeviceInstance> out;
      if (uid == "u1" && c == "train") {
        out.push_back({"example.com/gpu", "g0", {0}});
        out.push_back({"example.com/nic", "n1", {}});
      }
      return out;
    };
    providers_.allocatable_devices = [] {
      return std::vector<DeviceInstance>{{"example.com/gpu", "g0", {0}},
                                         {"example.com/gpu", "g1", {0, 1}}};
    };
    providers_.update_allocated_devices = [this] { ++updates_; };
    providers_.cpus = [](const std::string&, const std::string& c) {
      return c == "train" ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{};
    };
    providers_.allocatable_cpus = [] { return std::vector<int64_t>{1, 2, 3}; };
    providers_.memory = [](const std::string&, const std::string& c) {
      return c == "train" ? std::vector<MemoryBlock>{{"memory", 1 << 30, {0}}}
                          : std::vector<MemoryBlock>{};
    };
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Start(bool get_enabled, int burst = 10) {
    ServerOptions o;
    o.socket_path = dir_ + "/pod-resources/kubelet.sock";
    o.get_enabled = get_enabled;
    o.burst = burst;
    o.qps = 0.001;
    server_ = std::make_unique<PodResourcesServer>(o, providers_);
    ASSERT_TRUE(server_->Start().ok());
    stub_ = v1::PodResourcesLister::NewStub(cri::DialUnixSocket(o.socket_path));
  }

  std::string dir_;
  std::vector<api::PodPtr> pods_;
  Providers providers_;
  int updates_ = 0;
  std::unique_ptr<PodResourcesServer> server_;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub_;
};

TEST_F(PodResourcesServerTest, ListShowsEachAppContainersResources) {
  Start(false);
  grpc::ClientContext ctx;
  v1::ListPodResourcesResponse resp;
  ASSERT_TRUE(stub_->List(&ctx, v1::ListPodResourcesRequest(), &resp).ok());
  ASSERT_EQ(resp.pod_resources_size(), 1);
  const v1::PodResources& p = resp.pod_resources(0);
  EXPECT_EQ(p.name(), "gpu");
  EXPECT_EQ(p.namespace_(), "ml");
  ASSERT_EQ(p.containers_size(), 2);  // init containers are not listed (v1.28)
  const v1::ContainerResources& c = p.containers(0);
  EXPECT_EQ(c.name(), "train");
  ASSERT_EQ(c.devices_size(), 2);
  EXPECT_EQ(c.devices(0).resource_name(), "example.com/gpu");
  EXPECT_THAT(c.devices(0).device_ids(), ElementsAre("g0"));
  ASSERT_EQ(c.devices(0).topology().nodes_size(), 1);
  EXPECT_EQ(c.devices(0).topology().nodes(0).id(), 0);
  EXPECT_FALSE(c.devices(1).has_topology());
  EXPECT_THAT(c.cpu_ids(), ElementsAre(2, 3));
  ASSERT_EQ(c.memory_size(), 1);
  EXPECT_EQ(c.memory(0).memory_type(), "memory");
  EXPECT_EQ(c.memory(0).size(), 1u << 30);
  EXPECT_EQ(p.containers(1).devices_size(), 0);
  EXPECT_EQ(updates_, 1);
}

TEST_F(PodResourcesServerTest, AllocatableSplitsDevicesPerNumaNode) {
  Start(false);
  grpc::ClientContext ctx;
  v1::AllocatableResourcesResponse resp;
  ASSERT_TRUE(stub_->GetAllocatableResources(&ctx, v1::AllocatableResourcesRequest(), &resp).ok());
  ASSERT_EQ(resp.devices_size(), 3);
  EXPECT_EQ(resp.devices(1).device_ids(0), "g1");
  EXPECT_EQ(resp.devices(1).topology().nodes(0).id(), 0);
  EXPECT_EQ(resp.devices(2).topology().nodes(0).id(), 1);
  EXPECT_THAT(resp.cpu_ids(), ElementsAre(1, 2, 3));
  EXPECT_EQ(resp.memory_size(), 0);
}

TEST_F(PodResourcesServerTest, GetNeedsItsGateAndAKnownPod) {
  Start(false);
  {
    grpc::ClientContext ctx;
    v1::GetPodResourcesRequest req;
    req.set_pod_name("gpu");
    req.set_pod_namespace("ml");
    v1::GetPodResourcesResponse resp;
    grpc::Status s = stub_->Get(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNKNOWN);
    EXPECT_EQ(s.error_message(), "PodResources API Get method disabled");
  }
  server_.reset();
  Start(true);
  {
    grpc::ClientContext ctx;
    v1::GetPodResourcesRequest req;
    req.set_pod_name("gpu");
    req.set_pod_namespace("ml");
    v1::GetPodResourcesResponse resp;
    ASSERT_TRUE(stub_->Get(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.pod_resources().containers(0).name(), "train");
    EXPECT_THAT(resp.pod_resources().containers(0).cpu_ids(), ElementsAre(2, 3));
  }
  {
    grpc::ClientContext ctx;
    v1::GetPodResourcesRequest req;
    req.set_pod_name("gpu");
    req.set_pod_namespace("other");
    v1::GetPodResourcesResponse resp;
    grpc::Status s = stub_->Get(&ctx, req, &resp);
    EXPECT_EQ(s.error_message(), "pod gpu in namespace other not found");
  }
}

TEST_F(PodResourcesServerTest, CallsBeyondTheBurstAreRejected) {
  Start(false, /*burst=*/3);
  int ok = 0, limited = 0;
  for (int i = 0; i < 5; ++i) {
    grpc::ClientContext ctx;
    v1::ListPodResourcesResponse resp;
    grpc::Status s = stub_->List(&ctx, v1::ListPodResourcesRequest(), &resp);
    if (s.ok()) ++ok;
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++limited;
      EXPECT_EQ(s.error_message(), "rejected by rate limit");
    }
  }
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(limited, 2);
}

}  // namespace
}  // namespace kubelet::podresources
