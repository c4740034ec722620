#include "api/pod_codec.h"

#include <cstring>
#include <string>
#include <vector>

#include "api/pod_fields.h"
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

TEST(PodCodec, ParsedDocumentsDecodeAsTheirText) {
  const std::string text = R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"d","namespace":"ns","uid":"u1","labels":{"a":"b"},
                "managedFields":[{"manager":"m"}]},
    "spec":{"containers":[{"name":"c","image":"img","ports":[{"containerPort":8080}]}],
            "nodeName":"n1"},
    "status":{"phase":"Pending"}})";
  absl::StatusOr<Pod> from_text = DecodePod(text);
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  absl::StatusOr<Pod> from_doc = DecodePodDocument(nlohmann::json::parse(text));
  ASSERT_TRUE(from_doc.ok()) << from_doc.status();
  EXPECT_EQ(EncodePodJson(*from_doc), EncodePodJson(*from_text));
  EXPECT_EQ(from_doc->spec.containers[0].ports[0].container_port, 8080);

  // A list's item has no kind or apiVersion: as a list item that reads as a v1 Pod; alone it is
  // refused as its text would be.
  nlohmann::json item = nlohmann::json::parse(text);
  item.erase("kind");
  item.erase("apiVersion");
  absl::StatusOr<Pod> as_item = DecodePodDocument(item, /*list_item=*/true);
  ASSERT_TRUE(as_item.ok()) << as_item.status();
  EXPECT_EQ(EncodePodJson(*as_item), EncodePodJson(*from_text));
  absl::StatusOr<Pod> alone = DecodePodDocument(item);
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().message(), DecodePod(item.dump()).status().message());

  // What is there still counts: another kind, or a wrong type, is refused even as a list item.
  item["kind"] = "Service";
  EXPECT_THAT(DecodePodDocument(item, true).status().message(), testing::HasSubstr("is not a Pod"));
  item["kind"] = 7;
  EXPECT_FALSE(DecodePodDocument(item, true).ok());
  item["kind"] = "Pod";
  item["spec"]["containers"][0]["ports"][0]["containerPort"] = "abc";
  EXPECT_THAT(DecodePodDocument(item, true).status().message(),
              testing::HasSubstr("spec.containers[0].ports[0].containerPort"));
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

// A pod using every member the codec knows, as a static pod manifest (YAML, members in no
// particular order, opaque fields with unsorted keys, the deprecated serviceAccount, managedFields
// and an unknown metadata member that are not kept).
constexpr char kRichYaml[] = R"g(apiVersion: v1
kind: Pod
metadata:
  name: rich
  generateName: rich-
  namespace: kube-system
  selfLink: /api/v1/namespaces/kube-system/pods/rich
  uid: 0b6c9a1e-1111-2222-3333-444455556666
  resourceVersion: "12345"
  generation: 3
  creationTimestamp: "2023-01-02T03:04:05Z"
  deletionTimestamp: "2023-01-02T03:14:05Z"
  deletionGracePeriodSeconds: 30
  labels: {app: rich, tier: "<web>&"}
  annotations:
    kubernetes.io/config.source: file
    note: "tab\there \u2028 sep"
  ownerReferences:
  - {apiVersion: v1, kind: Node, name: n1, uid: u-1, controller: true}
  - {apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u-2, blockOwnerDeletion: false}
  finalizers: [example.com/f]
  managedFields:
  - {manager: kubectl, operation: Update}
  clusterName: dropped
