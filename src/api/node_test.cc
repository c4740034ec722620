// Round trips of the API-server-mode types against bodies shaped like the v1.28 API server's.
#include "api/node.h"

#include <string>

#include "api/codec.h"
#include "api/coordination.h"
#include "api/core_misc.h"
#include "api/event.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::api {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// `kubectl get node worker-1 -o json`, compact, with two members a v1.28 kubelet does not model
// (status.runtimeHandlers and status.nodeInfo.swap come from later releases).
constexpr char kNodeJson[] =
    R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"worker-1",)"
    R"("uid":"5b0d1f8e-6a55-4b69-9d1e-0c2f3a7d9e11","resourceVersion":"184467",)"
    R"("creationTimestamp":"2024-03-01T08:00:00Z","labels":{"beta.kubernetes.io/arch":"amd64",)"
    R"("beta.kubernetes.io/os":"linux","kubernetes.io/arch":"amd64",)"
    R"("kubernetes.io/hostname":"worker-1","kubernetes.io/os":"linux"},)"
    R"("annotations":{"node.alpha.kubernetes.io/ttl":"0",)"
    R"("volumes.kubernetes.io/controller-managed-attach-detach":"true"},)"
    R"("managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"v1",)"
    R"("time":"2024-03-05T12:34:56Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":)"
    R"({"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastHeartbeatTime":{}}}}},)"
    R"("subresource":"status"}]},)"
    R"("spec":{"podCIDR":"10.244.1.0/24","podCIDRs":["10.244.1.0/24"],)"
    R"("providerID":"kind://docker/kind/worker-1","taints":[{"key":"example.com/dedicated",)"
    R"("value":"gpu","effect":"NoSchedule","timeAdded":"2024-03-02T09:00:00Z"}]},)"
    R"("status":{"capacity":{"cpu":"8","ephemeral-storage":"263174212Ki","hugepages-1Gi":"0",)"
    R"("hugepages-2Mi":"0","memory":"32781328Ki","pods":"110"},)"
    R"("allocatable":{"cpu":"7800m","ephemeral-storage":"242541353378","hugepages-1Gi":"0",)"
    R"("hugepages-2Mi":"0","memory":"32678928Ki","pods":"110"},)"
    R"("conditions":[{"type":"MemoryPressure","status":"False",)"
    R"("lastHeartbeatTime":"2024-03-05T12:34:56Z","lastTransitionTime":"2024-03-01T08:00:00Z",)"
    R"("reason":"KubeletHasSufficientMemory","message":"kubelet has sufficient memory available"},)"
    R"({"type":"Ready","status":"True","lastHeartbeatTime":"2024-03-05T12:34:56Z",)"
    R"("lastTransitionTime":"2024-03-01T08:00:21Z","reason":"KubeletReady",)"
    R"("message":"kubelet is posting ready status"}],)"
    R"("addresses":[{"type":"InternalIP","address":"172.18.0.3"},)"
    R"({"type":"Hostname","address":"worker-1"}],)"
    R"("daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},)"
    R"("nodeInfo":{"machineID":"2f1a0c9d8e7b4a6f9c3d2e1f0a9b8c7d",)"
    R"("systemUUID":"4c4c4544-0051-3710-8052-b4c04f384833",)"
    R"("bootID":"0e6c7a8b-1d2e-4f30-9a4b-5c6d7e8f9a0b","kernelVersion":"6.1.0-18-amd64",)"
    R"x("osImage":"Debian GNU/Linux 12 (bookworm)","containerRuntimeVersion":"containerd://1.7.13",)x"
    R"("kubeletVersion":"v1.28.7","kubeProxyVersion":"v1.28.7","operatingSystem":"linux",)"
    R"("architecture":"amd64","swap":{"capacity":0}},)"
    R"("images":[{"names":["registry.k8s.io/etcd@sha256:e013d0d5e4e25d00c61a7ff839927a1f36d7e6)"
    R"(5c0a5d5a8f5d6e1b2c3d4e5f6a7b","registry.k8s.io/etcd:3.5.9-0"],"sizeBytes":102894559},)"
    R"({"names":["registry.k8s.io/pause:3.9"],"sizeBytes":321520}],)"
    R"("volumesInUse":["kubernetes.io/csi/ebs.csi.aws.com^vol-0abc"],)"
    R"("volumesAttached":[{"name":"kubernetes.io/csi/ebs.csi.aws.com^vol-0abc","devicePath":""}],)"
    R"("runtimeHandlers":[{"name":"runc","features":{"recursiveReadOnlyMounts":true}}]}})";

