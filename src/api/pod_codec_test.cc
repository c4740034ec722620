#include "api/pod_codec.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kWebYaml[] = R"(# A static pod serving HTTP.
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: kube-system
  labels:
    app: web
  annotations:
    note: "yes"
spec:
  hostNetwork: true
  priorityClassName: system-node-critical
  volumes:
  - name: data
    hostPath:
      path: /var/lib/web
      type: DirectoryOrCreate
  - name: scratch
    emptyDir:
      medium: Memory
      sizeLimit: 64Mi
  - name: info
    downwardAPI:
      defaultMode: 0644
      items:
      - path: labels
        fieldRef:
          fieldPath: metadata.labels
  - name: nfs
    nfs:
      server: 10.0.0.1
      path: /exports
  containers:
  - name: httpd
    image: docker.io/library/busybox:1.36
    command: ["sh", "-c"]
    args:
    - |
      httpd -f -p 8080
    ports:
    - containerPort: 8080
      name: http
      protocol: TCP
    env:
    - name: POD_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    - name: MEM
      valueFrom:
        resourceFieldRef:
          resource: limits.memory
          divisor: 1Mi
    resources:
      requests:
        cpu: 0.5
        memory: 1e3
      limits:
        memory: "128Mi"
    volumeMounts:
    - name: data
      mountPath: /data
      readOnly: yes
    livenessProbe:
      httpGet:
        path: /healthz
        port: http
      initialDelaySeconds: 5
    readinessProbe:
      tcpSocket:
        port: 8080
    securityContext:
      capabilities:
        add: [NET_ADMIN]
      privileged: false
  tolerations:
  - operator: Exists
    effect: NoExecute
    tolerationSeconds: 300
)";

Pod MustDecode(std::string_view data) {
  auto pod = DecodePod(data);
  EXPECT_TRUE(pod.ok()) << pod.status();
  return pod.ok() ? *pod : Pod();
}

TEST(PodCodec, DecodesYamlManifest) {
  std::vector<std::string> unknown;
  auto pod_or = DecodePod(kWebYaml, &unknown);
  ASSERT_TRUE(pod_or.ok()) << pod_or.status();
  const Pod& pod = *pod_or;
  EXPECT_TRUE(unknown.empty());
  EXPECT_EQ(pod.kind, "");  // TypeMeta dropped, as by the internal conversion
  EXPECT_EQ(pod.metadata.name, "web");
  EXPECT_EQ(pod.metadata.namespace_, "kube-system");
  EXPECT_EQ(pod.metadata.labels.at("app"), "web");
  EXPECT_EQ(pod.metadata.annotations.at("note"), "yes");
  EXPECT_TRUE(pod.spec.host_network);
  ASSERT_EQ(pod.spec.volumes.size(), 4u);
  EXPECT_EQ(pod.spec.volumes[0].host_path->path, "/var/lib/web");
  EXPECT_EQ(*pod.spec.volumes[0].host_path->type, "DirectoryOrCreate");
  EXPECT_EQ(pod.spec.volumes[1].empty_dir->medium, "Memory");
  EXPECT_EQ(pod.spec.volumes[1].empty_dir->size_limit->Value(), 64 << 20);
  EXPECT_EQ(*pod.spec.volumes[2].downward_api->default_mode, 0644);  // YAML 1.1 octal
  EXPECT_EQ(pod.spec.volumes[2].downward_api->items[0].field_ref->field_path, "metadata.labels");
  EXPECT_EQ(pod.spec.volumes[3].other_sources.at("nfs").json,
            R"({"path":"/exports","server":"10.0.0.1"})");
  ASSERT_EQ(pod.spec.containers.size(), 1u);
  const Container& c = pod.spec.containers[0];
  EXPECT_EQ(c.name, "httpd");
  EXPECT_THAT(c.command, ElementsAre("sh", "-c"));
  EXPECT_THAT(c.args, ElementsAre("httpd -f -p 8080\n"));
  EXPECT_EQ(c.ports[0].container_port, 8080);
  EXPECT_EQ(c.ports[0].name, "http");
  EXPECT_EQ(c.env[0].value_from->field_ref->field_path, "metadata.name");
  EXPECT_EQ(c.env[1].value_from->resource_field_ref->divisor.String(), "1Mi");
  EXPECT_EQ(c.resources.requests.at("cpu").MilliValue(), 500);
  EXPECT_EQ(c.resources.requests.at("memory").Value(), 1000);
  EXPECT_EQ(c.resources.limits.at("memory").Value(), 128 << 20);
  EXPECT_TRUE(c.volume_mounts[0].read_only);  // "yes" is a YAML 1.1 boolean
  EXPECT_EQ(c.liveness_probe->http_get->port, IntOrString::FromString("http"));
  EXPECT_EQ(c.liveness_probe->initial_delay_seconds, 5);
  EXPECT_EQ(c.readiness_probe->tcp_socket->port, IntOrString::FromInt(8080));
  EXPECT_THAT(c.security_context->capabilities->add, ElementsAre("NET_ADMIN"));
  EXPECT_EQ(c.security_context->privileged, false);
  ASSERT_EQ(pod.spec.tolerations.size(), 1u);
  EXPECT_EQ(pod.spec.tolerations[0].operator_, "Exists");
  EXPECT_EQ(*pod.spec.tolerations[0].toleration_seconds, 300);
}

