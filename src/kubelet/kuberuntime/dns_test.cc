#include "kubelet/kuberuntime/dns.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/kuberuntime/sandbox_config.h"
#include "kubelet/kuberuntime/test_util.h"

namespace kubelet::kuberuntime {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakeContainer;
using testing::MakePod;

class DnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    resolv_ = dir_.path() + "/resolv.conf";
    std::ofstream(resolv_) << "# comment\nnameserver 8.8.8.8\nnameserver 1.1.1.1\n"
                              "search corp.example. .\noptions ndots:2 timeout:1\n";
    settings_.cluster_dns = {"10.96.0.10"};
    settings_.cluster_domain = "cluster.local";
    settings_.resolv_conf = resolv_;
    settings_.node_ips = {"192.168.1.10"};
  }

  std::vector<std::string> V(const google::protobuf::RepeatedPtrField<std::string>& f) {
    return {f.begin(), f.end()};
  }

  testing::TempDir dir_;
  std::string resolv_;
  DnsSettings settings_;
};

TEST_F(DnsTest, ParseResolvConf) {
  absl::StatusOr<ResolvConf> rc = ParseResolvConf(
      "nameserver 1.2.3.4\nsearch a b\nsearch c.\noptions ndots:1\noptions ndots:3 edns0\n");
  ASSERT_TRUE(rc.ok());
  EXPECT_THAT(rc->nameservers, ElementsAre("1.2.3.4"));
  EXPECT_THAT(rc->searches, ElementsAre("c"));
  EXPECT_THAT(rc->options, ElementsAre("ndots:3", "edns0"));
  EXPECT_FALSE(ParseResolvConf("nameserver\n").ok());
}

TEST_F(DnsTest, ClusterFirst) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {}, "ns1");
  absl::StatusOr<runtime::v1::DNSConfig> dns = GetPodDNS(pod, settings_);
  ASSERT_TRUE(dns.ok()) << dns.status();
  EXPECT_THAT(V(dns->servers()), ElementsAre("10.96.0.10"));
  EXPECT_THAT(V(dns->searches()), ElementsAre("ns1.svc.cluster.local", "svc.cluster.local",
                                              "cluster.local", "corp.example"));
  EXPECT_THAT(V(dns->options()), ElementsAre("ndots:5"));
}

TEST_F(DnsTest, ClusterFirstWithoutClusterDNSFallsBackToDefault) {
  settings_.cluster_dns.clear();
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {}, "ns1");
  absl::StatusOr<runtime::v1::DNSConfig> dns = GetPodDNS(pod, settings_);
  ASSERT_TRUE(dns.ok());
  EXPECT_THAT(V(dns->servers()), ElementsAre("8.8.8.8", "1.1.1.1"));
  EXPECT_THAT(V(dns->searches()), ElementsAre("corp.example"));
  EXPECT_THAT(V(dns->options()), ElementsAre("ndots:2", "timeout:1"));
}

TEST_F(DnsTest, HostNetworkClusterFirstUsesHost) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {}, "ns1");
  pod.spec.host_network = true;
  absl::StatusOr<runtime::v1::DNSConfig> dns = GetPodDNS(pod, settings_);
  ASSERT_TRUE(dns.ok());
  EXPECT_THAT(V(dns->servers()), ElementsAre("8.8.8.8", "1.1.1.1"));
  pod.spec.dns_policy = api::kDNSClusterFirstWithHostNet;
  dns = GetPodDNS(pod, settings_);
  EXPECT_THAT(V(dns->servers()), ElementsAre("10.96.0.10"));
}

TEST_F(DnsTest, DefaultWithoutResolvConf) {
  settings_.resolv_conf = "";
  settings_.node_ips = {"192.168.1.10", "fd00::1"};
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {}, "ns1");
  pod.spec.dns_policy = api::kDNSDefault;
  absl::StatusOr<runtime::v1::DNSConfig> dns = GetPodDNS(pod, settings_);
  ASSERT_TRUE(dns.ok());
  EXPECT_THAT(V(dns->servers()), ElementsAre("127.0.0.1", "::1"));
  EXPECT_THAT(V(dns->searches()), ElementsAre("."));
}

TEST_F(DnsTest, NoneUsesDnsConfigOnly) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {}, "ns1");
  pod.spec.dns_policy = api::kDNSNone;
  api::PodDNSConfig cfg;
  cfg.nameservers = {"9.9.9.9", "9.9.9.9"};
  cfg.searches = {"x.example"};
  cfg.options = {api::PodDNSConfigOption{"ndots", std::string("1")},
                 api::PodDNSConfigOption{"edns0", std::nullopt}};
  pod.spec.dns_config = cfg;
  absl::StatusOr<runtime::v1::DNSConfig> dns = GetPodDNS(pod, settings_);
  ASSERT_TRUE(dns.ok());
  EXPECT_THAT(V(dns->servers()), ElementsAre("9.9.9.9"));
  EXPECT_THAT(V(dns->searches()), ElementsAre("x.example"));
  EXPECT_THAT(V(dns->options()), ElementsAre("edns0", "ndots:1"));
}

TEST_F(DnsTest, DnsConfigMergesAndLimits) {
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {}, "ns1");
  api::PodDNSConfig cfg;
  cfg.nameservers = {"1.1.1.1", "2.2.2.2", "3.3.3.3"};
  cfg.options = {api::PodDNSConfigOption{"ndots", std::string("2")}};
  pod.spec.dns_config = cfg;
  absl::StatusOr<runtime::v1::DNSConfig> dns = GetPodDNS(pod, settings_);
  ASSERT_TRUE(dns.ok());
  EXPECT_THAT(V(dns->servers()), ElementsAre("10.96.0.10", "1.1.1.1", "2.2.2.2"));
  EXPECT_THAT(V(dns->options()), ElementsAre("ndots:2"));
}