TEST(NodeCodecTest, RoundTripsAnApiServerBody) {
  absl::StatusOr<Node> node = Decode<Node>(kNodeJson);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->metadata.name, "worker-1");
  EXPECT_EQ(node->metadata.labels.at("kubernetes.io/hostname"), "worker-1");
  EXPECT_EQ(node->spec.pod_cidrs, std::vector<std::string>{"10.244.1.0/24"});
  ASSERT_EQ(node->spec.taints.size(), 1u);
  EXPECT_EQ(node->spec.taints[0].effect, kTaintNoSchedule);
  ASSERT_TRUE(node->spec.taints[0].time_added.has_value());
  EXPECT_EQ(node->status.capacity.at("memory").Value(), int64_t{32781328} * 1024);
  EXPECT_EQ(node->status.allocatable.at("cpu").MilliValue(), 7800);
  ASSERT_EQ(node->status.conditions.size(), 2u);
  EXPECT_EQ(node->status.conditions[1].type, kNodeReady);
  EXPECT_EQ(node->status.conditions[1].last_transition_time.RFC3339(), "2024-03-01T08:00:21Z");
  EXPECT_EQ(node->status.daemon_endpoints.kubelet_endpoint.port, 10250);
  EXPECT_EQ(node->status.node_info.kubelet_version, "v1.28.7");
  EXPECT_EQ(node->status.node_info.unknown.json, R"({"swap":{"capacity":0}})");
  ASSERT_EQ(node->status.images.size(), 2u);
  EXPECT_EQ(node->status.images[1].size_bytes, 321520);
  EXPECT_EQ(node->status.volumes_attached[0].device_path, "");
  EXPECT_THAT(node->status.unknown.json, StartsWith(R"({"runtimeHandlers":)"));
  EXPECT_THAT(node->metadata.managed_fields.json, HasSubstr(R"("subresource":"status")"));
  EXPECT_EQ(Encode(*node), kNodeJson);
}

TEST(NodeCodecTest, ReadModifyWriteKeepsWhatTheKubeletDoesNotModel) {
  absl::StatusOr<Node> node = Decode<Node>(kNodeJson);
  ASSERT_TRUE(node.ok()) << node.status();
  node->status.conditions[1].last_heartbeat_time = Time::FromUnix(1709642136);  // 12:35:36
  node->status.images.pop_back();
  const std::string out = Encode(*node);
  EXPECT_THAT(out, HasSubstr(R"("lastHeartbeatTime":"2024-03-05T12:35:36Z")"));
  EXPECT_EQ(out.find("pause:3.9"), std::string::npos);
  EXPECT_THAT(out, HasSubstr(R"("architecture":"amd64","swap":{"capacity":0}})"));
  EXPECT_THAT(out, HasSubstr(R"(,"runtimeHandlers":[{"name":"runc",)"));
  EXPECT_THAT(out, HasSubstr(R"("managedFields":[{"manager":"kubelet")"));
  absl::StatusOr<Node> again = Decode<Node>(out);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *node);
}

