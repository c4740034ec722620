#include "api/pod_validation.h"

#include <string>
#include <vector>

#include "api/pod_codec.h"
#include "api/pod_defaults.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::api {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kSubdomainMsg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
// A valid, defaulted pod that tests then break.
Pod ValidPod() {
  auto pod = DecodePod(R"(apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  volumes:
  - name: data
    hostPath: {path: /srv}
  containers:
  - name: a
    image: busybox:1.36
    ports: [{containerPort: 8080, name: http}]
    volumeMounts: [{name: data, mountPath: /data}]
)");
  EXPECT_TRUE(pod.ok()) << pod.status();
  SetDefaultsPod(&*pod);
  return *pod;
}

std::vector<std::string> Errors(const Pod& pod) {
  std::vector<std::string> out;
  for (const auto& e : ValidatePodCreate(pod)) out.push_back(e.ToString());
  return out;
}

TEST(PodValidation, ValidPodPasses) {
  EXPECT_THAT(Errors(ValidPod()), IsEmpty());
  EXPECT_TRUE(ValidatePodForKubelet(ValidPod()).ok());
}

TEST(PodValidation, AggregateFormatting) {
  Pod pod = ValidPod();
  pod.spec.containers[0].image = "";
  Container dup = pod.spec.containers[0];
  dup.image = "x";
  dup.ports.clear();
  dup.volume_mounts.clear();
  pod.spec.containers.push_back(dup);
  absl::Status st = ValidatePodForKubelet(pod);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "Pod \"web\" is invalid: [spec.containers[0].image: Required value, "
            "spec.containers[1].name: Duplicate value: \"a\"]");
  EXPECT_EQ(FormatErrorListGo(ValidatePodCreate(pod)),
            "[spec.containers[0].image: Required value spec.containers[1].name: Duplicate value: "
            "\"a\"]");

  Pod one = ValidPod();
  one.spec.restart_policy = "Sometimes";
  EXPECT_EQ(ValidatePodForKubelet(one).message(),
            "Pod \"web\" is invalid: spec.restartPolicy: Unsupported value: \"Sometimes\": "
            "supported values: \"Always\", \"OnFailure\", \"Never\"");
}

