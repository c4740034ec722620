#include "kubelet/kuberuntime/helpers.h"

#include <fstream>

#include "api/static_pod.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/kuberuntime/env.h"
#include "kubelet/kuberuntime/labels.h"
#include "kubelet/kuberuntime/resources.h"
#include "kubelet/kuberuntime/security_context.h"
#include "kubelet/kuberuntime/test_util.h"

namespace kubelet::kuberuntime {
namespace {

using ::testing::ElementsAre;
using testing::MakeContainer;
using testing::MakePod;

api::Quantity Q(const char* s) { return *api::ParseQuantity(s); }

TEST(HelpersTest, HashContainerMatchesUpstream) {
  // Upstream pkg/kubelet/container TestHashContainer (v1.28): 0x3c42280f.
  api::Container c;
  c.name = "test_container";
  c.image = "foo/image:v1";
  c.args = {"/bin/sh", "-c", "echo abc"};
  api::ContainerPort p;
  p.container_port = 8001;
  c.ports = {p};
  EXPECT_EQ(HashContainerSpec(c), 0x3c42280fu);
  EXPECT_EQ(HashToString(0x3c42280f), "3c42280f");
  c.image = "foo/image:v2";
  EXPECT_NE(HashContainerSpec(c), 0x3c42280fu);
}

TEST(HelpersTest, FormatPodAndStableKey) {
  api::Pod pod = MakePod("web", {MakeContainer("app")}, {}, "ns1", "u1");
  EXPECT_EQ(FormatPod(pod), "web_ns1(u1)");
  EXPECT_EQ(GetStableKey(pod, pod.spec.containers[0]),
            "web_ns1_u1_app_" + HashToString(HashContainerSpec(pod.spec.containers[0])));
}

TEST(HelpersTest, Expand) {
  auto lookup = [](std::string_view n) -> std::optional<std::string> {
    if (n == "VAR") return std::string("value");
    if (n == "EMPTY") return std::string();
    return std::nullopt;
  };
  EXPECT_EQ(Expand("$(VAR)", lookup), "value");
  EXPECT_EQ(Expand("a-$(VAR)-b", lookup), "a-value-b");
  EXPECT_EQ(Expand("$(UNKNOWN)", lookup), "$(UNKNOWN)");
  EXPECT_EQ(Expand("$$(VAR)", lookup), "$(VAR)");
  EXPECT_EQ(Expand("$$$(VAR)", lookup), "$value");
  EXPECT_EQ(Expand("$(VAR", lookup), "$(VAR");
  EXPECT_EQ(Expand("$VAR", lookup), "$VAR");
  EXPECT_EQ(Expand("$", lookup), "$");
  EXPECT_EQ(Expand("x$", lookup), "x$");
  EXPECT_EQ(Expand("$()", lookup), "$()");
  EXPECT_EQ(Expand("$(EMPTY)x", lookup), "x");
  EXPECT_EQ(Expand("$(VAR)$(VAR)", lookup), "valuevalue");
}

TEST(HelpersTest, CpuConversions) {
  EXPECT_EQ(MilliCPUToShares(0), 2);
  EXPECT_EQ(MilliCPUToShares(1), 2);
  EXPECT_EQ(MilliCPUToShares(100), 102);
  EXPECT_EQ(MilliCPUToShares(1000), 1024);
  EXPECT_EQ(MilliCPUToShares(1000000), 262144);
  EXPECT_EQ(MilliCPUToQuota(0, 100000), 0);
  EXPECT_EQ(MilliCPUToQuota(5, 100000), 1000);
  EXPECT_EQ(MilliCPUToQuota(250, 100000), 25000);
  EXPECT_EQ(MilliCPUToQuota(2000, 100000), 200000);
}

TEST(HelpersTest, QoSAndOOMScore) {
  const int64_t capacity = int64_t{4} << 30;
  api::Pod best = MakePod("p", {MakeContainer("a")});
  EXPECT_EQ(api::GetPodQOS(best), api::QOSClass::kBestEffort);
  EXPECT_EQ(GetContainerOOMScoreAdjust(best, best.spec.containers[0], capacity), 1000);

  api::Container g = MakeContainer("a");
  g.resources.limits = {{"cpu", Q("1")}, {"memory", Q("1Gi")}};
  api::Pod guaranteed = MakePod("p", {g});  // requests default to limits
  EXPECT_EQ(api::GetPodQOS(guaranteed), api::QOSClass::kGuaranteed);
  EXPECT_EQ(GetContainerOOMScoreAdjust(guaranteed, guaranteed.spec.containers[0], capacity), -997);

  api::Container b = MakeContainer("a");
  b.resources.requests = {{"memory", Q("1Gi")}};
  api::Pod burstable = MakePod("p", {b});
  EXPECT_EQ(api::GetPodQOS(burstable), api::QOSClass::kBurstable);
  EXPECT_EQ(GetContainerOOMScoreAdjust(burstable, burstable.spec.containers[0], capacity), 750);
  burstable.spec.containers[0].resources.requests["memory"] = Q("4Gi");
  EXPECT_EQ(GetContainerOOMScoreAdjust(burstable, burstable.spec.containers[0], capacity), 3);
  burstable.spec.containers[0].resources.requests["memory"] = Q("1");
  EXPECT_EQ(GetContainerOOMScoreAdjust(burstable, burstable.spec.containers[0], capacity), 999);

  // Static pods of class system-node-critical are protected like Guaranteed ones.
  best.metadata.annotations["kubernetes.io/config.source"] = "file";
  best.spec.priority_class_name = "system-node-critical";
  EXPECT_TRUE(IsNodeCriticalPod(best));
  EXPECT_EQ(GetContainerOOMScoreAdjust(best, best.spec.containers[0], capacity), -997);
}

TEST(HelpersTest, ImageNames) {
  EXPECT_EQ(*ApplyDefaultImageTag("busybox"), "busybox:latest");
  EXPECT_EQ(*ApplyDefaultImageTag("busybox:1.36"), "busybox:1.36");
  EXPECT_EQ(*ApplyDefaultImageTag("localhost:5000/x"), "localhost:5000/x:latest");
  const std::string digest =
      "sha256:0123456789012345678901234567890123456789012345678901234567890123";
  EXPECT_EQ(*ApplyDefaultImageTag("busybox@" + digest), "busybox@" + digest);
  EXPECT_FALSE(ApplyDefaultImageTag("Busybox").ok());
  // docker's wording for an uppercase repository; an uppercase first part is a registry host.
  EXPECT_EQ(ApplyDefaultImageTag("Busybox:UPPER").status().message(),
            "couldn't parse image name \"Busybox:UPPER\": invalid reference format: repository "
            "name must be lowercase");
  EXPECT_FALSE(ApplyDefaultImageTag("registry.local/Team/app").ok());
  EXPECT_EQ(*ApplyDefaultImageTag("Registry:5000/busybox:1"), "Registry:5000/busybox:1");
  EXPECT_FALSE(ApplyDefaultImageTag("a b").ok());
  EXPECT_FALSE(ApplyDefaultImageTag("").ok());

  EXPECT_EQ(*NormalizeImageName("busybox:1.36"), "docker.io/library/busybox:1.36");
  EXPECT_EQ(*NormalizeImageName("busybox"), "docker.io/library/busybox:latest");
  EXPECT_EQ(*NormalizeImageName("foo/bar"), "docker.io/foo/bar:latest");
  EXPECT_EQ(*NormalizeImageName("registry.k8s.io/pause:3.6"), "registry.k8s.io/pause:3.6");
  EXPECT_EQ(*NormalizeImageName("localhost:5000/x"), "localhost:5000/x:latest");
  EXPECT_EQ(*NormalizeImageName("busybox@" + digest), "docker.io/library/busybox@" + digest);
}

TEST(HelpersTest, LogPaths) {
  EXPECT_EQ(BuildPodLogsDirectory("/var/log/pods", "ns", "web", "u1"), "/var/log/pods/ns_web_u1");
  EXPECT_EQ(BuildContainerLogsDirectory("/var/log/pods", "ns", "web", "u1", "app"),
            "/var/log/pods/ns_web_u1/app");
  EXPECT_EQ(BuildContainerLogsPath("app", 3), "app/3.log");
  EXPECT_EQ(ParsePodUIDFromLogsDirectory("ns_web_1234-5678"), "1234-5678");

  testing::TempDir dir;
  EXPECT_EQ(CalcRestartCountByLogDir(dir.path() + "/missing"), 0);
  EXPECT_EQ(CalcRestartCountByLogDir(dir.path()), 0);
  for (const char* f : {"0.log", "4.log.20231122-010203", "2.log", "junk.log", "x7.log"}) {
    std::ofstream(dir.path() + "/" + f) << "x";
  }
  EXPECT_EQ(CalcRestartCountByLogDir(dir.path()), 5);
}

TEST(HelpersTest, Sysctls) {
  EXPECT_EQ(ConvertSysctlVariableToDotsSeparator("net/ipv4/ip_forward"), "net.ipv4.ip_forward");
  EXPECT_EQ(ConvertSysctlVariableToDotsSeparator("net.ipv4.ip_forward"), "net.ipv4.ip_forward");
  EXPECT_EQ(ConvertSysctlVariableToDotsSeparator("net/ipv4/conf/eno2.100/rp_filter"),
            "net.ipv4.conf.eno2/100.rp_filter");
}

TEST(LabelsTest, ContainerLabelsRoundTrip) {
  api::Container c = MakeContainer("app");
  c.termination_message_path = "/dev/termination-log";
  c.termination_message_policy = "FallbackToLogsOnError";
  api::LifecycleHandler pre;
  pre.exec = api::ExecAction{{"sh", "-c", "sleep 1 && echo <done>"}};
  c.lifecycle = api::Lifecycle{};
  c.lifecycle->pre_stop = pre;
  api::ContainerPort port;
  port.name = "http";
  port.container_port = 80;
  port.protocol = "TCP";
  c.ports = {port};
  api::Pod pod = MakePod("web", {c}, {}, "ns1", "u1");
  pod.metadata.deletion_grace_period_seconds = 7;

  StringMap labels = NewContainerLabels(pod.spec.containers[0], pod);
  EXPECT_EQ(labels.size(), 4u);
  LabeledContainerInfo li = GetContainerInfoFromLabels(labels);
  EXPECT_EQ(li.container_name, "app");
  EXPECT_EQ(li.pod_name, "web");
  EXPECT_EQ(li.pod_namespace, "ns1");
  EXPECT_EQ(li.pod_uid, "u1");

  StringMap ann = NewContainerAnnotations(pod.spec.containers[0], pod, 3);
  EXPECT_EQ(ann[kContainerPreStopHandlerLabel],
            R"({"exec":{"command":["sh","-c","sleep 1 \u0026\u0026 echo \u003cdone\u003e"]}})");
  EXPECT_EQ(ann[kContainerPortsLabel], R"([{"name":"http","containerPort":80,"protocol":"TCP"}])");
  EXPECT_EQ(ann[kPodTerminationGracePeriodLabel], "30");
  AnnotatedContainerInfo ai = GetContainerInfoFromAnnotations(ann);
  EXPECT_EQ(ai.hash, HashContainerSpec(pod.spec.containers[0]));
  EXPECT_EQ(ai.restart_count, 3);
  EXPECT_EQ(ai.pod_deletion_grace_period, 7);
  EXPECT_EQ(ai.pod_termination_grace_period, 30);
  EXPECT_EQ(ai.termination_message_path, "/dev/termination-log");
  EXPECT_EQ(ai.termination_message_policy, "FallbackToLogsOnError");
  ASSERT_TRUE(ai.pre_stop_handler.has_value());
  EXPECT_EQ(*ai.pre_stop_handler, pre);
  EXPECT_EQ(ai.container_ports, c.ports);
}

TEST(LabelsTest, MalformedAnnotationsYieldZeroValues) {
  StringMap ann = {{kContainerHashLabel, "zz"},
                   {kContainerRestartCountLabel, "-3"},
                   {kPodTerminationGracePeriodLabel, "abc"},
                   {kContainerPreStopHandlerLabel, "{not json"},
                   {kContainerPortsLabel, R"({"x":1})"}};
  AnnotatedContainerInfo ai = GetContainerInfoFromAnnotations(ann);
  EXPECT_EQ(ai.hash, 0u);
  EXPECT_EQ(ai.restart_count, 0);
  EXPECT_FALSE(ai.pod_termination_grace_period.has_value());
  EXPECT_FALSE(ai.pre_stop_handler.has_value());
  EXPECT_TRUE(ai.container_ports.empty());
  LabeledContainerInfo li = GetContainerInfoFromLabels({});
  EXPECT_EQ(li.pod_uid, "");
}

TEST(LabelsTest, CorruptAnnotationsFromTheRuntimeAreDropped) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  StringMap ann = {{kContainerHashLabel, "1ffffffffffffffffffff"},  // overflows uint64
                   {kContainerRestartCountLabel, "99999999999"},    // overflows int32
                   {kPodDeletionGracePeriodLabel, "99999999999999999999999"},
                   {kContainerPreStopHandlerLabel, deep},
                   {kContainerPortsLabel, "[{\"containerPort\":\"\xff\xfe\"}]"}};
  AnnotatedContainerInfo ai = GetContainerInfoFromAnnotations(ann);
  EXPECT_EQ(ai.hash, 0u);
  EXPECT_EQ(ai.restart_count, 0);
  EXPECT_FALSE(ai.pod_deletion_grace_period.has_value());
  EXPECT_FALSE(ai.pre_stop_handler.has_value());
  EXPECT_TRUE(ai.container_ports.empty());
  ann = {{kContainerPortsLabel, deep}, {kContainerPreStopHandlerLabel, R"({"exec":7})"}};
  ai = GetContainerInfoFromAnnotations(ann);
  EXPECT_TRUE(ai.container_ports.empty());
  EXPECT_FALSE(ai.pre_stop_handler.has_value());
}

TEST(LabelsTest, SandboxLabels) {
  api::Pod pod = MakePod("web", {MakeContainer("app")}, {}, "ns1", "u1");
  pod.metadata.labels = {{"app", "web"}};
  pod.metadata.annotations = {{"a", "b"}};
  StringMap labels = NewPodLabels(pod);
  EXPECT_EQ(labels.at("app"), "web");
  EXPECT_EQ(labels.at(kPodUIDLabel), "u1");
  LabeledPodSandboxInfo info = GetPodSandboxInfoFromLabels(labels);
  EXPECT_EQ(info.labels, (StringMap{{"app", "web"}}));
  EXPECT_EQ(info.pod_name, "web");
  EXPECT_EQ(NewPodAnnotations(pod), (StringMap{{"a", "b"}}));
}

TEST(ResourcesTest, ContainerResources) {
  api::Container c = MakeContainer("a");
  c.resources.limits = {{"cpu", Q("500m")}, {"memory", Q("128Mi")}};
  c.resources.requests = {{"cpu", Q("250m")}, {"memory", Q("64Mi")}};
  api::Pod pod = MakePod("p", {c});
  ResourceSettings rs;
  rs.memory_capacity = int64_t{1} << 30;
  runtime::v1::LinuxContainerResources r =
      GenerateLinuxContainerResources(pod, pod.spec.containers[0], rs);
  EXPECT_EQ(r.cpu_shares(), 256);
  EXPECT_EQ(r.cpu_quota(), 50000);
  EXPECT_EQ(r.cpu_period(), 100000);
  EXPECT_EQ(r.memory_limit_in_bytes(), 128 << 20);
  EXPECT_EQ(r.oom_score_adj(), 938);  // 1000 - 1000*64Mi/1Gi
  EXPECT_TRUE(r.unified().empty());
  rs.cgroup2_unified = true;
  rs.cpu_cfs_quota = false;
  r = GenerateLinuxContainerResources(pod, pod.spec.containers[0], rs);
  EXPECT_EQ(r.cpu_quota(), 0);
  EXPECT_EQ(r.unified().at("memory.oom.group"), "1");

  // Limit only (no defaulting): shares from the limit.
  api::Pod raw;
  raw.spec.containers = {MakeContainer("a")};
  raw.spec.containers[0].resources.limits = {{"cpu", Q("2")}};
  r = GenerateLinuxContainerResources(raw, raw.spec.containers[0], ResourceSettings{});
  EXPECT_EQ(r.cpu_shares(), 2048);
}

TEST(ResourcesTest, PodRequestsWithSidecars) {
  api::Container app = MakeContainer("a");
  app.resources.requests = {{"cpu", Q("100m")}};
  api::Container sidecar = testing::Sidecar("s");
  sidecar.resources.requests = {{"cpu", Q("200m")}};
  api::Container init = MakeContainer("i");
  init.resources.requests = {{"cpu", Q("1")}};
  api::Pod pod = MakePod("p", {app}, {sidecar, init});
  // max(app + sidecar, sidecar + init) = max(300m, 1200m)
  EXPECT_EQ(api::PodRequests(pod).at("cpu").MilliValue(), 1200);
  pod.spec.init_containers.pop_back();
  EXPECT_EQ(api::PodRequests(pod).at("cpu").MilliValue(), 300);
}

TEST(SecurityContextTest, Defaults) {
  api::Pod pod = MakePod("p", {MakeContainer("a")});
  pod.spec.security_context->run_as_user = 1000;
  pod.spec.security_context->fs_group = 2000;
  pod.spec.security_context->supplemental_groups = {3000};
  SecurityOptions opts{"/var/lib/kubelet/seccomp", false};
  absl::StatusOr<runtime::v1::LinuxContainerSecurityContext> sc =
      GenerateContainerSecurityContext(pod, pod.spec.containers[0], 0, "", opts);
  ASSERT_TRUE(sc.ok()) << sc.status();
  EXPECT_EQ(sc->run_as_user().value(), 1000);
  EXPECT_THAT(sc->supplemental_groups(), ElementsAre(2000, 3000));
  EXPECT_EQ(sc->namespace_options().pid(), runtime::v1::CONTAINER);
  EXPECT_EQ(sc->namespace_options().network(), runtime::v1::POD);
  EXPECT_EQ(sc->seccomp().profile_type(), runtime::v1::SecurityProfile::Unconfined);
  EXPECT_FALSE(sc->no_new_privs());
  EXPECT_EQ(sc->masked_paths_size(), 10);
  EXPECT_EQ(sc->readonly_paths_size(), 5);

  api::SecurityContext csc;
  csc.allow_privilege_escalation = false;
  csc.capabilities = api::Capabilities{{"NET_ADMIN"}, {"ALL"}};
  csc.proc_mount = "Unmasked";
  csc.seccomp_profile = api::SeccompProfile{"Localhost", std::string("prof.json")};
  pod.spec.containers[0].security_context = csc;
  pod.spec.share_process_namespace = true;
  sc = GenerateContainerSecurityContext(pod, pod.spec.containers[0], 0, "", opts);
  ASSERT_TRUE(sc.ok());
  EXPECT_TRUE(sc->no_new_privs());
  EXPECT_THAT(sc->capabilities().add_capabilities(), ElementsAre("NET_ADMIN"));
  EXPECT_THAT(sc->capabilities().drop_capabilities(), ElementsAre("ALL"));
  EXPECT_EQ(sc->masked_paths_size(), 0);
  EXPECT_EQ(sc->seccomp().localhost_ref(), "/var/lib/kubelet/seccomp/prof.json");
  EXPECT_EQ(sc->namespace_options().pid(), runtime::v1::POD);

  // runAsNonRoot against the image user.
  pod.spec.security_context->run_as_user.reset();
  pod.spec.security_context->run_as_non_root = true;
  EXPECT_FALSE(VerifyRunAsNonRoot(pod, pod.spec.containers[0], 0, "").ok());
  EXPECT_TRUE(VerifyRunAsNonRoot(pod, pod.spec.containers[0], 1000, "").ok());
  EXPECT_FALSE(VerifyRunAsNonRoot(pod, pod.spec.containers[0], std::nullopt, "nobody").ok());
}

TEST(EnvTest, VariablesAndExpansion) {
  api::Container c = MakeContainer("app");
  auto env = [](const char* name, const char* value) {
    api::EnvVar e;
    e.name = name;
    e.value = value;
    return e;
  };
  auto field = [](const char* name, const char* path) {
    api::EnvVar e;
    e.name = name;
    e.value_from = api::EnvVarSource{};
    e.value_from->field_ref = api::ObjectFieldSelector{"v1", path};
    return e;
  };
  auto resource = [](const char* name, const char* res, const char* divisor) {
    api::EnvVar e;
    e.name = name;
    e.value_from = api::EnvVarSource{};
    e.value_from->resource_field_ref = api::ResourceFieldSelector{"", res, Q(divisor)};
    return e;
  };
  c.env = {env("A", "a"),
           env("B", "$(A)-b-$(C)-$$(A)"),
           field("NAME", "metadata.name"),
           field("NS", "metadata.namespace"),
           field("UID", "metadata.uid"),
           field("LBL", "metadata.labels['app']"),
           field("ANN", "metadata.annotations['note']"),
           field("NODE", "spec.nodeName"),
           field("SA", "spec.serviceAccountName"),
           field("HOSTIP", "status.hostIP"),
           field("PODIP", "status.podIP"),
           field("PODIPS", "status.podIPs"),
           resource("CPU_LIMIT", "limits.cpu", "1m"),
           resource("MEM_LIMIT", "limits.memory", "1Mi"),
           resource("MEM_REQ", "requests.memory", "0"),
           env("A", "override")};
  c.resources.requests = {{"memory", Q("64Mi")}};
  c.command = {"echo", "$(B)"};
  c.args = {"$(NAME)", "$$(NAME)", "$(NOPE)"};
  api::Pod pod = MakePod("web", {c}, {}, "ns1", "u1");
  pod.metadata.labels = {{"app", "web"}};
  pod.metadata.annotations = {{"note", "hi"}};
  pod.spec.node_name = "node1";
  pod.spec.service_account_name = "sa";
  EnvContext ctx;
  ctx.node_ips = {"192.168.1.10"};
  ctx.node_allocatable = {{"cpu", Q("4")}, {"memory", Q("8Gi")}};
  absl::StatusOr<std::vector<EnvVar>> vars =
      MakeEnvironmentVariables(pod, pod.spec.containers[0], {"fd00::5", "10.88.0.5"}, ctx);
  ASSERT_TRUE(vars.ok()) << vars.status();
  std::map<std::string, std::string> m;
  for (const EnvVar& v : *vars) m[v.name] = v.value;
  EXPECT_EQ((*vars)[0].name, "A");
  EXPECT_EQ(m["A"], "override");
  EXPECT_EQ(m["B"], "a-b-$(C)-$(A)");
  EXPECT_EQ(m["NAME"], "web");
  EXPECT_EQ(m["NS"], "ns1");
  EXPECT_EQ(m["UID"], "u1");
  EXPECT_EQ(m["LBL"], "web");
  EXPECT_EQ(m["ANN"], "hi");
  EXPECT_EQ(m["NODE"], "node1");
  EXPECT_EQ(m["SA"], "sa");
  EXPECT_EQ(m["HOSTIP"], "192.168.1.10");
  EXPECT_EQ(m["PODIP"], "10.88.0.5");
  EXPECT_EQ(m["PODIPS"], "10.88.0.5,fd00::5");
  EXPECT_EQ(m["CPU_LIMIT"], "4000");  // node allocatable fallback
  EXPECT_EQ(m["MEM_LIMIT"], "8192");
  EXPECT_EQ(m["MEM_REQ"], std::to_string(64 << 20));
  EXPECT_EQ(vars->size(), 15u);

  auto [command, args] = ExpandContainerCommandAndArgs(pod.spec.containers[0], *vars);
  EXPECT_THAT(command, ElementsAre("echo", "a-b-$(C)-$(A)"));
  EXPECT_THAT(args, ElementsAre("web", "$(NAME)", "$(NOPE)"));
}

TEST(EnvTest, Errors) {
  api::Container c = MakeContainer("app");
  api::EnvVar e;
  e.name = "X";
  e.value_from = api::EnvVarSource{};
  e.value_from->config_map_key_ref = api::ConfigMapKeySelector{"cm", "k", std::nullopt};
  c.env = {e};
  api::Pod pod = MakePod("web", {c}, {}, "ns1", "u1");
  absl::StatusOr<std::vector<EnvVar>> vars =
      MakeEnvironmentVariables(pod, pod.spec.containers[0], {}, EnvContext{});
  ASSERT_FALSE(vars.ok());
  EXPECT_EQ(vars.status().message(), "couldn't get configMap ns1/cm, no kubeClient defined");

  EnvContext ctx;
  ctx.get_config_map =
      [](const std::string&,
         const std::string& name) -> absl::StatusOr<std::map<std::string, std::string>> {
    if (name == "cm") return std::map<std::string, std::string>{{"k", "v"}, {"bad key", "x"}};
    return absl::NotFoundError("not found");
  };
  vars = MakeEnvironmentVariables(pod, pod.spec.containers[0], {}, ctx);
  ASSERT_TRUE(vars.ok());
  EXPECT_EQ((*vars)[0].value, "v");

  // envFrom with prefix; invalid keys skipped; optional missing source ignored.
  api::EnvFromSource from;
  from.prefix = "P_";
  from.config_map_ref = api::ConfigMapEnvSource{"cm", std::nullopt};
  api::EnvFromSource missing;
  missing.config_map_ref = api::ConfigMapEnvSource{"gone", true};
  pod.spec.containers[0].env_from = {from, missing};
  vars = MakeEnvironmentVariables(pod, pod.spec.containers[0], {}, ctx);
  ASSERT_TRUE(vars.ok()) << vars.status();
  ASSERT_EQ(vars->size(), 2u);
  EXPECT_EQ((*vars)[0], (EnvVar{"P_k", "v"}));

  api::EnvVar bad;
  bad.name = "Y";
  bad.value_from = api::EnvVarSource{};
  bad.value_from->field_ref = api::ObjectFieldSelector{"v1", "spec.nope"};
  pod.spec.containers[0].env = {bad};
  vars = MakeEnvironmentVariables(pod, pod.spec.containers[0], {}, ctx);
  EXPECT_FALSE(vars.ok());
  bad.value_from->field_ref = api::ObjectFieldSelector{"v1", "status.hostIP"};
  pod.spec.containers[0].env = {bad};
  EXPECT_FALSE(MakeEnvironmentVariables(pod, pod.spec.containers[0], {}, ctx).ok());
}

}  // namespace
}  // namespace kubelet::kuberuntime
