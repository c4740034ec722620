#include "kubelet/podresources/pod_resources_api.h"

#include <string>

#include "gtest/gtest.h"
#include "kubelet/podresources/proto/podresources.pb.h"

namespace kubelet::podresources {
namespace {

// The bytes a Go client reads for these messages (field numbers and types are the public
// API's; a mismatch would break every monitoring agent that reads the socket).
TEST(PodResourcesProtoTest, WireFormatMatchesThePublicApi) {
  v1::ContainerResources c;
  c.set_name("app");
  auto* d = c.add_devices();
  d->set_resource_name("x/y");
  d->add_device_ids("D1");
  d->mutable_topology()->add_nodes()->set_id(1);
  c.add_cpu_ids(1);
  c.add_cpu_ids(3);
  auto* m = c.add_memory();
  m->set_memory_type("memory");
  m->set_size(1024);
  EXPECT_EQ(c.SerializeAsString(),
            std::string("\x0a\x03"
                        "app"
                        // devices: resource_name, device_ids, topology {nodes {ID: 1}}
                        "\x12\x0f\x0a\x03x/y\x12\x02"
                        "D1"
                        "\x1a\x04\x0a\x02\x08\x01"
                        // cpu_ids, packed
                        "\x1a\x02\x01\x03"
                        // memory: memory_type, size
                        "\x22\x0b\x0a\x06memory\x10\x80\x08",
                        39));

  v1::GetPodResourcesRequest g;
  g.set_pod_name("p");
  g.set_pod_namespace("ns");
  EXPECT_EQ(g.SerializeAsString(), std::string("\x0a\x01p\x12\x02ns", 7));
}

TEST(PodResourcesApiTest, SocketBelowTheRootDir) {
  EXPECT_EQ(SocketPath("/var/lib/kubelet"), "/var/lib/kubelet/pod-resources/kubelet.sock");
}

}  // namespace
}  // namespace kubelet::podresources