TEST(NodeCodecTest, RegistrationBodyOmitsEmptyMembers) {
  Node node;
  node.metadata.name = "worker-1";
  node.metadata.labels = {{"kubernetes.io/os", "linux"}, {"kubernetes.io/hostname", "worker-1"}};
  node.status.capacity["cpu"] = Quantity::FromValue(4);
  node.status.addresses = {{kNodeInternalIP, "10.0.0.5"}, {kNodeHostName, "worker-1"}};
  node.status.daemon_endpoints.kubelet_endpoint.port = 10250;
  node.status.node_info.kubelet_version = "v1.28.7";
  EXPECT_EQ(Encode(node),
            R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"worker-1",)"
            R"("creationTimestamp":null,"labels":{"kubernetes.io/hostname":"worker-1",)"
            R"("kubernetes.io/os":"linux"}},"spec":{},"status":{"capacity":{"cpu":"4"},)"
            R"("addresses":[{"type":"InternalIP","address":"10.0.0.5"},)"
            R"({"type":"Hostname","address":"worker-1"}],)"
            R"("daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"",)"
            R"("systemUUID":"","bootID":"","kernelVersion":"","osImage":"",)"
            R"("containerRuntimeVersion":"","kubeletVersion":"v1.28.7","kubeProxyVersion":"",)"
            R"("operatingSystem":"","architecture":""}}})");
  // A condition without times writes them as null, like metav1.Time.
  NodeCondition c{kNodeReady, kConditionFalse, {}, {}, "", ""};
  EXPECT_EQ(Encode(c), R"({"type":"Ready","status":"False","lastHeartbeatTime":null,)"
                       R"("lastTransitionTime":null})");
}

TEST(NodeCodecTest, ErrorsNameTheFieldPath) {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {R"({"status":{"conditions":[{},{"lastHeartbeatTime":"soon"}]}})",
       R"(status.conditions[1].lastHeartbeatTime: parsing time "soon")"},
      {R"({"status":{"capacity":{"cpu":"eight"}}})", "status.capacity[cpu]: "},
      {R"({"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":"10250"}}}})",
       R"(status.daemonEndpoints.kubeletEndpoint.Port: expected integer, got "10250")"},
      {R"({"spec":{"taints":"none"}})", R"(spec.taints: expected array, got "none")"},
      {R"({"metadata":{"labels":["a"]}})", "metadata.labels: expected object, got array"},
      {R"({"status":{"images":[{"names":["a"],"sizeBytes":-1.5}]}})",
       "status.images[0].sizeBytes: expected integer, got -1.5"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Node> n = Decode<Node>(c.json);
    ASSERT_FALSE(n.ok()) << c.json;
    EXPECT_THAT(std::string(n.status().message()), StartsWith(c.error)) << c.json;
  }
}

// ---------------------------------------------------------------------------------------------
// Lease.

constexpr char kLeaseJson[] =
    R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"worker-1",)"
    R"("namespace":"kube-node-lease","uid":"9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",)"
    R"("resourceVersion":"184470","creationTimestamp":"2024-03-01T08:00:01Z",)"
    R"("ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"worker-1",)"
    R"("uid":"5b0d1f8e-6a55-4b69-9d1e-0c2f3a7d9e11"}],"managedFields":[{"manager":"kubelet",)"
    R"("operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"2024-03-05T12:34:56Z",)"
    R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:renewTime":{}}}}]},)"
    R"("spec":{"holderIdentity":"worker-1","leaseDurationSeconds":40,)"
    R"("renewTime":"2024-03-05T12:34:56.789012Z"}})";

TEST(LeaseCodecTest, RoundTripsAnApiServerBody) {
  absl::StatusOr<Lease> lease = Decode<Lease>(kLeaseJson);
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_EQ(lease->metadata.namespace_, kNodeLeaseNamespace);
  EXPECT_EQ(lease->spec.holder_identity, std::optional<std::string>("worker-1"));
  EXPECT_EQ(lease->spec.lease_duration_seconds, std::optional<int32_t>(40));
  ASSERT_TRUE(lease->spec.renew_time.has_value());
  EXPECT_EQ(lease->spec.renew_time->nanos, 789012000);
  EXPECT_FALSE(lease->spec.acquire_time.has_value());
  EXPECT_EQ(Encode(*lease), kLeaseJson);
}

TEST(LeaseCodecTest, RenewalAndEmptySpec) {
  Lease lease;
  lease.metadata.name = "worker-1";
  lease.metadata.namespace_ = kNodeLeaseNamespace;
  EXPECT_EQ(Encode(lease),
            R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{)"
            R"("name":"worker-1","namespace":"kube-node-lease","creationTimestamp":null},)"
            R"("spec":{}})");
  lease.spec.holder_identity = "worker-1";
  lease.spec.lease_duration_seconds = 40;
  lease.spec.renew_time = MicroTime::FromUnix(1709642096, 5000);  // 12:34:56.000005
  lease.spec.lease_transitions = 0;
  EXPECT_THAT(Encode(lease),
              HasSubstr(R"("spec":{"holderIdentity":"worker-1","leaseDurationSeconds":40,)"
                        R"("renewTime":"2024-03-05T12:34:56.000005Z","leaseTransitions":0}})"));
}