TEST_F(DnsTest, MissingResolvConfFails) {
  settings_.resolv_conf = dir_.path() + "/nope";
  api::Pod pod = MakePod("p", {MakeContainer("a")}, {}, "ns1");
  EXPECT_FALSE(GetPodDNS(pod, settings_).ok());
}

TEST_F(DnsTest, Hostname) {
  api::Pod pod = MakePod("web-0", {MakeContainer("a")}, {}, "ns1");
  absl::StatusOr<PodHostname> hn = GeneratePodHostNameAndDomain(pod, "cluster.local");
  ASSERT_TRUE(hn.ok());
  EXPECT_EQ(hn->hostname, "web-0");
  EXPECT_EQ(hn->domain, "");
  pod.spec.hostname = "h";
  pod.spec.subdomain = "sub";
  hn = GeneratePodHostNameAndDomain(pod, "cluster.local");
  EXPECT_EQ(hn->hostname, "h");
  EXPECT_EQ(hn->domain, "sub.ns1.svc.cluster.local");
  EXPECT_EQ(*GetNodenameForKernel(hn->hostname, hn->domain, true), "h.sub.ns1.svc.cluster.local");
  EXPECT_EQ(*GetNodenameForKernel(hn->hostname, hn->domain, std::nullopt), "h");
  pod.spec.hostname = "Bad_Name";
  EXPECT_FALSE(GeneratePodHostNameAndDomain(pod, "cluster.local").ok());
  // Long names are truncated to 63 characters without a trailing '-'.
  api::Pod longpod = MakePod(std::string(62, 'a') + "-bbb", {MakeContainer("a")});
  hn = GeneratePodHostNameAndDomain(longpod, "cluster.local");
  ASSERT_TRUE(hn.ok());
  EXPECT_EQ(hn->hostname, std::string(62, 'a'));
}

TEST_F(DnsTest, SandboxConfig) {
  api::Container c = MakeContainer("a");
  api::ContainerPort p1;
  p1.container_port = 80;
  p1.host_port = 8080;
  p1.protocol = "TCP";
  api::ContainerPort p2 = p1;  // duplicate
  api::ContainerPort p3;
  p3.name = "dns";
  p3.container_port = 53;
  p3.protocol = "UDP";
  c.ports = {p1, p2, p3};
  api::Pod pod = MakePod("web", {c}, {}, "ns1", "u1");
  pod.metadata.labels = {{"app", "web"}};
  pod.spec.security_context->sysctls = {api::Sysctl{"net/ipv4/ip_unprivileged_port_start", "0"}};
  pod.spec.security_context->run_as_group = 5;
  SandboxSettings s;
  s.pod_logs_dir = "/var/log/pods";
  s.cgroup_parent = "/kubepods/poduid";
  s.dns = settings_;
  absl::StatusOr<runtime::v1::PodSandboxConfig> cfg = GeneratePodSandboxConfig(pod, 2, s);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->metadata().name(), "web");
  EXPECT_EQ(cfg->metadata().namespace_(), "ns1");
  EXPECT_EQ(cfg->metadata().uid(), "u1");
  EXPECT_EQ(cfg->metadata().attempt(), 2u);
  EXPECT_EQ(cfg->hostname(), "web");
  EXPECT_EQ(cfg->log_directory(), "/var/log/pods/ns1_web_u1");
  ASSERT_EQ(cfg->port_mappings_size(), 2);
  EXPECT_EQ(cfg->port_mappings(0).host_port(), 8080);
  EXPECT_EQ(cfg->port_mappings(1).protocol(), runtime::v1::UDP);
  EXPECT_EQ(cfg->labels().at("app"), "web");
  EXPECT_EQ(cfg->labels().at("io.kubernetes.pod.uid"), "u1");
  EXPECT_EQ(cfg->linux().cgroup_parent(), "/kubepods/poduid");
  EXPECT_EQ(cfg->linux().sysctls().at("net.ipv4.ip_unprivileged_port_start"), "0");
  const runtime::v1::LinuxSandboxSecurityContext& sc = cfg->linux().security_context();
  EXPECT_EQ(sc.namespace_options().network(), runtime::v1::POD);
  EXPECT_EQ(sc.namespace_options().pid(), runtime::v1::CONTAINER);
  EXPECT_EQ(sc.namespace_options().ipc(), runtime::v1::POD);
  EXPECT_EQ(sc.run_as_group().value(), 5);
  EXPECT_FALSE(sc.has_run_as_user());
  EXPECT_FALSE(sc.privileged());
  EXPECT_EQ(sc.seccomp().profile_type(), runtime::v1::SecurityProfile::RuntimeDefault);
  EXPECT_EQ(cfg->linux().resources().cpu_shares(), 2);
  EXPECT_THAT(V(cfg->dns_config().servers()), ElementsAre("10.96.0.10"));

  pod.spec.host_network = true;
  pod.spec.host_pid = true;
  pod.spec.host_ipc = true;
  cfg = GeneratePodSandboxConfig(pod, 0, s);
  ASSERT_TRUE(cfg.ok());
  EXPECT_EQ(cfg->hostname(), "");
  EXPECT_EQ(cfg->linux().security_context().namespace_options().network(), runtime::v1::NODE);
  EXPECT_EQ(cfg->linux().security_context().namespace_options().pid(), runtime::v1::NODE);
  EXPECT_EQ(cfg->linux().security_context().namespace_options().ipc(), runtime::v1::NODE);
  EXPECT_THAT(V(cfg->dns_config().servers()), ElementsAre("8.8.8.8", "1.1.1.1"));
}

}  // namespace
}  // namespace kubelet::kuberuntime
