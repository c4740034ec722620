#include "config/kubelet_flags.h"

#include <string>
#include <vector>

#include "config/flagset.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(KubeletFlagsTest, Defaults) {
  KubeletFlags f;
  EXPECT_EQ(f.root_directory, "/var/lib/kubelet");
  EXPECT_EQ(f.cert_directory, "/var/lib/kubelet/pki");
  EXPECT_EQ(f.pod_sandbox_image, "registry.k8s.io/pause:3.9");
  EXPECT_EQ(f.max_container_count, -1);
  EXPECT_EQ(f.max_per_pod_container_count, 1);
  EXPECT_EQ(f.minimum_gc_age, absl::ZeroDuration());
  EXPECT_TRUE(f.register_schedulable);
  EXPECT_TRUE(ValidateKubeletFlags(f).ok());
}

TEST(KubeletFlagsTest, ParsesFlags) {
  FlagSet fs2("kubelet");
  KubeletFlags g;
  AddKubeletFlags(fs2, &g);
  absl::Status st = fs2.Parse(
      {"--kubeconfig=/etc/kubernetes/kubelet.conf", "--bootstrap-kubeconfig",
       "/etc/kubernetes/bootstrap.conf", "--config=/var/lib/kubelet/config.yaml",
       "--hostname-override=n1", "--node-ip=10.0.0.1,fd00::1", "--root-dir=/data/kubelet",
       "--cert-dir=/pki", "--node-labels=a=b,role", "--node-labels", "c=d", "--seccomp-default",
       "--lock-file=/run/lock/kubelet.lock", "--exit-on-lock-contention",
       "--image-credential-provider-config=/etc/cp.yaml",
       "--image-credential-provider-bin-dir=/opt/cp", "--runtime-cgroups=/system.slice/crio"});
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(g.kube_config, "/etc/kubernetes/kubelet.conf");
  EXPECT_EQ(g.bootstrap_kubeconfig, "/etc/kubernetes/bootstrap.conf");
  EXPECT_EQ(g.kubelet_config_file, "/var/lib/kubelet/config.yaml");
  EXPECT_EQ(g.hostname_override, "n1");
  EXPECT_EQ(g.node_ip, "10.0.0.1,fd00::1");
  EXPECT_EQ(g.root_directory, "/data/kubelet");
  EXPECT_EQ(g.cert_directory, "/pki");
  EXPECT_EQ(g.node_labels.size(), 3u);
  EXPECT_EQ(g.node_labels.at("a"), "b");
  EXPECT_EQ(g.node_labels.at("role"), "");
  EXPECT_EQ(g.node_labels.at("c"), "d");
  EXPECT_TRUE(g.seccomp_default);
  EXPECT_EQ(g.lock_file_path, "/run/lock/kubelet.lock");
  EXPECT_TRUE(g.exit_on_lock_contention);
  EXPECT_EQ(g.image_credential_provider_config_file, "/etc/cp.yaml");
  EXPECT_EQ(g.image_credential_provider_bin_dir, "/opt/cp");
  EXPECT_EQ(g.runtime_cgroups, "/system.slice/crio");
  EXPECT_TRUE(fs2.Warnings().empty());
  // Replaying (as after loading --config) keeps map flags stable.
  ASSERT_TRUE(fs2.Apply().ok());
  EXPECT_EQ(g.node_labels.size(), 3u);
}

TEST(KubeletFlagsTest, DeprecatedFlagsWarnAndApply) {
  FlagSet fs("kubelet");
  KubeletFlags f;
  AddKubeletFlags(fs, &f);
  absl::Status st =
      fs.Parse({"--pod-infra-container-image=registry.k8s.io/pause:3.8",
                "--minimum-container-ttl-duration=1m", "--maximum-dead-containers=10",
                "--maximum-dead-containers-per-container=2", "--register-schedulable=false",
                "--keep-terminated-pod-volumes", "--cloud-provider=external",
                "--cloud-config=/etc/cloud.conf", "--experimental-mounter-path=/bin/mount",
                "--experimental-allocatable-ignore-eviction=true"});
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(f.pod_sandbox_image, "registry.k8s.io/pause:3.8");
  EXPECT_EQ(f.minimum_gc_age, absl::Minutes(1));
  EXPECT_EQ(f.max_container_count, 10);
  EXPECT_EQ(f.max_per_pod_container_count, 2);
  EXPECT_FALSE(f.register_schedulable);
  EXPECT_TRUE(f.keep_terminated_pod_volumes);
  EXPECT_EQ(f.cloud_provider, "external");
  EXPECT_EQ(f.cloud_config_file, "/etc/cloud.conf");
  EXPECT_EQ(f.experimental_mounter_path, "/bin/mount");
  EXPECT_TRUE(f.experimental_node_allocatable_ignore_eviction_threshold);
  ASSERT_EQ(fs.Warnings().size(), 10u);
  EXPECT_EQ(fs.Warnings()[0],
            "Flag --pod-infra-container-image has been deprecated, will be removed in a future "
            "release. Image garbage collector will get sandbox image information from CRI.");
  EXPECT_EQ(fs.Warnings()[1],
            "Flag --minimum-container-ttl-duration has been deprecated, Use --eviction-hard or "
            "--eviction-soft instead. Will be removed in a future version.");
  EXPECT_EQ(fs.Warnings()[6],
            "Flag --cloud-provider has been deprecated, will be removed in 1.25 or later, in favor "
            "of removing cloud provider code from Kubelet.");
  // Deprecated KubeletFlags stay visible in --help.
  EXPECT_THAT(fs.Usages(), HasSubstr("--register-schedulable"));
  EXPECT_THAT(fs.Usages(), HasSubstr("--pod-infra-container-image"));
}

