#include "config/config_flags.h"

#include <string>
#include <vector>

#include "config/flagset.h"
#include "config/kubelet_configuration.h"
#include "config/kubelet_configuration_fields.h"
#include "config/kubelet_flags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

class ConfigFlagsTest : public ::testing::Test {
 protected:
  ConfigFlagsTest() : fs_("kubelet"), config_(DefaultKubeletConfiguration()) {
    AddKubeletFlags(fs_, &flags_);
    AddKubeletConfigFlags(fs_, &config_);
  }

  FlagSet fs_;
  KubeletFlags flags_;
  KubeletConfiguration config_;
};

TEST_F(ConfigFlagsTest, DefaultsComeFromTheConfiguration) {
  ASSERT_NE(fs_.Lookup("sync-frequency"), nullptr);
  EXPECT_EQ(fs_.Lookup("sync-frequency")->default_value, "1m0s");
  EXPECT_EQ(fs_.Lookup("port")->default_value, "10250");
  EXPECT_EQ(fs_.Lookup("read-only-port")->default_value, "10255");
  EXPECT_EQ(fs_.Lookup("address")->default_value, "0.0.0.0");
  EXPECT_EQ(fs_.Lookup("address")->type_name, "ip");
  EXPECT_EQ(fs_.Lookup("healthz-bind-address")->default_value, "127.0.0.1");
  EXPECT_EQ(fs_.Lookup("max-pods")->default_value, "110");
  EXPECT_EQ(fs_.Lookup("authorization-mode")->default_value, "AlwaysAllow");
  EXPECT_EQ(fs_.Lookup("v")->shorthand, "v");
  EXPECT_EQ(fs_.Lookup("v")->type_name, "Level");
  EXPECT_EQ(fs_.Lookup("logging-format")->default_value, "text");
  EXPECT_EQ(fs_.Lookup("log-flush-frequency")->default_value, "5s");
  EXPECT_EQ(fs_.Lookup("eviction-hard")->type_name, "mapStringString");
  EXPECT_THAT(fs_.Lookup("eviction-hard")->default_value, HasSubstr("memory.available<100Mi"));
  EXPECT_THAT(fs_.Lookup("feature-gates")->usage,
              HasSubstr("Options are:\nAPIListChunking=true|false (BETA - default=true)\n"));
}

TEST_F(ConfigFlagsTest, DeprecationAndVisibility) {
  for (const char* name : {"max-pods", "feature-gates", "logging-format", "eviction-hard",
                           "register-with-taints", "reserved-memory", "address", "cluster-dns"}) {
    ASSERT_NE(fs_.Lookup(name), nullptr) << name;
    EXPECT_EQ(fs_.Lookup(name)->deprecated, kConfigFlagDeprecation) << name;
  }
  for (const char* name : {"v", "vmodule", "log-flush-frequency", "provider-id"}) {
    EXPECT_EQ(fs_.Lookup(name)->deprecated, "") << name;
  }
  EXPECT_TRUE(fs_.Lookup("iptables-masquerade-bit")->hidden);
  EXPECT_TRUE(fs_.Lookup("iptables-drop-bit")->hidden);
  std::string usages = fs_.Usages();
  EXPECT_THAT(usages, Not(HasSubstr("--iptables-drop-bit")));
  EXPECT_THAT(usages, HasSubstr("--max-pods"));

  ASSERT_TRUE(fs_.Parse({"--max-pods=50", "-v=3", "--provider-id=aws:///i-1"}).ok());
  EXPECT_THAT(fs_.Warnings(),
              ElementsAre("Flag --max-pods has been deprecated, This parameter should be set via "
                          "the config file specified by the Kubelet's --config flag. See "
                          "https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-"
                          "file/ for more information."));
}