TEST(LeaseCodecTest, FieldPathError) {
  absl::StatusOr<Lease> lease = Decode<Lease>(R"({"spec":{"leaseDurationSeconds":"abc"}})");
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.status().message(), R"(spec.leaseDurationSeconds: expected integer, got "abc")");
}

// ---------------------------------------------------------------------------------------------
// Event.

constexpr char kEventJson[] =
    R"({"kind":"Event","apiVersion":"v1","metadata":{"name":"web.17b9c3f0a1b2c3d4",)"
    R"("namespace":"default","uid":"0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",)"
    R"("resourceVersion":"8812","creationTimestamp":"2024-03-05T12:00:00Z"},)"
    R"("involvedObject":{"kind":"Pod","namespace":"default","name":"web",)"
    R"("uid":"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d","apiVersion":"v1","resourceVersion":"8790",)"
    R"("fieldPath":"spec.containers{web}"},"reason":"Pulled",)"
    R"("message":"Container image \"nginx:1.25\" already present on machine",)"
    R"("source":{"component":"kubelet","host":"worker-1"},)"
    R"("firstTimestamp":"2024-03-05T12:00:00Z","lastTimestamp":"2024-03-05T12:00:00Z",)"
    R"("count":1,"type":"Normal","eventTime":null,"reportingComponent":"kubelet",)"
    R"("reportingInstance":"worker-1"})";

TEST(EventCodecTest, RoundTripsAnApiServerBody) {
  absl::StatusOr<Event> ev = Decode<Event>(kEventJson);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->involved_object.field_path, "spec.containers{web}");
  EXPECT_EQ(ev->source.host, "worker-1");
  EXPECT_EQ(ev->count, 1);
  EXPECT_TRUE(ev->event_time.IsZero());
  EXPECT_EQ(ev->type, kEventTypeNormal);
  EXPECT_EQ(Encode(*ev), kEventJson);
}

TEST(EventCodecTest, NewEventBodyAndSeries) {
  Event ev;
  ev.metadata.name = "worker-1.17b9";
  ev.metadata.namespace_ = "default";
  ev.involved_object = ObjectReference{"Node", "", "worker-1", "worker-1", "", "", ""};
  ev.reason = "NodeReady";
  ev.type = kEventTypeNormal;
  EXPECT_EQ(Encode(ev),
            R"({"kind":"Event","apiVersion":"v1","metadata":{"name":"worker-1.17b9",)"
            R"("namespace":"default","creationTimestamp":null},"involvedObject":{"kind":"Node",)"
            R"("name":"worker-1","uid":"worker-1"},"reason":"NodeReady","source":{},)"
            R"("firstTimestamp":null,"lastTimestamp":null,"type":"Normal","eventTime":null,)"
            R"("reportingComponent":"","reportingInstance":""})");
  ev.event_time = MicroTime::FromUnix(1709640000, 120000000);
  ev.series = EventSeries{2, MicroTime::FromUnix(1709640060)};
  EXPECT_THAT(Encode(ev),
              HasSubstr(R"("eventTime":"2024-03-05T12:00:00.120000Z","series":)"
                        R"({"count":2,"lastObservedTime":"2024-03-05T12:01:00.000000Z"})"));
}

// ---------------------------------------------------------------------------------------------
// Service, ConfigMap, Secret.

constexpr char kServiceJson[] =
    R"({"kind":"Service","apiVersion":"v1","metadata":{"name":"kubernetes","namespace":"default",)"
    R"("uid":"3f2e1d0c-9b8a-4766-8554-433221100fed","resourceVersion":"192",)"
    R"("creationTimestamp":"2024-03-01T07:59:40Z","labels":{"component":"apiserver",)"
    R"("provider":"kubernetes"}},"spec":{"ports":[{"name":"https","protocol":"TCP","port":443,)"
    R"("targetPort":6443}],"clusterIP":"10.96.0.1","clusterIPs":["10.96.0.1"],"type":"ClusterIP",)"
    R"("sessionAffinity":"None","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack",)"
    R"("internalTrafficPolicy":"Cluster"},"status":{"loadBalancer":{}}})";