TEST(KubeletFlagsTest, RemovedFlagsAcceptedAndHidden) {
  FlagSet fs("kubelet");
  KubeletFlags f;
  AddKubeletFlags(fs, &f);
  absl::Status st =
      fs.Parse({"--container-runtime=remote", "--network-plugin=cni", "--cni-bin-dir=/opt/cni/bin",
                "--cni-conf-dir=/etc/cni/net.d", "--cni-cache-dir=/var/lib/cni/cache",
                "--network-plugin-mtu=1460", "--docker-endpoint=unix:///var/run/docker.sock",
                "--image-pull-progress-deadline=2m",
                "--experimental-dockershim-root-directory=/var/lib/dockershim",
                "--non-masquerade-cidr=10.0.0.0/8", "--dynamic-config-dir=/x",
                "--master-service-namespace=default",
                "--experimental-check-node-capabilities-before-mount"});
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(fs.Warnings().size(), 13u);
  EXPECT_THAT(fs.Warnings()[0], HasSubstr("Flag --container-runtime has been deprecated, "));
  EXPECT_THAT(fs.Warnings()[1], HasSubstr("Flag --network-plugin has been deprecated, "));
  std::string usages = fs.Usages();
  EXPECT_THAT(usages, Not(HasSubstr("--network-plugin")));
  EXPECT_THAT(usages, Not(HasSubstr("--container-runtime ")));
  EXPECT_THAT(usages, Not(HasSubstr("--docker-endpoint")));
  EXPECT_TRUE(ValidateKubeletFlags(f).ok());
}

TEST(KubeletFlagsTest, RemovedFlagsStillTypeChecked) {
  FlagSet fs("kubelet");
  KubeletFlags f;
  AddKubeletFlags(fs, &f);
  EXPECT_FALSE(fs.Parse({"--network-plugin-mtu=abc"}).ok());
  EXPECT_FALSE(fs.Parse({"--image-pull-progress-deadline=soon"}).ok());
}

TEST(KubeletFlagsTest, ContainerRuntimeOnlyRemote) {
  FlagSet fs("kubelet");
  KubeletFlags f;
  AddKubeletFlags(fs, &f);
  absl::Status st = fs.Parse({"--container-runtime=docker"});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("unsupported CRI runtime: \"docker\", only \"remote\" is "
                                      "currently supported"));
  f.container_runtime = "docker";
  EXPECT_EQ(ValidateKubeletFlags(f).message(),
            "unsupported CRI runtime: \"docker\", only \"remote\" is currently supported");
}

TEST(KubeletFlagsTest, ValidateNodeLabels) {
  KubeletFlags f;
  f.node_labels = {{"kubernetes.io/hostname", "n1"},
                   {"node.kubernetes.io/foo", "x"},
                   {"a.kubelet.kubernetes.io/foo", "x"},
                   {"example.com/ok", "yes"},
                   {"node-role.kubernetes.io/worker", ""},
                   {"node-role.kubernetes.io/infra", ""}};
  // The OpenShift role labels (master, worker, control-plane, etcd) pass; other roles do not.
  EXPECT_TRUE(IsAllowedRoleLabel("node-role.kubernetes.io/master"));
  EXPECT_TRUE(IsAllowedRoleLabel("node-role.kubernetes.io/control-plane"));
  EXPECT_FALSE(IsAllowedRoleLabel("node-role.kubernetes.io/infra"));
  absl::Status st = ValidateKubeletFlags(f);
  EXPECT_EQ(st.message(),
            "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: "
            "[node-role.kubernetes.io/infra]\n"
            "--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix "
            "(kubelet.kubernetes.io, node.kubernetes.io) or be in the specifically allowed set "
            "(beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, "
            "failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, "
            "kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, "
            "node.kubernetes.io/instance-type, topology.kubernetes.io/region, "
            "topology.kubernetes.io/zone)");

  f.node_labels = {{"foo.k8s.io/a", "1"}, {"b.k8s.io/x", "2"}};
  EXPECT_THAT(ValidateKubeletFlags(f).message(),
              HasSubstr("--node-labels: [b.k8s.io/x foo.k8s.io/a]\n"));

  f.node_labels = {{"bad key", "ok"}};
  EXPECT_EQ(ValidateKubeletFlags(f).message(),
            "invalid node labels: 'bad key' - name part must consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
            "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");

  f.node_labels = {{"ok", "-bad"}};
  EXPECT_EQ(ValidateKubeletFlags(f).message(),
            "invalid node labels: '-bad' - a valid label must be an empty string or consist of "
            "alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
            "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
}

TEST(KubeletFlagsTest, IsKubeletLabel) {
  EXPECT_TRUE(IsKubeletLabel("kubernetes.io/hostname"));
  EXPECT_TRUE(IsKubeletLabel("node.kubernetes.io/anything"));
  EXPECT_TRUE(IsKubeletLabel("x.node.kubernetes.io/anything"));
  EXPECT_TRUE(IsKubeletLabel("kubelet.kubernetes.io/anything"));
  EXPECT_FALSE(IsKubeletLabel("xnode.kubernetes.io/anything"));
  EXPECT_FALSE(IsKubeletLabel("kubernetes.io/role"));
}

}  // namespace
}  // namespace kubelet::config