TEST_F(ConfigFlagsTest, ParsesScalarFlags) {
  absl::Status st =
      fs_.Parse({"--address=10.1.2.3",
                 "--port=10260",
                 "--read-only-port=0",
                 "--sync-frequency=30s",
                 "--pod-manifest-path=/etc/kubernetes/manifests",
                 "--cgroup-driver=systemd",
                 "--container-runtime-endpoint=unix:///run/containerd/containerd.sock",
                 "--image-gc-high-threshold=90",
                 "--image-gc-low-threshold=70",
                 "--fail-swap-on=false",
                 "--anonymous-auth=false",
                 "--authentication-token-webhook",
                 "--authorization-mode=Webhook",
                 "--client-ca-file=/pki/ca.crt",
                 "--cluster-dns=10.96.0.10,10.96.0.11",
                 "--cluster-domain=cluster.local",
                 "--resolv-conf=/run/systemd/resolve/resolv.conf",
                 "--oom-score-adj=-500",
                 "--max-open-files=4096",
                 "--pod-max-pids=4096",
                 "--serialize-image-pulls=false",
                 "--reserved-cpus=0-1",
                 "--tls-min-version=VersionTLS12",
                 "--v",
                 "4",
                 "--logging-format=json",
                 "--node-status-update-frequency=4s",
                 "--healthz-port=0",
                 "--runonce",
                 "--rotate-server-certificates",
                 "--provider-id=gce://p/z/n",
                 "--cpu-cfs-quota-period=50ms",
                 "--log-json-info-buffer-size=2Ki"});
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(config_.address, "10.1.2.3");
  EXPECT_EQ(config_.port, 10260);
  EXPECT_EQ(config_.read_only_port, 0);
  EXPECT_EQ(config_.sync_frequency, absl::Seconds(30));
  EXPECT_EQ(config_.static_pod_path, "/etc/kubernetes/manifests");
  EXPECT_EQ(config_.cgroup_driver, "systemd");
  EXPECT_EQ(config_.image_gc_high_threshold_percent, 90);
  EXPECT_EQ(config_.image_gc_low_threshold_percent, 70);
  EXPECT_FALSE(config_.fail_swap_on);
  EXPECT_FALSE(config_.authentication.anonymous.enabled);
  EXPECT_TRUE(config_.authentication.webhook.enabled);
  EXPECT_EQ(config_.authorization.mode, "Webhook");
  EXPECT_EQ(config_.authentication.x509.client_ca_file, "/pki/ca.crt");
  EXPECT_THAT(config_.cluster_dns, ElementsAre("10.96.0.10", "10.96.0.11"));
  EXPECT_EQ(config_.oom_score_adj, -500);
  EXPECT_EQ(config_.max_open_files, 4096);
  EXPECT_EQ(config_.pod_pids_limit, 4096);
  EXPECT_FALSE(config_.serialize_image_pulls);
  EXPECT_EQ(config_.reserved_system_cpus, "0-1");
  EXPECT_EQ(config_.logging.verbosity, 4u);
  EXPECT_EQ(config_.logging.format, "json");
  EXPECT_EQ(config_.node_status_update_frequency, absl::Seconds(4));
  EXPECT_EQ(config_.healthz_port, 0);
  EXPECT_TRUE(config_.run_once);
  EXPECT_TRUE(config_.server_tls_bootstrap);
  EXPECT_EQ(config_.provider_id, "gce://p/z/n");
  EXPECT_EQ(config_.cpu_cfs_quota_period, absl::Milliseconds(50));
  EXPECT_EQ(config_.logging.options.json.info_buffer_size.Value(), 2048);
}

