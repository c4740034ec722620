#include "api/static_pod.h"

#include <string>
#include <vector>

#include "api/pod_codec.h"
#include "api/pod_defaults.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

constexpr char kManifest[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: httpd
    image: docker.io/library/busybox:1.36
    ports: [{containerPort: 8080, name: http}]
)";

const absl::Time kNow = absl::FromUnixSeconds(1700000000) + absl::Nanoseconds(123400000);

Pod Defaulted(std::string_view manifest = kManifest) {
  auto pod = DecodePod(manifest);
  EXPECT_TRUE(pod.ok()) << pod.status();
  SetDefaultsPod(&*pod);
  return *pod;
}

Pod Applied(std::string_view node, std::string_view path = "/etc/kubernetes/manifests/web.yaml",
            std::string_view manifest = kManifest) {
  Pod pod = Defaulted(manifest);
  EXPECT_TRUE(ApplyStaticPodDefaults(&pod, node, kFileSource, path, kNow).ok());
  return pod;
}

TEST(StaticPod, AppliesUpstreamDefaults) {
  Pod pod = Applied("Node1");
  EXPECT_EQ(pod.metadata.name, "web-node1");  // lowercased node name suffix
  EXPECT_EQ(pod.metadata.namespace_, "default");
  EXPECT_EQ(pod.spec.node_name, "Node1");
  EXPECT_THAT(pod.metadata.uid, MatchesRegex("[0-9a-f]{32}"));
  EXPECT_EQ(pod.metadata.annotations.at("kubernetes.io/config.hash"), pod.metadata.uid);
  EXPECT_EQ(pod.metadata.annotations.at("kubernetes.io/config.source"), "file");
  EXPECT_EQ(pod.metadata.annotations.at("kubernetes.io/config.seen"),
            FormatRFC3339Nano(kNow, absl::LocalTimeZone()));
  ASSERT_EQ(pod.spec.tolerations.size(), 1u);
  EXPECT_EQ(pod.spec.tolerations[0], (Toleration{"", "Exists", "", "NoExecute", std::nullopt}));
  EXPECT_EQ(pod.status.phase, "Pending");
  EXPECT_TRUE(IsStaticPod(pod));
  EXPECT_TRUE(IsCriticalPod(pod));
  EXPECT_FALSE(IsMirrorPod(pod));
  EXPECT_EQ(PodFullName(pod), "web-node1_default");
  EXPECT_EQ(PodKey(pod), "default/web-node1");
}

TEST(StaticPod, UidIsStableAndContentBased) {
  const std::string uid = Applied("node1").metadata.uid;
  EXPECT_EQ(Applied("node1").metadata.uid, uid);  // same manifest, node and path
  Pod later = Defaulted();
  ASSERT_TRUE(ApplyStaticPodDefaults(&later, "node1", kFileSource,
                                     "/etc/kubernetes/manifests/web.yaml", kNow + absl::Hours(5))
                  .ok());
  EXPECT_EQ(later.metadata.uid, uid);  // the clock does not feed the hash
  EXPECT_NE(Applied("node2").metadata.uid, uid);
  EXPECT_NE(Applied("node1", "/other/web.yaml").metadata.uid, uid);
  std::string changed = kManifest;
  changed.replace(changed.find("1.36"), 4, "1.37");
  EXPECT_NE(Applied("node1", "/etc/kubernetes/manifests/web.yaml", changed).metadata.uid, uid);

  // HTTP sources hash the URL instead and get no toleration.
  Pod http = Defaulted();
  ASSERT_TRUE(ApplyStaticPodDefaults(&http, "node1", kHTTPSource, "http://cfg/pods", kNow).ok());
  EXPECT_NE(http.metadata.uid, uid);
  EXPECT_TRUE(http.spec.tolerations.empty());
  EXPECT_EQ(http.metadata.annotations.at("kubernetes.io/config.source"), "http");

  // A UID in the manifest is kept.
  Pod explicit_uid = Defaulted();
  explicit_uid.metadata.uid = "fixed";
  explicit_uid.metadata.namespace_ = "kube-system";
  ASSERT_TRUE(ApplyStaticPodDefaults(&explicit_uid, "n", kFileSource, "/p", kNow).ok());
  EXPECT_EQ(explicit_uid.metadata.uid, "fixed");
  EXPECT_EQ(explicit_uid.metadata.annotations.at("kubernetes.io/config.hash"), "fixed");
  EXPECT_EQ(explicit_uid.metadata.namespace_, "kube-system");

  Pod bad = Defaulted();
  EXPECT_FALSE(ApplyStaticPodDefaults(&bad, "n", "api", "/p", kNow).ok());
}