TEST(PodCodec, DecodesJson) {
  Pod pod = MustDecode(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "j", "uid": "123", "creationTimestamp": "2023-01-02T03:04:05Z",
                 "deletionTimestamp": "2023-01-02T03:05:05.5+01:00"},
    "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
             "livenessProbe": {"grpc": {"port": 9000}}}],
             "serviceAccount": "legacy-sa", "priority": 10},
    "status": {"phase": "Running", "podIP": "10.0.0.5",
               "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null}],
               "containerStatuses": [{"name": "c", "ready": true, "restartCount": 2,
                   "image": "nginx", "imageID": "sha", "containerID": "containerd://abc",
                   "state": {"running": {"startedAt": "2023-01-02T03:04:06Z"}},
                   "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}
  })");
  EXPECT_EQ(pod.metadata.uid, "123");
  EXPECT_EQ(pod.metadata.creation_timestamp.RFC3339(), "2023-01-02T03:04:05Z");
  EXPECT_EQ(pod.metadata.deletion_timestamp->RFC3339(), "2023-01-02T02:05:05Z");
  EXPECT_EQ(pod.spec.service_account_name, "legacy-sa");  // deprecated field folded in
  EXPECT_EQ(*pod.spec.priority, 10);
  EXPECT_EQ(pod.spec.containers[0].liveness_probe->grpc->port, 9000);
  EXPECT_FALSE(pod.spec.containers[0].liveness_probe->grpc->service.has_value());
  EXPECT_EQ(pod.status.phase, "Running");
  EXPECT_TRUE(pod.status.conditions[0].last_probe_time.IsZero());
  const ContainerStatus& cs = pod.status.container_statuses[0];
  EXPECT_TRUE(cs.ready);
  EXPECT_EQ(cs.restart_count, 2);
  EXPECT_EQ(cs.state.running->started_at.RFC3339(), "2023-01-02T03:04:06Z");
  EXPECT_EQ(cs.last_state.terminated->exit_code, 137);
  EXPECT_EQ(cs.last_state.terminated->reason, "OOMKilled");
}

TEST(PodCodec, WrongTypesNameTheFieldPath) {
  auto bad = DecodePod(R"(apiVersion: v1
kind: Pod
metadata: {name: x}
spec:
  containers:
  - name: c
    image: i
    ports:
    - containerPort: "abc"
)");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "spec.containers[0].ports[0].containerPort: expected integer, got \"abc\"");

  struct Case {
    const char* doc;
    const char* message;
  } cases[] = {
      {R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":5}})",
       "metadata.name: expected string, got 5"},
      {R"({"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"a":true}}})",
       "metadata.labels[a]: expected string, got true"},
      {R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":{}}})",
       "spec.containers: expected array, got object"},
      {R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"ports":[{"containerPort":1.5}]}]}})",
       "spec.containers[0].ports[0].containerPort: expected integer, got 1.5"},
      {R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"ports":[{"containerPort":3000000000}]}]}})",
       "spec.containers[0].ports[0].containerPort: value 3000000000 out of range for int32"},
      {R"({"apiVersion":"v1","kind":"Pod","spec":{"hostNetwork":"true"}})",
       "spec.hostNetwork: expected boolean, got \"true\""},
      {R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"resources":{"limits":{"cpu":"1x"}}}]}})",
       "spec.containers[0].resources.limits[cpu]: unable to parse quantity's suffix"},
      {R"({"apiVersion":"v1","kind":"Pod","metadata":{"creationTimestamp":"yesterday"}})",
       "metadata.creationTimestamp: parsing time"},
      {R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"livenessProbe":{"httpGet":{"port":true}}}]}})",
       "spec.containers[0].livenessProbe.httpGet.port: expected integer or string, got true"},
  };
  for (const auto& c : cases) {
    auto pod = DecodePod(c.doc);
    ASSERT_FALSE(pod.ok()) << c.doc;
    EXPECT_THAT(std::string(pod.status().message()), StartsWith(c.message)) << c.doc;
  }
}