spec:
  volumes:
  - name: hp
    hostPath: {path: /var/lib/x, type: DirectoryOrCreate}
  - name: hp2
    hostPath: {path: /tmp}
  - name: ed
    emptyDir: {medium: Memory, sizeLimit: 64Mi}
  - name: ed2
    emptyDir: {}
  - name: sec
    secret:
      secretName: s1
      items: [{key: k, path: p, mode: 0400}]
      defaultMode: 0644
      optional: true
  - name: pvc
    persistentVolumeClaim: {claimName: c1, readOnly: true}
  - name: dapi
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - path: cpu
        resourceFieldRef: {containerName: main, resource: limits.cpu, divisor: 1m}
        mode: 0444
      - path: mem
        resourceFieldRef: {resource: limits.memory}
      defaultMode: 420
  - name: cm
    configMap: {name: cm1, items: [{key: a, path: b}], optional: false}
  - name: proj
    projected:
      defaultMode: 0440
      sources:
      - secret: {name: s2, items: [{key: x, path: yy}], optional: true}
      - downwardAPI: {items: [{path: name, fieldRef: {apiVersion: v1, fieldPath: metadata.name}}]}
      - configMap: {name: cm2}
      - serviceAccountToken: {audience: api, expirationSeconds: 3600, path: token}
  - name: proj-empty
    projected: {sources: []}
  - name: nfs
    nfs: {server: 10.0.0.1, path: /exports, readOnly: true}
  - name: csi
    csi: {driver: d.example.com, volumeAttributes: {z: "1", a: "2"}, fsType: ext4}
  - name: eph
    ephemeral:
      volumeClaimTemplate:
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  initContainers:
  - name: init
    image: busybox
    command: [sh, -c, "true"]
    restartPolicy: Always
    resources: {}
  containers:
  - name: main
    image: nginx:1.25
    command: [nginx]
    args: [-g, "daemon off;"]
    workingDir: /srv
    ports:
    - {name: http, containerPort: 80, protocol: TCP}
    - {containerPort: 53, hostPort: 5353, protocol: UDP, hostIP: 127.0.0.1}
    envFrom:
    - {prefix: CM_, configMapRef: {name: cm1, optional: true}}
    - secretRef: {name: s1}
    env:
    - {name: A, value: "1"}
    - {name: EMPTY}
    - name: POD
      valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}
    - name: LIM
      valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}
    - name: CMK
      valueFrom: {configMapKeyRef: {name: cm1, key: k, optional: false}}
    - name: SK
      valueFrom: {secretKeyRef: {name: s1, key: k}}
    resources:
      limits: {cpu: "2", memory: 1Gi, hugepages-2Mi: 4Mi}
      requests: {cpu: 250m, memory: 0.5Gi, ephemeral-storage: 1e9}
      claims: [{name: gpu}]
    resizePolicy:
    - {resourceName: cpu, restartPolicy: NotRequired}
    volumeMounts:
    - {name: hp, mountPath: /x, readOnly: true, subPath: sub, mountPropagation: HostToContainer}
    - {name: ed, mountPath: /y, subPathExpr: $(POD)}
    volumeDevices:
    - {name: blk, devicePath: /dev/xvda}
    livenessProbe:
      httpGet:
        path: /healthz
        port: http
        host: 127.0.0.1
        scheme: HTTPS
        httpHeaders: [{name: X-A, value: b}]
      initialDelaySeconds: 5
      timeoutSeconds: 2
      periodSeconds: 10
      successThreshold: 1
      failureThreshold: 3
      terminationGracePeriodSeconds: 7
    readinessProbe:
      tcpSocket: {port: 8080, host: localhost}
    startupProbe:
      exec: {command: [cat, /tmp/ready]}
    lifecycle:
      postStart:
        exec: {command: [sh, -c, "echo hi"]}
      preStop:
        httpGet: {path: /stop, port: 80}
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: FallbackToLogsOnError
    imagePullPolicy: IfNotPresent
    securityContext:
      capabilities: {add: [NET_ADMIN], drop: [ALL]}
      privileged: false
      seLinuxOptions: {user: u, role: r, type: t, level: s0}
      windowsOptions: {runAsUserName: admin, gmsaCredentialSpecName: g}
      runAsUser: 1000
      runAsGroup: 2000
      runAsNonRoot: true
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
      procMount: Default
      seccompProfile: {type: Localhost, localhostProfile: p.json}
    stdin: true
    stdinOnce: true
    tty: true
  - name: side
    image: busybox
    readinessProbe:
      grpc: {port: 9000, service: health}
    livenessProbe:
      grpc: {port: 9001}
  ephemeralContainers:
  - name: debug
    image: busybox
    targetContainerName: main
    stdin: true
  restartPolicy: Always
  terminationGracePeriodSeconds: 45
  activeDeadlineSeconds: 600
  dnsPolicy: None
  nodeSelector: {kubernetes.io/os: linux, disk: ssd}
  serviceAccount: legacy
  automountServiceAccountToken: false
  nodeName: node-1
  hostNetwork: true
  hostPID: true
  hostIPC: true
  shareProcessNamespace: true
  securityContext:
    seLinuxOptions: {level: "s0:c1"}
    windowsOptions: {hostProcess: false}
    runAsUser: 0
    runAsGroup: 0
    runAsNonRoot: false
    supplementalGroups: [10, 20]
    fsGroup: 2000
    sysctls: [{name: net.core.somaxconn, value: "1024"}]
    fsGroupChangePolicy: OnRootMismatch
    seccompProfile: {type: RuntimeDefault}
  imagePullSecrets: [{name: regcred}, {}]
  hostname: h
  subdomain: sd
  affinity:
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: rich}}}
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{values: [linux], operator: In, key: kubernetes.io/os}]
  schedulerName: default-scheduler
  tolerations:
  - {operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  - {key: k, operator: Equal, value: v, effect: NoSchedule}
  hostAliases:
  - {ip: 10.0.0.2, hostnames: [a.example, b.example]}
  priorityClassName: system-node-critical
  priority: 2000001000
  dnsConfig:
    nameservers: [1.1.1.1]
    searches: [svc.cluster.local]
    options: [{name: ndots, value: "2"}, {name: edns0}]
  readinessGates: [{conditionType: example.com/ready}]
  runtimeClassName: runc
  enableServiceLinks: false
  preemptionPolicy: Never
  overhead: {cpu: 100m, memory: 32Mi}
  topologySpreadConstraints:
  - {whenUnsatisfiable: DoNotSchedule, maxSkew: 1, topologyKey: zone, labelSelector: {matchLabels: {app: rich}}}
  setHostnameAsFQDN: true
  os: {name: linux}
  hostUsers: false
  schedulingGates: [{name: gate}]
  resourceClaims:
  - {name: gpu, source: {resourceClaimName: rc}}
  - {name: other, source: {resourceClaimTemplateName: rct}}
  - {name: none}
status:
  phase: Running
  conditions:
  - {type: Ready, status: "True", lastProbeTime: null, lastTransitionTime: "2023-01-02T03:05:00Z"}
  - {type: PodScheduled, status: "True", lastTransitionTime: "2023-01-02T03:04:05Z", reason: R, message: M}
  message: msg
  reason: rsn
  nominatedNodeName: nn
  hostIP: 192.168.1.1
  hostIPs: [{ip: 192.168.1.1}]
  podIP: 10.0.0.5
  podIPs: [{ip: 10.0.0.5}, {ip: "fd00::5"}]
  startTime: "2023-01-02T03:04:06Z"
  initContainerStatuses:
  - name: init
    state: {terminated: {exitCode: 0, reason: Completed, startedAt: "2023-01-02T03:04:07Z", finishedAt: "2023-01-02T03:04:08Z", containerID: "containerd://i"}}
    lastState: {}
    ready: true
    restartCount: 0
    image: busybox
    imageID: sha256:i
    containerID: containerd://i
    started: false
  containerStatuses:
  - name: main
    state: {running: {startedAt: "2023-01-02T03:04:09Z"}}
    lastState: {terminated: {exitCode: 137, signal: 9, reason: OOMKilled, message: boom, containerID: "containerd://old"}}
    ready: true
    restartCount: 2
    image: nginx:1.25
    imageID: sha256:n
    containerID: containerd://m
    started: true
    allocatedResources: {cpu: 250m, memory: 512Mi}
    resources:
      limits: {cpu: "2"}
      requests: {cpu: 250m}
  - name: side
    state: {waiting: {reason: CrashLoopBackOff, message: "back-off 10s"}}
    lastState: {}
    ready: false
    restartCount: 0
    image: busybox
    imageID: ""
  qosClass: Burstable
  ephemeralContainerStatuses:
  - {name: debug, state: {}, lastState: {}, ready: false, restartCount: 0, image: busybox, imageID: ""}
  resize: InProgress
  resourceClaimStatuses:
  - {name: gpu, resourceClaimName: rc-1}
)g";