TEST(StaticPod, TolerationReplacesMatchingOne) {
  Pod pod = Defaulted();
  pod.spec.tolerations.push_back(Toleration{"", "Exists", "", "NoExecute", 300});
  pod.spec.tolerations.push_back(Toleration{"k", "Exists", "", "NoSchedule", std::nullopt});
  ASSERT_TRUE(ApplyStaticPodDefaults(&pod, "n", kFileSource, "/p", kNow).ok());
  EXPECT_THAT(pod.spec.tolerations,
              ElementsAre(Toleration{"", "Exists", "", "NoExecute", std::nullopt},
                          Toleration{"k", "Exists", "", "NoSchedule", std::nullopt}));
}

TEST(StaticPod, DecodeStaticPodFile) {
  auto pod = DecodeStaticPodFile(kManifest, "node1", "/etc/kubernetes/manifests/web.yaml", kNow);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->metadata.name, "web-node1");
  EXPECT_EQ(pod->spec.containers[0].image_pull_policy, "IfNotPresent");
  EXPECT_EQ(pod->metadata.uid, Applied("node1").metadata.uid);

  auto garbage = DecodeStaticPodFile("kind: [", "node1", "/m/x.yaml", kNow);
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(std::string(garbage.status().message()),
              StartsWith("/m/x.yaml: couldn't parse as pod(error converting YAML to JSON: yaml: "));
  EXPECT_THAT(std::string(garbage.status().message()), HasSubstr("please check config file"));

  auto invalid = DecodeStaticPodFile(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec:\n  containers:\n"
      "  - {name: c}\n",
      "node1", "/m/x.yaml", kNow);
  ASSERT_FALSE(invalid.ok());
  EXPECT_THAT(std::string(invalid.status().message()),
              StartsWith("invalid pod: [metadata.name: Invalid value: \"Bad_Name-node1\": a "
                         "lowercase RFC 1123 subdomain"));
  EXPECT_THAT(std::string(invalid.status().message()),
              HasSubstr(" spec.containers[0].image: Required value]"));

  auto api_refs = DecodeStaticPodFile(R"(apiVersion: v1
kind: Pod
metadata: {name: s}
spec:
  serviceAccountName: default
  volumes:
  - {name: cfg, configMap: {name: settings}}
  containers:
  - name: c
    image: x
    env: [{name: P, valueFrom: {secretKeyRef: {name: creds, key: pw}}}]
)",
                                      "node1", "/m/s.yaml", kNow);
  ASSERT_FALSE(api_refs.ok());
  EXPECT_EQ(api_refs.status().message(),
            "pod \"s-node1\" has forbidden references to API objects: ConfigMap \"settings\", "
            "ConfigMap volume \"cfg\", Secret \"creds\", ServiceAccount \"default\"");
}