TEST(PodCodec, YamlScalarTypingFollowsGoYaml) {
  // Unquoted numbers are numbers: a string field rejects them, as upstream does.
  auto bad = DecodePod(
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n"
      "    env:\n    - name: PORT\n      value: 8080\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "spec.containers[0].env[0].value: expected string, got 8080");
  // Quoted scalars are strings even when they look like numbers or booleans.
  Pod pod = MustDecode(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: {a: \"true\", b: '0644'}\n"
      "spec:\n  containers:\n  - name: c\n    env:\n    - {name: PORT, value: \"8080\"}\n"
      "    ports: [{containerPort: 0x1F90}, {containerPort: 1_000}, {containerPort: 8.0e1}]\n"
      "    stdin: on\n    tty: off\n");
  EXPECT_EQ(pod.metadata.labels.at("a"), "true");
  EXPECT_EQ(pod.metadata.labels.at("b"), "0644");
  EXPECT_EQ(pod.spec.containers[0].env[0].value, "8080");
  EXPECT_EQ(pod.spec.containers[0].ports[0].container_port, 8080);
  EXPECT_EQ(pod.spec.containers[0].ports[1].container_port, 1000);
  EXPECT_EQ(pod.spec.containers[0].ports[2].container_port, 80);
  EXPECT_TRUE(pod.spec.containers[0].stdin_);
  EXPECT_FALSE(pod.spec.containers[0].tty);
}

TEST(PodCodec, NullMeansAbsent) {
  Pod pod = MustDecode(R"({"apiVersion":"v1","kind":"Pod","metadata":null,
    "spec":{"containers":[null,{"name":"c","resources":null,"securityContext":null,
            "args":null,"ports":[{"containerPort":80,"hostPort":null}]}],
            "terminationGracePeriodSeconds":null}})");
  ASSERT_EQ(pod.spec.containers.size(), 2u);
  EXPECT_EQ(pod.spec.containers[0], Container());
  EXPECT_FALSE(pod.spec.containers[1].security_context.has_value());
  EXPECT_FALSE(pod.spec.termination_grace_period_seconds.has_value());
  EXPECT_EQ(pod.spec.containers[1].ports[0].host_port, 0);
}

TEST(PodCodec, UnknownFieldsAreIgnoredAndReported) {
  std::vector<std::string> unknown;
  auto pod = DecodePod(R"(apiVersion: v1
kind: Pod
metadata:
  name: u
  clusterName: old
spec:
  bogus: 1
  containers:
  - name: c
    imagePullPolicy: Always
    lifecycle:
      preStop:
        sleep: {seconds: 5}
status:
  whatever: {}
)",
                       &unknown);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_THAT(unknown,
              ElementsAre("metadata.clusterName", "spec.bogus",
                          "spec.containers[0].lifecycle.preStop.sleep", "status.whatever"));
  EXPECT_EQ(pod->spec.containers[0].image_pull_policy, "Always");
  EXPECT_TRUE(pod->spec.containers[0].lifecycle->pre_stop.has_value());
}