// EncodePodJson / EncodeContainerJson of kRichYaml as the hand-written Pod codec wrote them before
// the move onto the declarative codec (captured from that code): the bytes a static pod's hash
// and the container hash are computed from, so they must never change.
constexpr char kRichGoldenJson[] =
    R"g({"kind":"Pod","apiVersion":"v1","metadata":{"name":"rich","generateName":"rich-","na)g"
    R"g(mespace":"kube-system","selfLink":"/api/v1/namespaces/kube-system/pods/rich","uid":")g"
    R"g(0b6c9a1e-1111-2222-3333-444455556666","resourceVersion":"12345","generation":3,"crea)g"
    R"g(tionTimestamp":"2023-01-02T03:04:05Z","deletionTimestamp":"2023-01-02T03:14:05Z","de)g"
    R"g(letionGracePeriodSeconds":30,"labels":{"app":"rich","tier":"\u003cweb\u003e\u0026"},)g"
    R"g("annotations":{"kubernetes.io/config.source":"file","note":"tab\there \u2028 sep"},")g"
    R"g(ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"u-1","controll)g"
    R"g(er":true},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u-2","block)g"
    R"g(OwnerDeletion":false}],"finalizers":["example.com/f"]},"spec":{"volumes":[{"name":"h)g"
    R"g(p","hostPath":{"path":"/var/lib/x","type":"DirectoryOrCreate"}},{"name":"hp2","hostP)g"
    R"g(ath":{"path":"/tmp"}},{"name":"ed","emptyDir":{"medium":"Memory","sizeLimit":"64Mi"})g"
    R"g(},{"name":"ed2","emptyDir":{}},{"name":"sec","secret":{"secretName":"s1","items":[{")g"
    R"g(key":"k","path":"p","mode":256}],"defaultMode":420,"optional":true}},{"name":"pvc",")g"
    R"g(persistentVolumeClaim":{"claimName":"c1","readOnly":true}},{"name":"dapi","downwardA)g"
    R"g(PI":{"items":[{"path":"labels","fieldRef":{"fieldPath":"metadata.labels"}},{"path":")g"
    R"g(cpu","resourceFieldRef":{"containerName":"main","resource":"limits.cpu","divisor":"1)g"
    R"g(m"},"mode":292},{"path":"mem","resourceFieldRef":{"resource":"limits.memory","diviso)g"
    R"g(r":"0"}}],"defaultMode":420}},{"name":"cm","configMap":{"name":"cm1","items":[{"key")g"
    R"g(:"a","path":"b"}],"optional":false}},{"name":"proj","projected":{"sources":[{"secret)g"
    R"g(":{"name":"s2","items":[{"key":"x","path":"yy"}],"optional":true}},{"downwardAPI":{")g"
    R"g(items":[{"path":"name","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}]})g"
    R"g(},{"configMap":{"name":"cm2"}},{"serviceAccountToken":{"audience":"api","expirationS)g"
    R"g(econds":3600,"path":"token"}}],"defaultMode":288}},{"name":"proj-empty","projected":)g"
    R"g({"sources":null}},{"name":"nfs","nfs":{"path":"/exports","readOnly":true,"server":"1)g"
    R"g(0.0.0.1"}},{"name":"csi","csi":{"driver":"d.example.com","fsType":"ext4","volumeAttr)g"
    R"g(ibutes":{"a":"2","z":"1"}}},{"name":"eph","ephemeral":{"volumeClaimTemplate":{"spec")g"
    R"g(:{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}}],"i)g"
    R"g(nitContainers":[{"name":"init","image":"busybox","command":["sh","-c","true"],"resou)g"
    R"g(rces":{},"restartPolicy":"Always"}],"containers":[{"name":"main","image":"nginx:1.25)g"
    R"g(","command":["nginx"],"args":["-g","daemon off;"],"workingDir":"/srv","ports":[{"nam)g"
    R"g(e":"http","containerPort":80,"protocol":"TCP"},{"hostPort":5353,"containerPort":53,")g"
    R"g(protocol":"UDP","hostIP":"127.0.0.1"}],"envFrom":[{"prefix":"CM_","configMapRef":{"n)g"
    R"g(ame":"cm1","optional":true}},{"secretRef":{"name":"s1"}}],"env":[{"name":"A","value")g"
    R"g(:"1"},{"name":"EMPTY"},{"name":"POD","valueFrom":{"fieldRef":{"apiVersion":"v1","fie)g"
    R"g(ldPath":"metadata.name"}}},{"name":"LIM","valueFrom":{"resourceFieldRef":{"resource")g"
    R"g(:"limits.memory","divisor":"1Mi"}}},{"name":"CMK","valueFrom":{"configMapKeyRef":{"n)g"
    R"g(ame":"cm1","key":"k","optional":false}}},{"name":"SK","valueFrom":{"secretKeyRef":{")g"
    R"g(name":"s1","key":"k"}}}],"resources":{"limits":{"cpu":"2","hugepages-2Mi":"4Mi","mem)g"
    R"g(ory":"1Gi"},"requests":{"cpu":"250m","ephemeral-storage":"1G","memory":"512Mi"},"cla)g"
    R"g(ims":[{"name":"gpu"}]},"resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotReq)g"
    R"g(uired"}],"volumeMounts":[{"name":"hp","readOnly":true,"mountPath":"/x","subPath":"su)g"
    R"g(b","mountPropagation":"HostToContainer"},{"name":"ed","mountPath":"/y","subPathExpr")g"
    R"g(:"$(POD)"}],"volumeDevices":[{"name":"blk","devicePath":"/dev/xvda"}],"livenessProbe)g"
    R"g(":{"httpGet":{"path":"/healthz","port":"http","host":"127.0.0.1","scheme":"HTTPS","h)g"
    R"g(ttpHeaders":[{"name":"X-A","value":"b"}]},"initialDelaySeconds":5,"timeoutSeconds":2)g"
    R"g(,"periodSeconds":10,"successThreshold":1,"failureThreshold":3,"terminationGracePerio)g"
    R"g(dSeconds":7},"readinessProbe":{"tcpSocket":{"port":8080,"host":"localhost"}},"startu)g"
    R"g(pProbe":{"exec":{"command":["cat","/tmp/ready"]}},"lifecycle":{"postStart":{"exec":{)g"
    R"g("command":["sh","-c","echo hi"]}},"preStop":{"httpGet":{"path":"/stop","port":80}}},)g"
    R"g("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"Fallback)g"
    R"g(ToLogsOnError","imagePullPolicy":"IfNotPresent","securityContext":{"capabilities":{")g"
    R"g(add":["NET_ADMIN"],"drop":["ALL"]},"privileged":false,"seLinuxOptions":{"user":"u",")g"
    R"g(role":"r","type":"t","level":"s0"},"windowsOptions":{"gmsaCredentialSpecName":"g","r)g"
    R"g(unAsUserName":"admin"},"runAsUser":1000,"runAsGroup":2000,"runAsNonRoot":true,"readO)g"
    R"g(nlyRootFilesystem":true,"allowPrivilegeEscalation":false,"procMount":"Default","secc)g"
    R"g(ompProfile":{"type":"Localhost","localhostProfile":"p.json"}},"stdin":true,"stdinOnc)g"
    R"g(e":true,"tty":true},{"name":"side","image":"busybox","resources":{},"livenessProbe":)g"
    R"g({"grpc":{"port":9001,"service":null}},"readinessProbe":{"grpc":{"port":9000,"service)g"
    R"g(":"health"}}}],"ephemeralContainers":[{"name":"debug","image":"busybox","resources":)g"
    R"g({},"stdin":true,"targetContainerName":"main"}],"restartPolicy":"Always","termination)g"
    R"g(GracePeriodSeconds":45,"activeDeadlineSeconds":600,"dnsPolicy":"None","nodeSelector")g"
    R"g(:{"disk":"ssd","kubernetes.io/os":"linux"},"serviceAccountName":"legacy","serviceAcc)g"
    R"g(ount":"legacy","automountServiceAccountToken":false,"nodeName":"node-1","hostNetwork)g"
    R"g(":true,"hostPID":true,"hostIPC":true,"shareProcessNamespace":true,"securityContext":)g"
    R"g({"seLinuxOptions":{"level":"s0:c1"},"windowsOptions":{"hostProcess":false},"runAsUse)g"
    R"g(r":0,"runAsGroup":0,"runAsNonRoot":false,"supplementalGroups":[10,20],"fsGroup":2000)g"
    R"g(,"sysctls":[{"name":"net.core.somaxconn","value":"1024"}],"fsGroupChangePolicy":"OnR)g"
    R"g(ootMismatch","seccompProfile":{"type":"RuntimeDefault"}},"imagePullSecrets":[{"name")g"
    R"g(:"regcred"},{}],"hostname":"h","subdomain":"sd","affinity":{"nodeAffinity":{"require)g"
    R"g(dDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[)g"
    R"g({"key":"kubernetes.io/os","operator":"In","values":["linux"]}]}]}},"podAntiAffinity")g"
    R"g(:{"preferredDuringSchedulingIgnoredDuringExecution":[{"podAffinityTerm":{"labelSelec)g"
    R"g(tor":{"matchLabels":{"app":"rich"}},"topologyKey":"kubernetes.io/hostname"},"weight")g"
    R"g(:100}]}},"schedulerName":"default-scheduler","tolerations":[{"operator":"Exists","ef)g"
    R"g(fect":"NoExecute","tolerationSeconds":300},{"key":"k","operator":"Equal","value":"v")g"
    R"g(,"effect":"NoSchedule"}],"hostAliases":[{"ip":"10.0.0.2","hostnames":["a.example","b)g"
    R"g(.example"]}],"priorityClassName":"system-node-critical","priority":2000001000,"dnsCo)g"
    R"g(nfig":{"nameservers":["1.1.1.1"],"searches":["svc.cluster.local"],"options":[{"name")g"
    R"g(:"ndots","value":"2"},{"name":"edns0"}]},"readinessGates":[{"conditionType":"example)g"
    R"g(.com/ready"}],"runtimeClassName":"runc","enableServiceLinks":false,"preemptionPolicy)g"
    R"g(":"Never","overhead":{"cpu":"100m","memory":"32Mi"},"topologySpreadConstraints":[{"l)g"
    R"g(abelSelector":{"matchLabels":{"app":"rich"}},"maxSkew":1,"topologyKey":"zone","whenU)g"
    R"g(nsatisfiable":"DoNotSchedule"}],"setHostnameAsFQDN":true,"os":{"name":"linux"},"host)g"
    R"g(Users":false,"schedulingGates":[{"name":"gate"}],"resourceClaims":[{"name":"gpu","so)g"
    R"g(urce":{"resourceClaimName":"rc"}},{"name":"other","source":{"resourceClaimTemplateNa)g"
    R"g(me":"rct"}},{"name":"none","source":{}}]},"status":{"phase":"Running","conditions":[)g"
    R"g({"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2023-01-0)g"
    R"g(2T03:05:00Z"},{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTrans)g"
    R"g(itionTime":"2023-01-02T03:04:05Z","reason":"R","message":"M"}],"message":"msg","reas)g"
    R"g(on":"rsn","nominatedNodeName":"nn","hostIP":"192.168.1.1","hostIPs":[{"ip":"192.168.)g"
    R"g(1.1"}],"podIP":"10.0.0.5","podIPs":[{"ip":"10.0.0.5"},{"ip":"fd00::5"}],"startTime":)g"
    R"g("2023-01-02T03:04:06Z","initContainerStatuses":[{"name":"init","state":{"terminated")g"
    R"g(:{"exitCode":0,"reason":"Completed","startedAt":"2023-01-02T03:04:07Z","finishedAt":)g"
    R"g("2023-01-02T03:04:08Z","containerID":"containerd://i"}},"lastState":{},"ready":true,)g"
    R"g("restartCount":0,"image":"busybox","imageID":"sha256:i","containerID":"containerd://)g"
    R"g(i","started":false}],"containerStatuses":[{"name":"main","state":{"running":{"starte)g"
    R"g(dAt":"2023-01-02T03:04:09Z"}},"lastState":{"terminated":{"exitCode":137,"signal":9,")g"
    R"g(reason":"OOMKilled","message":"boom","startedAt":null,"finishedAt":null,"containerID)g"
    R"g(":"containerd://old"}},"ready":true,"restartCount":2,"image":"nginx:1.25","imageID":)g"
    R"g("sha256:n","containerID":"containerd://m","started":true,"allocatedResources":{"cpu")g"
    R"g(:"250m","memory":"512Mi"},"resources":{"limits":{"cpu":"2"},"requests":{"cpu":"250m")g"
    R"g(}}},{"name":"side","state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-o)g"
    R"g(ff 10s"}},"lastState":{},"ready":false,"restartCount":0,"image":"busybox","imageID":)g"
    R"g(""}],"qosClass":"Burstable","ephemeralContainerStatuses":[{"name":"debug","state":{})g"
    R"g(,"lastState":{},"ready":false,"restartCount":0,"image":"busybox","imageID":""}],"res)g"
    R"g(ize":"InProgress","resourceClaimStatuses":[{"name":"gpu","resourceClaimName":"rc-1"})g"
    R"g(]}})g";