TEST_F(ConfigFlagsTest, ParsesMapFlags) {
  absl::Status st =
      fs_.Parse({"--eviction-hard=memory.available<200Mi, nodefs.available<5%",
                 "--eviction-soft=memory.available<300Mi",
                 "--eviction-soft-grace-period=memory.available=1m30s",
                 "--eviction-minimum-reclaim=imagefs.available=2Gi",
                 "--system-reserved=cpu=200m,memory=500Mi", "--kube-reserved", "cpu=100m",
                 "--kube-reserved=memory=1Gi", "--qos-reserved=memory=50%",
                 "--cpu-manager-policy-options=full-pcpus-only=true",
                 "--cpu-manager-policy-options=distribute-cpus-across-numa=true",
                 "--topology-manager-policy-options=prefer-closest-numa-nodes=true",
                 "--manifest-url-header=a:hello,b:again", "--manifest-url-header=b:beautiful",
                 "--enforce-node-allocatable=pods,kube-reserved", "--vmodule=foo=2,bar*=3"});
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_THAT(config_.eviction_hard, UnorderedElementsAre(Pair("memory.available", "200Mi"),
                                                          Pair("nodefs.available", "5%")));
  EXPECT_THAT(config_.eviction_soft, ElementsAre(Pair("memory.available", "300Mi")));
  EXPECT_THAT(config_.eviction_soft_grace_period, ElementsAre(Pair("memory.available", "1m30s")));
  EXPECT_THAT(config_.eviction_minimum_reclaim, ElementsAre(Pair("imagefs.available", "2Gi")));
  EXPECT_THAT(config_.system_reserved,
              UnorderedElementsAre(Pair("cpu", "200m"), Pair("memory", "500Mi")));
  EXPECT_THAT(config_.kube_reserved,
              UnorderedElementsAre(Pair("cpu", "100m"), Pair("memory", "1Gi")));
  EXPECT_THAT(config_.qos_reserved, ElementsAre(Pair("memory", "50%")));
  EXPECT_THAT(config_.cpu_manager_policy_options,
              UnorderedElementsAre(Pair("full-pcpus-only", "true"),
                                   Pair("distribute-cpus-across-numa", "true")));
  EXPECT_THAT(config_.topology_manager_policy_options,
              ElementsAre(Pair("prefer-closest-numa-nodes", "true")));
  ASSERT_EQ(config_.static_pod_url_header.size(), 2u);
  EXPECT_THAT(config_.static_pod_url_header.at("a"), ElementsAre("hello"));
  EXPECT_THAT(config_.static_pod_url_header.at("b"), ElementsAre("again", "beautiful"));
  EXPECT_THAT(config_.enforce_node_allocatable, ElementsAre("pods", "kube-reserved"));
  ASSERT_EQ(config_.logging.vmodule.size(), 2u);
  EXPECT_EQ(config_.logging.vmodule[1].file_pattern, "bar*");
  EXPECT_EQ(config_.logging.vmodule[1].verbosity, 3u);
}

TEST_F(ConfigFlagsTest, TaintsAndReservedMemory) {
  absl::Status st = fs_.Parse({"--register-with-taints=dedicated=infra:NoSchedule,gpu:NoExecute",
                               "--reserved-memory=0:memory=1Gi,hugepages-2Mi=64Mi;1:memory=2Gi",
                               "--reserved-memory", "2:memory=512Mi"});
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(config_.register_with_taints.size(), 2u);
  EXPECT_EQ(config_.register_with_taints[0].key, "dedicated");
  EXPECT_EQ(config_.register_with_taints[0].value, "infra");
  EXPECT_EQ(config_.register_with_taints[0].effect, "NoSchedule");
  EXPECT_EQ(config_.register_with_taints[1].key, "gpu");
  EXPECT_EQ(config_.register_with_taints[1].value, "");
  EXPECT_EQ(config_.register_with_taints[1].effect, "NoExecute");
  ASSERT_EQ(config_.reserved_memory.size(), 3u);
  EXPECT_EQ(config_.reserved_memory[0].numa_node, 0);
  EXPECT_EQ(config_.reserved_memory[0].limits.at("memory").Value(), int64_t{1} << 30);
  EXPECT_EQ(config_.reserved_memory[0].limits.at("hugepages-2Mi").Value(), 64 << 20);
  EXPECT_EQ(config_.reserved_memory[2].numa_node, 2);
}