TEST(PodCodec, KindAndApiVersionChecks) {
  auto missing_kind = DecodePod("apiVersion: v1\nmetadata: {name: a}\n");
  ASSERT_FALSE(missing_kind.ok());
  EXPECT_EQ(missing_kind.status().message(),
            "Object 'Kind' is missing in '{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"}}'");

  auto missing_version = DecodePod("kind: Pod\n");
  ASSERT_FALSE(missing_version.ok());
  EXPECT_EQ(missing_version.status().message(),
            "Object 'apiVersion' is missing in '{\"kind\":\"Pod\"}'");

  auto wrong_version = DecodePod("apiVersion: apps/v1\nkind: Pod\n");
  ASSERT_FALSE(wrong_version.ok());
  EXPECT_EQ(wrong_version.status().message(),
            "no kind \"Pod\" is registered for version \"apps/v1\" in scheme "
            "\"pkg/api/legacyscheme/scheme.go:30\"");

  auto service = DecodePod("apiVersion: v1\nkind: Service\n");
  ASSERT_FALSE(service.ok());
  EXPECT_THAT(std::string(service.status().message()), StartsWith("invalid pod:"));

  auto list_as_pod = DecodePod("apiVersion: v1\nkind: PodList\nitems: []\n");
  EXPECT_FALSE(list_as_pod.ok());

  auto empty = DecodePod("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), "Object 'Kind' is missing in 'null'");

  auto array = DecodePod("[1, 2]");
  ASSERT_FALSE(array.ok());
  EXPECT_THAT(std::string(array.status().message()),
              StartsWith("couldn't get version/kind; json parse error: json: cannot unmarshal "
                         "array"));
}

TEST(PodCodec, DecodesPodLists) {
  auto pods = DecodePodOrPodList(R"({"apiVersion":"v1","kind":"PodList","metadata":{},
    "items":[{"metadata":{"name":"a"}},{"kind":"Pod","apiVersion":"v1","metadata":{"name":"b"}}]})");
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ((*pods)[0].metadata.name, "a");
  EXPECT_EQ((*pods)[1].metadata.name, "b");
  EXPECT_EQ((*pods)[1].kind, "");

  auto single = DecodePodOrPodList("apiVersion: v1\nkind: Pod\nmetadata: {name: s}\n");
  ASSERT_TRUE(single.ok());
  ASSERT_EQ(single->size(), 1u);

  auto empty = DecodePodOrPodList("apiVersion: v1\nkind: PodList\n");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());

  // Upstream's http source rejects the generic List kind.
  auto list = DecodePodOrPodList("apiVersion: v1\nkind: List\nitems: []\n");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(std::string(list.status().message()), HasSubstr("invalid pods list"));

  auto bad_item = DecodePodOrPodList(
      R"({"apiVersion":"v1","kind":"PodList","items":[{"spec":{"nodeName":1}}]})");
  ASSERT_FALSE(bad_item.ok());
  EXPECT_EQ(bad_item.status().message(), "items[0].spec.nodeName: expected string, got 1");
}

TEST(PodCodec, EncodesUpstreamShape) {
  Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  Container c;
  c.name = "c";
  c.image = "busybox";
  ContainerPort port;
  port.container_port = 80;
  port.protocol = "TCP";
  c.ports.push_back(port);
  pod.spec.containers.push_back(c);
  pod.spec.enable_service_links = true;
  GRPCAction grpc;
  grpc.port = 9000;
  Probe probe;
  probe.grpc = grpc;
  pod.spec.containers[0].readiness_probe = probe;
  ContainerStatus cs;
  cs.name = "c";
  cs.state.waiting = ContainerStateWaiting{"ContainerCreating", ""};
  pod.status.container_statuses.push_back(cs);
  pod.status.phase = "Pending";
  pod.status.conditions.push_back(
      PodCondition{"Ready", "False", Time(), Time::FromUnix(1672628645), "", ""});
  EXPECT_EQ(
      EncodePodJson(pod),
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default",)"
      R"("creationTimestamp":null},"spec":{"containers":[{"name":"c","image":"busybox",)"
      R"("ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{},)"
      R"("readinessProbe":{"grpc":{"port":9000,"service":null}}}],)"
      R"("enableServiceLinks":true},"status":{"phase":"Pending","conditions":[{"type":"Ready",)"
      R"("status":"False","lastProbeTime":null,"lastTransitionTime":"2023-01-02T03:04:05Z"}],)"
      R"("containerStatuses":[{"name":"c","state":{"waiting":{"reason":"ContainerCreating"}},)"
      R"("lastState":{},"ready":false,"restartCount":0,"image":"","imageID":""}]}})");
}