TEST(StaticPod, DecodeStaticPodsHTTP) {
  auto single = DecodeStaticPodsHTTP(kManifest, "n", "http://x/pods", kNow);
  ASSERT_TRUE(single.ok()) << single.status();
  ASSERT_EQ(single->size(), 1u);
  auto list = DecodeStaticPodsHTTP(
      R"({"apiVersion":"v1","kind":"PodList","items":[
        {"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"x"}]}},
        {"metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"x"}]}}]})",
      "n", "http://x/pods", kNow);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[1].metadata.name, "b-n");
  EXPECT_NE((*list)[0].metadata.uid, (*list)[1].metadata.uid);
  auto neither = DecodeStaticPodsHTTP("apiVersion: v1\nkind: Service\n", "n", "http://x", kNow);
  ASSERT_FALSE(neither.ok());
  EXPECT_THAT(std::string(neither.status().message()),
              StartsWith("http://x: received 'apiVersion: v1\nkind: Service\n', but couldn't "
                         "parse as single ("));
}

TEST(StaticPod, SourceAndCriticality) {
  Pod pod;
  EXPECT_FALSE(GetPodSource(pod).ok());
  EXPECT_FALSE(IsStaticPod(pod));
  EXPECT_FALSE(IsCriticalPod(pod));
  pod.metadata.annotations["kubernetes.io/config.source"] = "api";
  EXPECT_FALSE(IsStaticPod(pod));
  pod.spec.priority = 2000000000;
  EXPECT_TRUE(IsCriticalPod(pod));
  pod.spec.priority = 1999999999;
  EXPECT_FALSE(IsCriticalPod(pod));
  pod.metadata.annotations["kubernetes.io/config.mirror"] = "abc";
  EXPECT_TRUE(IsMirrorPod(pod));
  EXPECT_TRUE(IsCriticalPod(pod));
  Pod no_ns;
  no_ns.metadata.name = "x";
  EXPECT_EQ(PodKey(no_ns), "x");
}

Container WithResources(std::string_view name, std::map<std::string, std::string> requests,
                        std::map<std::string, std::string> limits) {
  Container c;
  c.name = std::string(name);
  for (const auto& [k, v] : requests) c.resources.requests[k] = *Quantity::Parse(v);
  for (const auto& [k, v] : limits) c.resources.limits[k] = *Quantity::Parse(v);
  return c;
}

TEST(StaticPod, QOSClasses) {
  Pod pod;
  pod.spec.containers.push_back(WithResources("a", {}, {}));
  EXPECT_EQ(ComputePodQOS(pod), QOSClass::kBestEffort);
  pod.spec.containers[0] = WithResources("a", {{"ephemeral-storage", "1Gi"}}, {});
  EXPECT_EQ(ComputePodQOS(pod), QOSClass::kBestEffort);  // only cpu/memory count
  pod.spec.containers[0] =
      WithResources("a", {{"cpu", "1"}, {"memory", "1Gi"}}, {{"cpu", "1"}, {"memory", "1Gi"}});
  EXPECT_EQ(ComputePodQOS(pod), QOSClass::kGuaranteed);
  pod.spec.containers[0] = WithResources("a", {{"cpu", "500m"}}, {{"cpu", "1"}, {"memory", "1Gi"}});
  EXPECT_EQ(ComputePodQOS(pod), QOSClass::kBurstable);
  pod.spec.containers[0] = WithResources("a", {}, {{"memory", "1Gi"}});
  EXPECT_EQ(ComputePodQOS(pod), QOSClass::kBurstable);
  // Init containers count too: a guaranteed app container with a best-effort init container.
  pod.spec.containers[0] =
      WithResources("a", {{"cpu", "1"}, {"memory", "1Gi"}}, {{"cpu", "1"}, {"memory", "1Gi"}});
  pod.spec.init_containers.push_back(WithResources("i", {}, {}));
  EXPECT_EQ(ComputePodQOS(pod), QOSClass::kBurstable);
  pod.spec.init_containers[0] =
      WithResources("i", {{"cpu", "2"}, {"memory", "1Gi"}}, {{"cpu", "2"}, {"memory", "1Gi"}});
  EXPECT_EQ(ComputePodQOS(pod), QOSClass::kGuaranteed);
  // Defaulting requests from limits makes a limits-only pod Guaranteed, as upstream.
  Pod limits_only;
  limits_only.spec.containers.push_back(
      WithResources("a", {}, {{"cpu", "100m"}, {"memory", "64Mi"}}));
  SetDefaultsPod(&limits_only);
  EXPECT_EQ(ComputePodQOS(limits_only), QOSClass::kGuaranteed);
  // status.qosClass wins in GetPodQOS.
  limits_only.status.qos_class = "BestEffort";
  EXPECT_EQ(GetPodQOS(limits_only), QOSClass::kBestEffort);
  EXPECT_EQ(QOSClassName(QOSClass::kBurstable), "Burstable");
}

TEST(StaticPod, HashContainerIsStableAndSensitive) {
  Pod pod = Defaulted();
  const Container& c = pod.spec.containers[0];
  const uint64_t h = HashContainer(c);
  EXPECT_EQ(HashContainer(c), h);
  EXPECT_LE(h, 0xFFFFFFFFull);
  Container changed = c;
  changed.args.push_back("x");
  EXPECT_NE(HashContainer(changed), h);
  changed = c;
  changed.image = "busybox:1.37";
  EXPECT_NE(HashContainer(changed), h);
}

TEST(StaticPod, FormatRFC3339Nano) {
  const absl::Time t = absl::FromUnixSeconds(1700000000);
  EXPECT_EQ(FormatRFC3339Nano(t, absl::UTCTimeZone()), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatRFC3339Nano(t + absl::Nanoseconds(123400000), absl::UTCTimeZone()),
            "2023-11-14T22:13:20.1234Z");
  EXPECT_EQ(FormatRFC3339Nano(t + absl::Nanoseconds(1), absl::FixedTimeZone(-(5 * 3600 + 1800))),
            "2023-11-14T16:43:20.000000001-05:30");
}

}  // namespace
}  // namespace kubelet::api