TEST(ParseTaintsTest, Errors) {
  EXPECT_EQ(ParseRegisterWithTaints("a=b:Foo").status().message(),
            "invalid taint effect: Foo, unsupported taint effect");
  // Without an effect the whole spec is the key, so the key check fails first.
  EXPECT_THAT(std::string(ParseRegisterWithTaints("a=b").status().message()),
              HasSubstr("invalid taint spec: a=b, name part must consist of"));
  EXPECT_EQ(ParseRegisterWithTaints("a").status().message(), "invalid taint spec: a");
  EXPECT_EQ(ParseRegisterWithTaints("a=b=c:NoSchedule").status().message(),
            "invalid taint spec: a=b=c:NoSchedule");
  EXPECT_EQ(ParseRegisterWithTaints("a:b:c").status().message(), "invalid taint spec: a:b:c");
  EXPECT_EQ(ParseRegisterWithTaints("a:NoSchedule,a=x:NoSchedule").status().message(),
            "duplicated taints with the same key and effect: {a x NoSchedule <nil>}");
  EXPECT_THAT(std::string(ParseRegisterWithTaints("-bad:NoSchedule").status().message()),
              HasSubstr("invalid taint spec: -bad:NoSchedule, name part must consist of"));
  // Removals are accepted and dropped.
  auto t = ParseRegisterWithTaints("a:NoSchedule,b:NoExecute-");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->size(), 1u);
}

TEST(ParseReservedMemoryTest, Errors) {
  EXPECT_EQ(ParseReservedMemory("memory=1Gi").status().message(),
            "the reserved memory has incorrect format, expected "
            "numaNodeID:type=quantity[,type=quantity...], got memory=1Gi");
  EXPECT_EQ(ParseReservedMemory("x:memory=1Gi").status().message(),
            "failed to convert the NUMA node ID, exptected integer, got x");
  EXPECT_EQ(ParseReservedMemory("0:memory").status().message(),
            "the reserved limit has incorrect value, expected type=quantatity, got memory");
  EXPECT_EQ(ParseReservedMemory("0:cpu=1").status().message(),
            "memory type conversion error, unknown type: \"cpu\"");
  EXPECT_EQ(ParseReservedMemory("0:memory=lots").status().message(),
            "failed to parse the quantatity, expected quantatity, got lots");
}

TEST_F(ConfigFlagsTest, ValueErrorsNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    const char* want;
  } cases[] = {
      {{"--eviction-hard=memory.available=1Gi"},
       "invalid argument \"memory.available=1Gi\" for \"--eviction-hard\" flag: malformed pair, "
       "expect string<string"},
      {{"--system-reserved=cpu"},
       "invalid argument \"cpu\" for \"--system-reserved\" flag: malformed pair, expect "
       "string=string"},
      {{"--address=1.2.3"},
       "invalid argument \"1.2.3\" for \"--address\" flag: \"1.2.3\" is not a valid IP address"},
      {{"--feature-gates=NodeSwap"},
       "invalid argument \"NodeSwap\" for \"--feature-gates\" flag: malformed pair, expect "
       "string=bool"},
      {{"--feature-gates=NodeSwap=maybe"},
       "invalid argument \"NodeSwap=maybe\" for \"--feature-gates\" flag: invalid value of "
       "NodeSwap: maybe, err: strconv.ParseBool: parsing \"maybe\": invalid syntax"},
      {{"--v=x"},
       "invalid argument \"x\" for \"-v, --v\" flag: strconv.ParseUint: parsing \"x\": invalid "
       "syntax"},
      {{"--vmodule=foo"},
       "invalid argument \"foo\" for \"--vmodule\" flag: \"foo\" does not have the pattern=N "
       "format"},
      {{"--manifest-url-header=nocolon"},
       "invalid argument \"nocolon\" for \"--manifest-url-header\" flag: malformed pair, expect "
       "string:string"},
      {{"--register-with-taints=k=v:Bad"},
       "invalid argument \"k=v:Bad\" for \"--register-with-taints\" flag: invalid taint effect: "
       "Bad, unsupported taint effect"},
  };
  for (const Case& c : cases) {
    FlagSet fs("kubelet");
    KubeletConfiguration cfg = DefaultKubeletConfiguration();
    AddKubeletConfigFlags(fs, &cfg);
    absl::Status st = fs.Parse(c.args);
    EXPECT_EQ(st.message(), c.want) << c.args[0];
  }
  FlagSet fs("kubelet");
  KubeletConfiguration cfg = DefaultKubeletConfiguration();
  AddKubeletConfigFlags(fs, &cfg);
  EXPECT_THAT(std::string(fs.Parse({"--log-json-info-buffer-size=lots"}).message()),
              HasSubstr("for \"--log-json-info-buffer-size\" flag: "));
}