TEST(PodValidation, Metadata) {
  Pod pod = ValidPod();
  pod.metadata.name = "Foo_bar";
  pod.metadata.namespace_ = "";
  EXPECT_THAT(Errors(pod), ElementsAre(std::string("metadata.name: Invalid value: \"Foo_bar\": ") +
                                           kSubdomainMsg,
                                       "metadata.namespace: Required value"));
  pod = ValidPod();
  pod.metadata.name = "";
  pod.metadata.namespace_ = "Kube_System";
  EXPECT_THAT(Errors(pod), ElementsAre("metadata.name: Required value: name or generateName is "
                                       "required",
                                       std::string("metadata.namespace: Invalid value: "
                                                   "\"Kube_System\": ") +
                                           "a lowercase RFC 1123 label must consist of lower case "
                                           "alphanumeric characters or '-', and must start and end "
                                           "with an alphanumeric character (e.g. 'my-name',  or "
                                           "'123-abc', regex used for validation is "
                                           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
  pod = ValidPod();
  pod.metadata.labels["bad key!"] = "v";
  pod.metadata.annotations["kubernetes.io/config.mirror"] = "x";
  pod.metadata.annotations["controller.kubernetes.io/pod-deletion-cost"] = "+1";
  auto errs = Errors(pod);
  ASSERT_EQ(errs.size(), 3u);
  EXPECT_THAT(errs[0], HasSubstr("metadata.labels: Invalid value: \"bad key!\": name part must "
                                 "consist of alphanumeric characters"));
  EXPECT_EQ(errs[1],
            "metadata.annotations[kubernetes.io/config.mirror]: Invalid value: \"x\": must set "
            "spec.nodeName if mirror pod annotation is set");
  EXPECT_EQ(errs[2],
            "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "
            "\"+1\": must be a 32bit integer");
}

TEST(PodValidation, ContainersRequiredAndNames) {
  Pod pod = ValidPod();
  pod.spec.containers.clear();
  EXPECT_THAT(Errors(pod), ElementsAre("spec.containers: Required value"));

  pod = ValidPod();
  pod.spec.containers[0].name = "Web_1";
  EXPECT_THAT(Errors(pod), ElementsAre(std::string("spec.containers[0].name: Invalid value: "
                                                   "\"Web_1\": ") +
                                       "a lowercase RFC 1123 label must consist of lower case "
                                       "alphanumeric characters or '-', and must start and end "
                                       "with an alphanumeric character (e.g. 'my-name',  or "
                                       "'123-abc', regex used for validation is "
                                       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));

  // Init container names must not collide with app container names.
  pod = ValidPod();
  Container init = pod.spec.containers[0];
  init.ports.clear();
  pod.spec.init_containers.push_back(init);
  EXPECT_THAT(Errors(pod), ElementsAre("spec.initContainers[0].name: Duplicate value: \"a\""));
}

TEST(PodValidation, Image) {
  Pod pod = ValidPod();
  pod.spec.containers[0].image = " busybox ";
  EXPECT_THAT(Errors(pod), ElementsAre("spec.containers[0].image: Invalid value: \" busybox \": "
                                       "must not have leading or trailing whitespace"));
}

TEST(PodValidation, Ports) {
  Pod pod = ValidPod();
  auto& ports = pod.spec.containers[0].ports;
  ports.push_back(ContainerPort{"http", 70000, 0, "TCP", ""});
  ports.push_back(ContainerPort{"Bad--", 0, 65536, "ICMP", ""});
  EXPECT_THAT(
      Errors(pod),
      ElementsAre(
          "spec.containers[0].ports[1].name: Duplicate value: \"http\"",
          "spec.containers[0].ports[1].containerPort: Required value",
          "spec.containers[0].ports[1].hostPort: Invalid value: 70000: must be between 1 and "
          "65535, inclusive",
          "spec.containers[0].ports[2].name: Invalid value: \"Bad--\": must contain only "
          "alpha-numeric characters (a-z, 0-9), and hyphens (-)",
          "spec.containers[0].ports[2].name: Invalid value: \"Bad--\": must not contain "
          "consecutive hyphens",
          "spec.containers[0].ports[2].name: Invalid value: \"Bad--\": must not begin or end with "
          "a hyphen",
          "spec.containers[0].ports[2].containerPort: Invalid value: 65536: must be between 1 and "
          "65535, inclusive",
          "spec.containers[0].ports[2].protocol: Unsupported value: \"ICMP\": supported values: "
          "\"SCTP\", \"TCP\", \"UDP\""));
}

TEST(PodValidation, HostNetworkPortsAndHostPortConflicts) {
  Pod pod = ValidPod();
  pod.spec.host_network = true;
  pod.spec.containers[0].ports[0].host_port = 9090;
  EXPECT_THAT(Errors(pod), ElementsAre("spec.containers[0].ports[0].hostPort: Invalid value: "
                                       "9090: must match `containerPort` when `hostNetwork` is "
                                       "true"));
  pod = ValidPod();
  pod.spec.containers[0].ports[0].host_port = 80;
  Container b = pod.spec.containers[0];
  b.name = "b";
  b.ports[0].name = "";
  pod.spec.containers.push_back(b);
  EXPECT_THAT(Errors(pod), ElementsAre("spec.containers[1].ports[0].hostPort: Duplicate value: "
                                       "\"TCP//80\""));
}

TEST(PodValidation, Env) {
  Pod pod = ValidPod();
  auto& env = pod.spec.containers[0].env;
  env.push_back(EnvVar{"GOOD.name-1", "v", std::nullopt});
  env.push_back(EnvVar{"1BAD", "", std::nullopt});
  env.push_back(EnvVar{"A=B", "", std::nullopt});
  env.push_back(EnvVar{"", "", std::nullopt});
  EnvVarSource both;
  both.field_ref = ObjectFieldSelector{"v1", "metadata.name"};
  both.secret_key_ref = SecretKeySelector{"s", "k", std::nullopt};
  env.push_back(EnvVar{"BOTH", "", both});
  EnvVarSource bad_field;
  bad_field.field_ref = ObjectFieldSelector{"v1", "spec.bogus"};
  env.push_back(EnvVar{"F", "", bad_field});
  auto errs = Errors(pod);
  ASSERT_EQ(errs.size(), 5u) << testing::PrintToString(errs);
  EXPECT_THAT(errs[0], HasSubstr("spec.containers[0].env[1].name: Invalid value: \"1BAD\": a "
                                 "valid environment variable name must consist of alphabetic "
                                 "characters, digits, '_', '-', or '.', and must not start with "
                                 "a digit"));
  EXPECT_THAT(errs[1], HasSubstr("spec.containers[0].env[2].name: Invalid value: \"A=B\""));
  EXPECT_EQ(errs[2], "spec.containers[0].env[3].name: Required value");
  EXPECT_EQ(errs[3],
            "spec.containers[0].env[4].valueFrom: Invalid value: \"\": may not have more than one "
            "field specified at a time");
  EXPECT_EQ(errs[4],
            "spec.containers[0].env[5].valueFrom.fieldRef.fieldPath: Invalid value: "
            "\"spec.bogus\": error converting fieldPath: field label not supported: spec.bogus");
}

TEST(PodValidation, RestartAndDnsPolicy) {
  Pod pod = ValidPod();
  pod.spec.restart_policy = "";
  pod.spec.dns_policy = "Google";
  EXPECT_THAT(Errors(pod),
              ElementsAre("spec.restartPolicy: Required value",
                          "spec.dnsPolicy: Unsupported value: \"Google\": supported values: "
                          "\"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\""));
  pod = ValidPod();
  pod.spec.dns_policy = "None";
  EXPECT_THAT(Errors(pod), ElementsAre("spec.dnsConfig: Required value: must provide `dnsConfig` "
                                       "when `dnsPolicy` is None"));
  pod.spec.dns_config = PodDNSConfig{{"1.1.1.1", "not-an-ip"}, {"example.com."}, {{"", "1"}}};
  EXPECT_THAT(Errors(pod),
              ElementsAre("spec.dnsConfig.nameservers[1]: Invalid value: \"not-an-ip\": must be a "
                          "valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                          "spec.dnsConfig.options[0]: Required value: must not be empty"));
}

TEST(PodValidation, Resources) {
  Pod pod = ValidPod();
  auto& r = pod.spec.containers[0].resources;
  r.limits["cpu"] = *Quantity::Parse("500m");
  r.requests["cpu"] = *Quantity::Parse("1");
  r.requests["memory"] = *Quantity::Parse("-1");
  r.requests["bogus"] = *Quantity::Parse("1");
  r.limits["example.com/gpu"] = *Quantity::Parse("1.5");
  EXPECT_THAT(
      Errors(pod),
      ElementsAre(
          "spec.containers[0].resources.limits[example.com/gpu]: Invalid value: \"1500m\": must "
          "be an integer",
          "spec.containers[0].resources.requests[bogus]: Invalid value: \"bogus\": must be a "
          "standard resource type or fully qualified",
          "spec.containers[0].resources.requests[bogus]: Invalid value: \"bogus\": must be a "
          "standard resource for containers",
          "spec.containers[0].resources.requests: Invalid value: \"1\": must be less than or "
          "equal to cpu limit",
          "spec.containers[0].resources.requests[memory]: Invalid value: \"-1\": must be greater "
          "than or equal to 0"));
}

TEST(PodValidation, Volumes) {
  Pod pod = ValidPod();
  Volume dup = pod.spec.volumes[0];
  pod.spec.volumes.push_back(dup);  // duplicate name
  Volume two;
  two.name = "Two";
  two.host_path = HostPathVolumeSource{"/x", "Weird"};
  two.empty_dir = EmptyDirVolumeSource{};
  pod.spec.volumes.push_back(two);
  Volume none;
  none.name = "none";
  pod.spec.volumes.push_back(none);
  Volume back;
  back.name = "back";
  back.host_path = HostPathVolumeSource{"/a/../b", ""};
  pod.spec.volumes.push_back(back);
  EXPECT_THAT(
      Errors(pod),
      ElementsAre("spec.volumes[1].name: Duplicate value: \"data\"",
                  "spec.volumes[2].hostPath: Forbidden: may not specify more than 1 volume type",
                  std::string("spec.volumes[2].name: Invalid value: \"Two\": ") +
                      "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                      "characters or '-', and must start and end with an alphanumeric character "
                      "(e.g. 'my-name',  or '123-abc', regex used for validation is "
                      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                  "spec.volumes[3]: Required value: must specify a volume type",
                  "spec.volumes[4].hostPath.path: Invalid value: \"/a/../b\": must not contain "
                  "'..'"));
  pod = ValidPod();
  pod.spec.volumes[0].host_path->type = "Weird";
  EXPECT_THAT(Errors(pod),
              ElementsAre("spec.volumes[0].hostPath.type: Unsupported value: \"Weird\": supported "
                          "values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", "
                          "\"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\"",
                          // An invalid volume is not mountable either, as upstream.
                          "spec.containers[0].volumeMounts[0].name: Not found: \"data\""));
}

TEST(PodValidation, VolumeMounts) {
  Pod pod = ValidPod();
  auto& mounts = pod.spec.containers[0].volume_mounts;
  mounts.push_back(VolumeMount{"missing", false, "/data", "", std::nullopt, ""});
  mounts.push_back(VolumeMount{"data", false, "", "/abs", std::nullopt, ""});
  mounts.push_back(VolumeMount{"data", false, "/p", "", "Bidirectional", ""});
  EXPECT_THAT(
      Errors(pod),
      ElementsAre("spec.containers[0].volumeMounts[1].name: Not found: \"missing\"",
                  "spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/data\": must "
                  "be unique",
                  "spec.containers[0].volumeMounts[2].mountPath: Required value",
                  "spec.containers[0].volumeMounts.subPath: Invalid value: \"/abs\": must be a "
                  "relative path",
                  "spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional "
                  "mount propagation is available only to privileged containers"));
}

TEST(PodValidation, Probes) {
  Pod pod = ValidPod();
  Container& c = pod.spec.containers[0];
  Probe none;
  none.success_threshold = 1;
  c.liveness_probe = none;
  Probe two;
  two.exec = ExecAction{{"true"}};
  two.tcp_socket = TCPSocketAction{IntOrString::FromInt(0), ""};
  two.success_threshold = 1;
  c.readiness_probe = two;
  Probe startup;
  startup.http_get = HTTPGetAction{"/", IntOrString::FromString("http"), "", "FTP", {}};
  startup.success_threshold = 2;
  startup.period_seconds = -1;
  c.startup_probe = startup;
  EXPECT_THAT(
      Errors(pod),
      ElementsAre("spec.containers[0].livenessProbe: Required value: must specify a handler type",
                  "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more "
                  "than 1 handler type",
                  "spec.containers[0].startupProbe.httpGet.scheme: Unsupported value: \"FTP\": "
                  "supported values: \"HTTP\", \"HTTPS\"",
                  "spec.containers[0].startupProbe.periodSeconds: Invalid value: -1: must be "
                  "greater than or equal to 0",
                  "spec.containers[0].startupProbe.successThreshold: Invalid value: 2: must be 1"));
}

TEST(PodValidation, InitContainersAndSidecars) {
  Pod pod = ValidPod();
  Container init;
  init.name = "init";
  init.image = "x";
  init.termination_message_policy = "File";
  init.image_pull_policy = "Always";
  Probe p;
  p.exec = ExecAction{{"true"}};
  p.success_threshold = 1;
  init.liveness_probe = p;
  pod.spec.init_containers.push_back(init);
  EXPECT_THAT(Errors(pod), ElementsAre("spec.initContainers[0].livenessProbe: Forbidden: may not "
                                       "be set for init containers"));
  pod.spec.init_containers[0].restart_policy = "Always";  // a sidecar may have probes
  EXPECT_THAT(Errors(pod), IsEmpty());
  pod.spec.init_containers[0].restart_policy = "OnFailure";
  pod.spec.containers[0].restart_policy = "Always";
  EXPECT_THAT(Errors(pod),
              ElementsAre("spec.containers[0].restartPolicy: Forbidden: may not be set for "
                          "non-init containers",
                          "spec.initContainers[0].restartPolicy: Unsupported value: \"OnFailure\": "
                          "supported values: \"Always\"",
                          "spec.initContainers[0].livenessProbe: Forbidden: may not be set for "
                          "init containers"));
}

TEST(PodValidation, TerminationGracePeriodAndMisc) {
  Pod pod = ValidPod();
  pod.spec.termination_grace_period_seconds.reset();
  pod.spec.active_deadline_seconds = 0;
  pod.spec.hostname = "Host";
  pod.spec.tolerations.push_back(Toleration{"", "Equal", "x", "", std::nullopt});
  EXPECT_THAT(Errors(pod),
              ElementsAre("spec.terminationGracePeriodSeconds: Required value",
                          "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and "
                          "2147483647, inclusive",
                          std::string("spec.hostname: Invalid value: \"Host\": ") +
                              "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                              "characters or '-', and must start and end with an alphanumeric "
                              "character (e.g. 'my-name',  or '123-abc', regex used for "
                              "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                          "spec.tolerations[0].operator: Invalid value: \"Equal\": operator must "
                          "be Exists when `key` is empty, which means \"match all values and all "
                          "keys\""));
}

TEST(PodValidation, SecurityContextAndSysctls) {
  Pod pod = ValidPod();
  pod.spec.host_network = true;
  pod.spec.containers[0].ports[0].host_port = 8080;
  pod.spec.security_context->sysctls = {{"net.core.somaxconn", "1024"}, {"Bad!", "1"}};
  pod.spec.security_context->run_as_user = -1;
  SecurityContext sc;
  sc.allow_privilege_escalation = false;
  sc.privileged = true;
  sc.seccomp_profile = SeccompProfile{"Localhost", std::nullopt};
  pod.spec.containers[0].security_context = sc;
  auto errs = Errors(pod);
  EXPECT_THAT(errs, Contains("spec.containers[0].securityContext.seccompProfile.localhostProfile: "
                             "Required value: must be set when seccomp type is Localhost"));
  EXPECT_THAT(errs, Contains("spec.containers[0].securityContext: Invalid value: {...}: cannot set "
                             "`allowPrivilegeEscalation` to false and `privileged` to true"));
  EXPECT_THAT(errs, Contains("spec.securityContext.runAsUser: Invalid value: -1: must be between 0 "
                             "and 2147483647, inclusive"));
  EXPECT_THAT(errs, Contains("spec.securityContext.sysctls[0].name: Invalid value: "
                             "\"net.core.somaxconn\": may not be specified when 'hostNetwork' is "
                             "true"));
  EXPECT_THAT(errs, Contains(HasSubstr("spec.securityContext.sysctls[1].name: Invalid value: "
                                       "\"Bad!\": must have at most 253 characters and match "
                                       "regex")));
}

TEST(PodValidation, EphemeralContainersAndSchedulingGatesOnCreate) {
  Pod pod = ValidPod();
  EphemeralContainer ec;
  ec.common.name = "debug";
  ec.common.image = "busybox";
  ec.common.termination_message_policy = "File";
  ec.common.image_pull_policy = "Always";
  pod.spec.ephemeral_containers.push_back(ec);
  pod.spec.node_name = "node1";
  pod.spec.scheduling_gates.push_back(PodSchedulingGate{"example.com/gate"});
  EXPECT_THAT(Errors(pod),
              ElementsAre("spec.ephemeralContainers: Forbidden: cannot be set on create",
                          "spec.nodeName: Forbidden: cannot be set until all schedulingGates have "
                          "been cleared"));
}

TEST(PodValidation, StringHelpers) {
  EXPECT_THAT(IsDNS1123Label("ok-1"), IsEmpty());
  EXPECT_EQ(IsDNS1123Label(std::string(64, 'a')).size(), 1u);
  EXPECT_THAT(IsDNS1123Subdomain("a.b-c.d"), IsEmpty());
  EXPECT_EQ(IsDNS1123Subdomain("a..b").size(), 1u);
  EXPECT_THAT(IsQualifiedName("example.com/My_Name.1"), IsEmpty());
  EXPECT_THAT(IsQualifiedName("/x"), ElementsAre("prefix part must be non-empty"));
  EXPECT_THAT(IsValidLabelValue(""), IsEmpty());
  EXPECT_THAT(IsEnvVarName("my.env-name"), IsEmpty());
  EXPECT_THAT(IsEnvVarName(".."), Contains("must not be '..'"));
  EXPECT_THAT(IsConfigMapKey("key.name"), IsEmpty());
  EXPECT_THAT(IsValidPortName("http-alt"), IsEmpty());
  EXPECT_THAT(IsValidPortName("8080"), ElementsAre("must contain at least one letter (a-z)"));
  EXPECT_THAT(IsValidIP("::1"), IsEmpty());
  EXPECT_THAT(IsValidIP("10.0.0.256"), Not(IsEmpty()));
}

}  // namespace
}  // namespace kubelet::api