constexpr char kRichGoldenContainerJson[] =
    R"g({"name":"main","image":"nginx:1.25","command":["nginx"],"args":["-g","daemon off;"],)g"
    R"g("workingDir":"/srv","ports":[{"name":"http","containerPort":80,"protocol":"TCP"},{"h)g"
    R"g(ostPort":5353,"containerPort":53,"protocol":"UDP","hostIP":"127.0.0.1"}],"envFrom":[)g"
    R"g({"prefix":"CM_","configMapRef":{"name":"cm1","optional":true}},{"secretRef":{"name":)g"
    R"g("s1"}}],"env":[{"name":"A","value":"1"},{"name":"EMPTY"},{"name":"POD","valueFrom":{)g"
    R"g("fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}},{"name":"LIM","valueFro)g"
    R"g(m":{"resourceFieldRef":{"resource":"limits.memory","divisor":"1Mi"}}},{"name":"CMK",)g"
    R"g("valueFrom":{"configMapKeyRef":{"name":"cm1","key":"k","optional":false}}},{"name":")g"
    R"g(SK","valueFrom":{"secretKeyRef":{"name":"s1","key":"k"}}}],"resources":{"limits":{"c)g"
    R"g(pu":"2","hugepages-2Mi":"4Mi","memory":"1Gi"},"requests":{"cpu":"250m","ephemeral-st)g"
    R"g(orage":"1G","memory":"512Mi"},"claims":[{"name":"gpu"}]},"resizePolicy":[{"resourceN)g"
    R"g(ame":"cpu","restartPolicy":"NotRequired"}],"volumeMounts":[{"name":"hp","readOnly":t)g"
    R"g(rue,"mountPath":"/x","subPath":"sub","mountPropagation":"HostToContainer"},{"name":")g"
    R"g(ed","mountPath":"/y","subPathExpr":"$(POD)"}],"volumeDevices":[{"name":"blk","device)g"
    R"g(Path":"/dev/xvda"}],"livenessProbe":{"httpGet":{"path":"/healthz","port":"http","hos)g"
    R"g(t":"127.0.0.1","scheme":"HTTPS","httpHeaders":[{"name":"X-A","value":"b"}]},"initial)g"
    R"g(DelaySeconds":5,"timeoutSeconds":2,"periodSeconds":10,"successThreshold":1,"failureT)g"
    R"g(hreshold":3,"terminationGracePeriodSeconds":7},"readinessProbe":{"tcpSocket":{"port")g"
    R"g(:8080,"host":"localhost"}},"startupProbe":{"exec":{"command":["cat","/tmp/ready"]}},)g"
    R"g("lifecycle":{"postStart":{"exec":{"command":["sh","-c","echo hi"]}},"preStop":{"http)g"
    R"g(Get":{"path":"/stop","port":80}}},"terminationMessagePath":"/dev/termination-log","t)g"
    R"g(erminationMessagePolicy":"FallbackToLogsOnError","imagePullPolicy":"IfNotPresent","s)g"
    R"g(ecurityContext":{"capabilities":{"add":["NET_ADMIN"],"drop":["ALL"]},"privileged":fa)g"
    R"g(lse,"seLinuxOptions":{"user":"u","role":"r","type":"t","level":"s0"},"windowsOptions)g"
    R"g(":{"gmsaCredentialSpecName":"g","runAsUserName":"admin"},"runAsUser":1000,"runAsGrou)g"
    R"g(p":2000,"runAsNonRoot":true,"readOnlyRootFilesystem":true,"allowPrivilegeEscalation")g"
    R"g(:false,"procMount":"Default","seccompProfile":{"type":"Localhost","localhostProfile")g"
    R"g(:"p.json"}},"stdin":true,"stdinOnce":true,"tty":true})g";

TEST(PodCodec, EncodingIsByteIdenticalToTheHandWrittenCodec) {
  std::vector<std::string> unknown;
  auto pod = DecodePod(kRichYaml, &unknown);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_THAT(unknown, ElementsAre("metadata.clusterName"));
  EXPECT_EQ(EncodePodJson(*pod), kRichGoldenJson);
  EXPECT_EQ(EncodeContainerJson(pod->spec.containers[0]), kRichGoldenContainerJson);
  EXPECT_EQ(EncodePodListJson({*pod}),
            std::string(R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{)") +
                (kRichGoldenJson + std::strlen(R"({"kind":"Pod","apiVersion":"v1",)")) + "]}");

  // The JSON reads back to the same pod and the same bytes.
  auto again = DecodePod(kRichGoldenJson);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *pod);
  EXPECT_EQ(EncodePodJson(*again), kRichGoldenJson);

  // The streaming encoder and the tree encoder agree.
  EXPECT_EQ(Encode(pod->spec), SerializeJson(ToJson(pod->spec)));
  EXPECT_EQ(Encode(pod->status), SerializeJson(ToJson(pod->status)));
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