// The lead's flow: parse, load the file into the same object, replay the command line.
TEST_F(ConfigFlagsTest, CommandLineWinsOverFileAndFeatureGatesMerge) {
  ASSERT_TRUE(fs_.Parse({"--max-pods=50", "--feature-gates=NodeSwap=true,MemoryQoS=false",
                         "--eviction-hard=memory.available<1Gi", "--feature-gates",
                         "SidecarContainers=true"})
                  .ok());
  EXPECT_THAT(config_.feature_gates,
              UnorderedElementsAre(Pair("NodeSwap", true), Pair("MemoryQoS", false),
                                   Pair("SidecarContainers", true)));

  KubeletConfiguration from_file = DefaultKubeletConfiguration();
  from_file.max_pods = 200;
  from_file.port = 11250;
  from_file.feature_gates = {{"MemoryQoS", true}, {"KubeletTracing", false}};
  from_file.eviction_hard = {{"nodefs.available", "5%"}, {"memory.available", "500Mi"}};
  config_ = from_file;
  ASSERT_TRUE(fs_.Apply().ok());

  EXPECT_EQ(config_.max_pods, 50);  // flag wins
  EXPECT_EQ(config_.port, 11250);   // file value kept
  EXPECT_THAT(config_.feature_gates,
              UnorderedElementsAre(Pair("NodeSwap", true), Pair("MemoryQoS", false),
                                   Pair("SidecarContainers", true), Pair("KubeletTracing", false)));
  // Map flags replace the file's map, as upstream's re-parse does.
  EXPECT_THAT(config_.eviction_hard, ElementsAre(Pair("memory.available", "1Gi")));
}

TEST(ConfigFieldForFlagTest, Maps) {
  KubeletConfiguration c;
  FlagSet fs("kubelet");
  AddKubeletConfigFlags(fs, &c);
  auto ConfigFieldForFlag = [&](std::string_view name) {
    return config::ConfigFieldForFlag(fs, c, name);
  };
  EXPECT_EQ(ConfigFieldForFlag("sync-frequency"), "syncFrequency");
  EXPECT_EQ(ConfigFieldForFlag("anonymous-auth"), "authentication.anonymous.enabled");
  EXPECT_EQ(ConfigFieldForFlag("v"), "logging.verbosity");
  EXPECT_EQ(ConfigFieldForFlag("reserved_cpus"), "reservedSystemCPUs");
  EXPECT_EQ(ConfigFieldForFlag("root-dir"), "");
  // A struct and its first member share an address: the innermost field is named.
  EXPECT_EQ(ConfigFieldForFlag("client-ca-file"), "authentication.x509.clientCAFile");
  EXPECT_EQ(ConfigFieldForFlag("log-flush-frequency"), "logging.flushFrequency");
  EXPECT_EQ(ConfigFieldForFlag("log-json-info-buffer-size"), "logging.options.json.infoBufferSize");
  EXPECT_EQ(ConfigFieldForFlag("enable-server"), "enableServer");
}

// The field a flag stands for is found from the member it writes, so every configuration flag
// has one without a hand-kept table.
TEST(ConfigFieldForFlagTest, EveryConfigurationFlagHasItsField) {
  KubeletConfiguration c;
  FlagSet fs("kubelet");
  AddKubeletConfigFlags(fs, &c);
  size_t n = 0;
  for (const Flag* f : fs.Flags()) {
    EXPECT_NE(ConfigFieldForFlag(fs, c, f->name), "") << f->name;
    ++n;
  }
  EXPECT_EQ(n, 106u);
  EXPECT_EQ(ConfigFieldPathAt(c, &c.authentication.webhook.cache_ttl),
            "authentication.webhook.cacheTTL");
  EXPECT_EQ(ConfigFieldPathAt(c, &n), "");
}

}  // namespace
}  // namespace kubelet::config
