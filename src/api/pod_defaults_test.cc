#include "api/pod_defaults.h"

#include <string>

#include "api/pod_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::api {
namespace {

Pod Decode(std::string_view yaml) {
  auto pod = DecodePod(yaml);
  EXPECT_TRUE(pod.ok()) << pod.status();
  return pod.ok() ? *pod : Pod();
}

Quantity Q(std::string_view s) { return *Quantity::Parse(s); }

TEST(PodDefaults, SpecDefaults) {
  Pod pod = Decode("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n    image: x\n");
  SetDefaultsPod(&pod);
  EXPECT_EQ(pod.spec.restart_policy, "Always");
  EXPECT_EQ(pod.spec.dns_policy, "ClusterFirst");
  EXPECT_EQ(pod.spec.termination_grace_period_seconds, 30);
  EXPECT_EQ(pod.spec.scheduler_name, "default-scheduler");
  EXPECT_EQ(pod.spec.security_context, PodSecurityContext{});
  EXPECT_EQ(pod.spec.enable_service_links, true);
  const Container& c = pod.spec.containers[0];
  EXPECT_EQ(c.termination_message_path, "/dev/termination-log");
  EXPECT_EQ(c.termination_message_policy, "File");
  EXPECT_EQ(c.image_pull_policy, "Always");
  EXPECT_TRUE(c.resources.requests.empty());
}

TEST(PodDefaults, ExplicitValuesAreKept) {
  Pod pod = Decode(R"(apiVersion: v1
kind: Pod
spec:
  restartPolicy: Never
  dnsPolicy: Default
  terminationGracePeriodSeconds: 0
  schedulerName: mine
  enableServiceLinks: false
  securityContext: {runAsUser: 1000}
  containers:
  - name: c
    image: x
    imagePullPolicy: Never
    terminationMessagePath: /tmp/t
    terminationMessagePolicy: FallbackToLogsOnError
)");
  const Pod before = pod;
  SetDefaultsPod(&pod);
  EXPECT_EQ(pod, before);
}

TEST(PodDefaults, ImagePullPolicyTable) {
  struct Case {
    const char* image;
    const char* policy;
  } cases[] = {
      {"busybox", "Always"},
      {"busybox:latest", "Always"},
      {"busybox:1.36", "IfNotPresent"},
      {"docker.io/library/busybox:1.36", "IfNotPresent"},
      {"localhost:5000/foo", "Always"},
      {"localhost:5000/foo:v1", "IfNotPresent"},
      {"registry.k8s.io/"
       "pause@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
       "IfNotPresent"},
      {"pause:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
       "Always"},
      {"Busybox", "IfNotPresent"},  // invalid reference: parse error -> IfNotPresent
      {"", "IfNotPresent"},
      {"repo/image:", "IfNotPresent"},
  };
  for (const auto& c : cases) EXPECT_EQ(DefaultImagePullPolicy(c.image), c.policy) << c.image;
}

TEST(PodDefaults, ContainerPortsEnvProbesAndHandlers) {
  Pod pod = Decode(R"(apiVersion: v1
kind: Pod
spec:
  initContainers:
  - name: i
    image: x:1
    ports: [{containerPort: 53, protocol: UDP}, {containerPort: 54}]
  containers:
  - name: c
    image: x:1
    ports: [{containerPort: 80}]
    env:
    - name: NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    livenessProbe:
      httpGet: {port: 80}
    readinessProbe:
      grpc: {port: 9000}
    startupProbe:
      exec: {command: [/bin/true]}
      periodSeconds: 3
    lifecycle:
      preStop:
        httpGet: {port: 8080, path: /quit}
      postStart:
        httpGet: {port: 8080}
)");
  SetDefaultsPod(&pod);
  EXPECT_EQ(pod.spec.init_containers[0].ports[0].protocol, "UDP");
  EXPECT_EQ(pod.spec.init_containers[0].ports[1].protocol, "TCP");
  EXPECT_EQ(pod.spec.init_containers[0].image_pull_policy, "IfNotPresent");
  const Container& c = pod.spec.containers[0];
  EXPECT_EQ(c.ports[0].protocol, "TCP");
  EXPECT_EQ(c.ports[0].host_port, 0);
  EXPECT_EQ(c.env[0].value_from->field_ref->api_version, "v1");
  const Probe& l = *c.liveness_probe;
  EXPECT_EQ(l.timeout_seconds, 1);
  EXPECT_EQ(l.period_seconds, 10);
  EXPECT_EQ(l.success_threshold, 1);
  EXPECT_EQ(l.failure_threshold, 3);
  EXPECT_EQ(l.initial_delay_seconds, 0);
  EXPECT_EQ(l.http_get->path, "/");
  EXPECT_EQ(l.http_get->scheme, "HTTP");
  EXPECT_EQ(c.readiness_probe->grpc->service, "");
  EXPECT_EQ(c.startup_probe->period_seconds, 3);
  EXPECT_EQ(c.lifecycle->pre_stop->http_get->path, "/quit");
  EXPECT_EQ(c.lifecycle->pre_stop->http_get->scheme, "HTTP");
  EXPECT_EQ(c.lifecycle->post_start->http_get->path, "/");
}

TEST(PodDefaults, RequestsDefaultToLimitsAndRoundToMilli) {
  Pod pod = Decode(R"(apiVersion: v1
kind: Pod
spec:
  initContainers:
  - name: i
    image: x
    resources:
      limits: {cpu: 100m}
  containers:
  - name: c
    image: x
    resources:
      limits: {cpu: "1", memory: 1Gi, example.com/gpu: 1}
      requests: {memory: 512Mi, cpu: 0.0001}
  - name: d
    image: x
  overhead: {cpu: 1n}
)");
  SetDefaultsPod(&pod);
  const auto& r = pod.spec.containers[0].resources;
  EXPECT_EQ(r.requests.at("cpu").String(), "1m");  // rounded up to milli precision
  EXPECT_EQ(r.requests.at("memory").String(), "512Mi");
  EXPECT_EQ(r.requests.at("example.com/gpu").String(), "1");
  EXPECT_EQ(r.requests.size(), 3u);
  EXPECT_EQ(pod.spec.init_containers[0].resources.requests.at("cpu"), Q("100m"));
  EXPECT_TRUE(pod.spec.containers[1].resources.requests.empty());
  EXPECT_EQ(pod.spec.overhead.at("cpu").String(), "1m");
}

TEST(PodDefaults, HostNetworkCopiesContainerPortToHostPort) {
  Pod pod = Decode(R"(apiVersion: v1
kind: Pod
spec:
  hostNetwork: true
  initContainers:
  - {name: i, image: x, ports: [{containerPort: 81}]}
  containers:
  - {name: c, image: x, ports: [{containerPort: 80}, {containerPort: 90, hostPort: 91}]}
)");
  SetDefaultsPod(&pod);
  EXPECT_EQ(pod.spec.containers[0].ports[0].host_port, 80);
  EXPECT_EQ(pod.spec.containers[0].ports[1].host_port, 91);
  EXPECT_EQ(pod.spec.init_containers[0].ports[0].host_port, 81);
}

TEST(PodDefaults, Volumes) {
  Pod pod = Decode(R"(apiVersion: v1
kind: Pod
spec:
  volumes:
  - name: none
  - name: hp
    hostPath: {path: /x}
  - name: sec
    secret: {secretName: s}
  - name: cm
    configMap: {name: c, defaultMode: 0400}
  - name: dapi
    downwardAPI:
      items: [{path: name, fieldRef: {fieldPath: metadata.name}}]
  - name: proj
    projected:
      sources:
      - serviceAccountToken: {path: token}
      - downwardAPI: {items: [{path: l, fieldRef: {fieldPath: metadata.labels}}]}
  - name: nfs
    nfs: {server: s, path: /p}
  containers: [{name: c, image: x}]
)");
  SetDefaultsPod(&pod);
  const auto& v = pod.spec.volumes;
  EXPECT_TRUE(v[0].empty_dir.has_value());
  EXPECT_EQ(v[1].host_path->type, "");
  EXPECT_EQ(v[2].secret->default_mode, 0644);
  EXPECT_EQ(v[3].config_map->default_mode, 0400);
  EXPECT_EQ(v[4].downward_api->default_mode, 0644);
  EXPECT_EQ(v[4].downward_api->items[0].field_ref->api_version, "v1");
  EXPECT_EQ(v[5].projected->default_mode, 0644);
  EXPECT_EQ(v[5].projected->sources[0].service_account_token->expiration_seconds, 3600);
  EXPECT_EQ(v[5].projected->sources[1].downward_api->items[0].field_ref->api_version, "v1");
  EXPECT_FALSE(v[6].empty_dir.has_value());
}

TEST(PodDefaults, IsIdempotentAndEncodesLikeUpstream) {
  Pod pod = Decode(R"(apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: httpd
    image: docker.io/library/busybox:1.36
    ports: [{containerPort: 8080, name: http}]
)");
  SetDefaultsPod(&pod);
  Pod twice = pod;
  SetDefaultsPod(&twice);
  EXPECT_EQ(twice, pod);
  EXPECT_EQ(EncodePodJson(pod),
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web","creationTimestamp":null},)"
            R"("spec":{"containers":[{"name":"httpd","image":"docker.io/library/busybox:1.36",)"
            R"("ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],"resources":{},)"
            R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",)"
            R"("imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always",)"
            R"("terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},)"
            R"("schedulerName":"default-scheduler","enableServiceLinks":true},"status":{}})");
}

}  // namespace
}  // namespace kubelet::api
