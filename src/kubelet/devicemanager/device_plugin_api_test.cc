#include "kubelet/devicemanager/device_plugin_api.h"

#include <string>

#include "gtest/gtest.h"
#include "kubelet/devicemanager/proto/deviceplugin.pb.h"

namespace kubelet::devicemanager {
namespace {

// The bytes a Go plugin or kubelet puts on the wire for these messages (field numbers and
// types are the public API's; a mismatch would break every real plugin).
TEST(DevicePluginProtoTest, WireFormatMatchesThePublicApi) {
  v1beta1::RegisterRequest r;
  r.set_version(kVersion);
  r.set_endpoint("p.sock");
  r.set_resource_name("example.com/resource");
  r.mutable_options()->set_get_preferred_allocation_available(true);
  EXPECT_EQ(r.SerializeAsString(), std::string("\x0a\x07v1beta1"
                                               "\x12\x06p.sock"
                                               "\x1a\x14"
                                               "example.com/resource"
                                               "\x22\x02\x10\x01",
                                               43));

  v1beta1::ContainerAllocateResponse a;
  a.add_cdi_devices()->set_name("v.com/gpu=0");
  auto* m = a.add_mounts();
  m->set_host_path("/tmp/Dev-1");
  m->set_read_only(true);
  EXPECT_EQ(a.SerializeAsString(), std::string("\x12\x0e\x12\x0a/tmp/Dev-1\x18\x01"
                                               "\x2a\x0d\x0a\x0bv.com/gpu=0",
                                               31));

  v1beta1::Device d;
  d.set_id("Dev-1");
  d.set_health(kHealthy);
  d.mutable_topology()->add_nodes()->set_id(1);
  EXPECT_EQ(d.SerializeAsString(), std::string("\x0a\x05"
                                               "Dev-1"
                                               "\x12\x07"
                                               "Healthy"
                                               "\x1a\x04\x0a\x02\x08\x01",
                                               22));
}

TEST(DevicePluginApiTest, OnlyHealthyIsHealthyAndPaths) {
  EXPECT_TRUE(IsHealthy("Healthy"));
  EXPECT_FALSE(IsHealthy("Unhealthy"));
  EXPECT_FALSE(IsHealthy("healthy"));
  EXPECT_FALSE(IsHealthy(""));
  EXPECT_EQ(DevicePluginDir("/var/lib/kubelet"), "/var/lib/kubelet/device-plugins");
}

}  // namespace
}  // namespace kubelet::devicemanager