TEST(PodCodec, EncodesPodListAndEscapesLikeGo) {
  Pod pod;
  pod.metadata.name = "a";
  pod.metadata.annotations["html"] = "<b>&</b>";
  pod.metadata.annotations["ctl"] = "tab\tnl\nbell\x07 sep\xE2\x80\xA8 bad\xFF";
  const std::string list = EncodePodListJson({pod});
  EXPECT_THAT(list,
              StartsWith(R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[)"
                         R"({"metadata":{"name":"a","creationTimestamp":null,"annotations":)"));
  EXPECT_THAT(list, HasSubstr(R"("ctl":"tab\tnl\nbell\u0007 sep\u2028 bad\ufffd")"));
  EXPECT_THAT(list, HasSubstr(R"("html":"\u003cb\u003e\u0026\u003c/b\u003e")"));
  EXPECT_EQ(EncodePodListJson({}),
            R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":null})");
}

TEST(PodCodec, RoundTripsThroughJson) {
  Pod pod = MustDecode(kWebYaml);
  pod.status.phase = "Running";
  pod.status.start_time = Time::FromUnix(1700000000);
  pod.status.pod_ips.push_back(PodIP{"10.1.2.3"});
  ContainerStatus cs;
  cs.name = "httpd";
  cs.started = true;
  cs.state.terminated = ContainerStateTerminated{
      1, 9, "Error", "boom", Time::FromUnix(1), Time::FromUnix(2), "containerd://x"};
  cs.allocated_resources["cpu"] = *Quantity::Parse("500m");
  pod.status.container_statuses.push_back(cs);

  const std::string json = EncodePodJson(pod);
  auto again = DecodePod(json);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << json;
  EXPECT_EQ(*again, pod);
  EXPECT_EQ(EncodePodJson(*again), json);

  // YAML of the same content decodes to the same object.
  auto list = EncodePodListJson({pod, pod});
  auto pods = DecodePodOrPodList(list);
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ((*pods)[1], pod);
}

TEST(PodCodec, NeverCrashesOnHostileInput) {
  std::vector<std::string> inputs = {
      "\x00\x01\x02",
      "{",
      "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"spec\": {\"containers\": [",
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: [unterminated\n",
      ": : :",
      "- - - -",
      "apiVersion: v1\nkind: Pod\nmetadata: &a\n  name: *a\n",
      "!!binary AAAA",
      "apiVersion: v1\nkind: Pod\nspec: {hostNetwork: .inf}\n",
      "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    ? [complex]\n    : key\n",
      "\xEF\xBB\xBF{\"kind\":\"Pod\"}",
      std::string(100000, '['),
      std::string(100000, '{'),
      std::string(50000, '-') + " x",
  };
  // Deep nesting in YAML block style and in an opaque field.
  std::string deep_yaml = "apiVersion: v1\nkind: Pod\nspec:\n  affinity:\n";
  for (int i = 0; i < 3000; ++i) deep_yaml += std::string(2 * i + 4, ' ') + "a:\n";
  inputs.push_back(deep_yaml);
  std::string deep_json = R"({"apiVersion":"v1","kind":"Pod","spec":{"affinity":)";
  for (int i = 0; i < 5000; ++i) deep_json += "{\"a\":";
  inputs.push_back(deep_json);
  // Alias bomb ("billion laughs").
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 0; i < 12; ++i) {
    bomb += "b" + std::to_string(i) + ": &b" + std::to_string(i) + " [";
    const std::string prev = i == 0 ? "*a" : "*b" + std::to_string(i - 1);
    for (int j = 0; j < 10; ++j) bomb += (j ? ", " : "") + prev;
    bomb += "]\n";
  }
  inputs.push_back(bomb);
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto pod = DecodePod(inputs[i]);
    EXPECT_FALSE(pod.ok()) << "input " << i;
    auto pods = DecodePodOrPodList(inputs[i]);
    EXPECT_FALSE(pods.ok()) << "input " << i;
  }
  // Truncations of a valid manifest never crash (most fail, some prefixes are valid).
  const std::string full = kWebYaml;
  for (size_t n = 0; n < full.size(); n += 7) {
    auto pod = DecodePod(full.substr(0, n));
    (void)pod;
  }
}

}  // namespace
}  // namespace kubelet::api