TEST(ServiceCodecTest, RoundTripsAnApiServerBody) {
  absl::StatusOr<Service> svc = Decode<Service>(kServiceJson);
  ASSERT_TRUE(svc.ok()) << svc.status();
  EXPECT_EQ(svc->spec.cluster_ip, "10.96.0.1");
  ASSERT_EQ(svc->spec.ports.size(), 1u);
  EXPECT_EQ(svc->spec.ports[0].target_port, IntOrString::FromInt(6443));
  EXPECT_EQ(svc->spec.ip_family_policy, std::optional<std::string>("SingleStack"));
  EXPECT_EQ(Encode(*svc), kServiceJson);
}

TEST(ServiceCodecTest, NamedTargetPortAndNodePort) {
  constexpr char kSpec[] =
      R"({"ports":[{"name":"web","protocol":"TCP","appProtocol":"http","port":80,)"
      R"("targetPort":"http","nodePort":30080}],"selector":{"app":"web"},)"
      R"("clusterIP":"10.96.12.34","clusterIPs":["10.96.12.34"],"type":"NodePort",)"
      R"("sessionAffinity":"None","externalTrafficPolicy":"Cluster","ipFamilies":["IPv4"],)"
      R"("ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster"})";
  absl::StatusOr<ServiceSpec> spec = Decode<ServiceSpec>(kSpec);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->ports[0].target_port.is_string());
  EXPECT_EQ(spec->ports[0].node_port, 30080);
  EXPECT_EQ(spec->selector.at("app"), "web");
  EXPECT_EQ(Encode(*spec), kSpec);
  // targetPort is a Go struct: written even when unset.
  EXPECT_EQ(Encode(ServicePort{"", "", std::nullopt, 53, {}, 0}), R"({"port":53,"targetPort":0})");
}

TEST(ConfigMapCodecTest, DataAndBinaryData) {
  constexpr char kJson[] =
      R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"app","namespace":"default",)"
      R"("resourceVersion":"77","creationTimestamp":"2024-03-05T10:00:00Z"},"immutable":true,)"
      R"("data":{"app.conf":"a=1\nb=\u003c2\u003e\n"},"binaryData":{"blob":"AAEC/w=="}})";
  absl::StatusOr<ConfigMap> cm = Decode<ConfigMap>(kJson);
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ(cm->data.at("app.conf"), "a=1\nb=<2>\n");
  EXPECT_EQ(cm->binary_data.at("blob"), std::string("\x00\x01\x02\xff", 4));
  EXPECT_EQ(cm->immutable, std::optional<bool>(true));
  EXPECT_EQ(Encode(*cm), kJson);

  absl::StatusOr<ConfigMap> bad = Decode<ConfigMap>(R"({"binaryData":{"blob":"!!"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "binaryData[blob]: illegal base64 data");
}

TEST(SecretCodecTest, DataIsBase64) {
  constexpr char kJson[] =
      R"({"kind":"Secret","apiVersion":"v1","metadata":{"name":"db","namespace":"default",)"
      R"("uid":"aa","resourceVersion":"5","creationTimestamp":"2024-03-05T10:00:00Z"},)"
      R"("data":{"password":"czNjcjN0","username":"YWRtaW4="},"type":"Opaque"})";
  absl::StatusOr<Secret> s = Decode<Secret>(kJson);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->data.at("username"), "admin");
  EXPECT_EQ(s->data.at("password"), "s3cr3t");
  EXPECT_EQ(s->type, "Opaque");
  EXPECT_FALSE(s->immutable.has_value());
  EXPECT_EQ(Encode(*s), kJson);

  Secret w;
  w.metadata.name = "db";
  w.string_data["token"] = "t<o>k";
  w.data["ca.crt"] = "";
  EXPECT_EQ(Encode(w), R"({"kind":"Secret","apiVersion":"v1","metadata":{"name":"db",)"
                       R"("creationTimestamp":null},"data":{"ca.crt":""},)"
                       R"("stringData":{"token":"t\u003co\u003ek"}})");
}

}  // namespace
}  // namespace kubelet::api
